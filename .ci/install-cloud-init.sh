#!/usr/bin/env bash
# Debian's cloud-init (its Python package, run by /usr/bin/python3), the real
# consumer of the config drive: the config-drive tests parse what Ironic got
# with cloud-init's own OpenStack parser.
exec bash "$(dirname "$0")/apt-install.sh" /usr/bin/cloud-init cloud-init

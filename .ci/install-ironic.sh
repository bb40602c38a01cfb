#!/usr/bin/env bash
# Debian's OpenStack Ironic (API and conductor in one process, /usr/bin/ironic)
# for the real-Ironic tests (internal/ironictest, test/contract, test/realironic).
exec bash "$(dirname "$0")/apt-install.sh" /usr/bin/ironic python3-ironic ironic-common python3-ironicclient

#!/usr/bin/env bash
# Debian's OpenStack CLI (/usr/bin/openstack, run by /usr/bin/python3) for test/osc.
exec bash "$(dirname "$0")/apt-install.sh" /usr/bin/openstack python3-openstackclient

#!/usr/bin/env bash
# Debian's genisoimage: ingot builds a config drive holding personality
# files as an ISO 9660 image (as Nova's Ironic driver does); isoinfo reads
# it back in the tests.
exec bash "$(dirname "$0")/apt-install.sh" /usr/bin/genisoimage genisoimage

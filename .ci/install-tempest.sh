#!/usr/bin/env bash
# Debian's Tempest (tempest, python3-tempest), for the Tempest compute API
# suite (test/tempest, INGOT_TEMPEST=1). Quick when already installed.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" /usr/bin/tempest tempest python3-tempest

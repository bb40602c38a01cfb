#!/usr/bin/env bash
# Debian's glance-api (file store), for the Glance tests (internal/glancetest).
set -euo pipefail
here="$(dirname "$0")"
exec bash "$here/apt-install.sh" /usr/bin/glance-api glance-api python3-psycopg2

#!/usr/bin/env bash
# Debian's Keystone (keystone-manage, keystone-wsgi-public) served by uwsgi's
# Python 3 plugin, for the identity tests (internal/keystonetest).
set -euo pipefail
here="$(dirname "$0")"
bash "$here/apt-install.sh" /usr/bin/keystone-wsgi-public keystone python3-keystone
exec bash "$here/apt-install.sh" /usr/bin/uwsgi_python3 uwsgi uwsgi-plugin-python3

#!/usr/bin/env bash
# Debian's neutron-server (ML2 plugin; no agents) and the AMQP client it and
# the test harness use, for the Neutron tests (internal/neutrontest).
set -euo pipefail
here="$(dirname "$0")"
exec bash "$here/apt-install.sh" /usr/bin/neutron-server neutron-server python3-pika python3-psycopg2

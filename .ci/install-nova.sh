#!/usr/bin/env bash
# Debian's Nova (api, conductor, scheduler, compute with the Ironic driver)
# and Placement, for adopting a Nova cloud's instances (internal/novatest).
exec bash "$(dirname "$0")/apt-install.sh" /usr/bin/nova-compute \
  nova-api nova-conductor nova-scheduler nova-compute nova-compute-ironic placement-api \
  python3-psycopg2 python3-pymysql

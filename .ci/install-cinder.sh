#!/usr/bin/env bash
# Debian's Cinder (cinder-api, cinder-scheduler, cinder-volume) with both
# database drivers, for the block-storage tests (internal/cindertest). The
# volumes are served by a fake driver kept in the repository (no LVM here).
exec bash "$(dirname "$0")/apt-install.sh" /usr/bin/cinder-volume \
  cinder-api cinder-scheduler cinder-volume python3-psycopg2 python3-pymysql

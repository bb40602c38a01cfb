#!/usr/bin/env bash
# Installs Debian's OpenStack CLI (python3-openstackclient: /usr/bin/openstack,
# run by /usr/bin/python3) for test/osc, which drives the real CLI against the
# ingot binary. Idempotent: does nothing when /usr/bin/openstack is already
# there. Quiet unless something fails, in which case it prints the captured apt
# output and exits non-zero.
set -euo pipefail

if [ -x /usr/bin/openstack ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() {
  if ! "$@" >>"$log" 2>&1; then
    echo "install-osc: '$*' failed:" >&2
    tail -n 50 "$log" >&2
    exit 1
  fi
}

export DEBIAN_FRONTEND=noninteractive
# One update, and only when the package is unknown to apt (fresh machines ship no lists).
if ! apt-cache show python3-openstackclient >/dev/null 2>&1; then
  run $sudo apt-get update
fi
run $sudo apt-get install -y --no-install-recommends python3-openstackclient

if [ ! -x /usr/bin/openstack ]; then
  echo "install-osc: apt-get succeeded but /usr/bin/openstack is missing" >&2
  exit 1
fi

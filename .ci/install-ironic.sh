#!/usr/bin/env bash
# Installs Debian's OpenStack Ironic (API and conductor in one process, /usr/bin/ironic)
# for the real-Ironic tests (internal/ironictest, test/contract). Idempotent: does
# nothing when /usr/bin/ironic is already there. Quiet unless something fails, in
# which case it prints the captured apt output and exits non-zero.
set -euo pipefail

if [ -x /usr/bin/ironic ]; then
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
    echo "install-ironic: '$*' failed:" >&2
    tail -n 50 "$log" >&2
    exit 1
  fi
}

export DEBIAN_FRONTEND=noninteractive
# One update, and only when the package is unknown to apt (fresh machines ship no lists).
if ! apt-cache show python3-ironic >/dev/null 2>&1; then
  run $sudo apt-get update
fi
run $sudo apt-get install -y --no-install-recommends python3-ironic ironic-common python3-ironicclient

if [ ! -x /usr/bin/ironic ]; then
  echo "install-ironic: apt-get succeeded but /usr/bin/ironic is missing" >&2
  exit 1
fi

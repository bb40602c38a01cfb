#!/usr/bin/env bash
# Usage: apt-install.sh BINARY PACKAGE...
# Installs Debian packages unless BINARY is already there (idempotent). Quiet
# unless something fails; then it prints the captured apt output and exits
# non-zero. One `apt-get update`, and only when apt does not know the first
# package (fresh machines ship no package lists).
set -euo pipefail

binary=$1
shift
if [ -x "$binary" ]; then
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
    echo "apt-install: '$*' failed:" >&2
    tail -n 50 "$log" >&2
    exit 1
  fi
}

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show "$1" >/dev/null 2>&1; then
  run $sudo apt-get update
fi
run $sudo apt-get install -y --no-install-recommends "$@"

if [ ! -x "$binary" ]; then
  echo "apt-install: apt-get succeeded but $binary is missing" >&2
  exit 1
fi

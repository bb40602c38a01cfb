#!/usr/bin/env bash
# What openstacksdk's own functional compute tests (Debian's python3-openstacksdk
# ships them) need beside the CLI: oslotest and its test libraries, for
# test/tempest's TestOpenStackSDK.
set -euo pipefail
if /usr/bin/python3 -c 'import oslotest, testtools, fixtures, openstack' 2>/dev/null; then
	exit 0
fi
bash "$(dirname "$0")/install-osc.sh"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends python3-oslotest python3-testtools python3-fixtures >"$log" 2>&1; then
	echo "install-sdk-tests: apt-get failed:" >&2
	tail -n 50 "$log" >&2
	exit 1
fi

#!/usr/bin/env bash
# Debian's Prometheus, for promtool: CI unit-tests the shipped alert rules
# (deploy/prometheus) with `promtool test rules`.
exec bash "$(dirname "$0")/apt-install.sh" /usr/bin/promtool prometheus

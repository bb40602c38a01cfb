#!/usr/bin/env bash
# Debian's Chromium and ChromeDriver, for the console's browser tests
# (internal/ui/e2e: headless Chromium driven from Go with chromedp).
set -euo pipefail
here="$(dirname "$0")"
bash "$here/apt-install.sh" /usr/bin/chromium chromium
exec bash "$here/apt-install.sh" /usr/bin/chromedriver chromium-driver

#!/usr/bin/env bash
# Install Debian's Chromium and its WebDriver for the review page's browser test
# (tests/server/test_review_page.py). The distribution's packages, never a downloaded browser.
# Idempotent; uses sudo when not root. Without apt it says so: that one test then fails with
# a message naming the packages.
set -euo pipefail
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "warning: no apt-get; install chromium and chromium-driver for the browser test" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "warning: not root and no sudo; cannot install chromium chromium-driver" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || {
  $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q chromium chromium-driver >/dev/null
}

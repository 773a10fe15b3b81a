#!/usr/bin/env bash
# Install Debian's nginx for the secured-connection tests (tests/store/test_secured.py): it runs
# there as an unprivileged TLS-terminating, authenticating proxy on loopback ports, with its own
# configuration under a test folder. The distribution's package, never a download. Idempotent
# (an nginx already installed is left as it is); uses sudo when not root. The system service the
# package starts on port 80 is stopped and disabled again: the tests need only the binary.
# Without apt it says so: those tests then fail with a message naming this script.
set -euo pipefail
[ -x /usr/sbin/nginx ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "warning: no apt-get; install nginx for the secured-connection tests" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "warning: not root and no sudo; cannot install nginx" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -q nginx >/dev/null 2>&1 || {
  $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q nginx >/dev/null
}
if command -v systemctl >/dev/null && systemctl is-active --quiet nginx 2>/dev/null; then
  $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
elif [ -f /run/nginx.pid ]; then
  $SUDO nginx -s stop >/dev/null 2>&1 || true
fi

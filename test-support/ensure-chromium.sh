#!/usr/bin/env bash
# The dashboard's end-to-end tests drive Debian's Chromium (npm downloads no browser). Install it
# when it is missing and this machine can (root with apt-get); otherwise say what to do.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium for the dashboard's end-to-end tests" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "The dashboard's end-to-end tests need Chromium at /usr/bin/chromium: sudo apt-get install chromium" >&2
  exit 1
fi

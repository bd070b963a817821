#!/usr/bin/env bash
# Makes sure Debian's Chromium is there for the console's browser tests (playwright-core drives
# /usr/bin/chromium; no browser download). Installs it with apt-get when missing and we are root;
# otherwise says what to run. Used by the test suite's global setup and by .ci/run.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "ensure-chromium: chromium is missing; install it (apt-get install chromium) or set CHROMIUM_PATH" >&2
  exit 1
fi
echo "ensure-chromium: installing Debian's chromium for the browser tests" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
  { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends chromium >/dev/null; }
command -v chromium >/dev/null 2>&1

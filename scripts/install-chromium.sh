#!/usr/bin/env bash
# install-chromium.sh — install Debian's headless-capable Chromium for the HTML timeline test
# (host/replay: TestHTMLRendersInChromium). Idempotent: does nothing when `chromium` is on PATH.
# Uses only Debian's apt repositories: one `apt-get update`, then `apt-get install -y chromium`.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO="sudo"
fi
echo "install-chromium: installing Debian's chromium package (apt-get)" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
chromium --version >&2

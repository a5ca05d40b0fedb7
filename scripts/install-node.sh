#!/usr/bin/env bash
# install-node.sh — make `node` and `npm` available for examples/node-host (the Node.js host).
#
# Uses only Debian's apt repositories: `apt-get install -y nodejs npm`. On Debian bookworm that is
# Node 18.20 and npm 9.2. The project's reference machines carry Node 20.20 (a nodesource build of
# nodejs, with npm bundled), on which examples/node-host is verified; if node is already installed
# (any source) this script does nothing, so it never replaces that build.
#
# Idempotent. Run as root, or with sudo available.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

if have node && have npm; then
	echo "node $(node --version) and npm $(npm --version 2>/dev/null) already installed ($(command -v node))"
	exit 0
fi

SUDO=
if [ "$(id -u)" != 0 ]; then
	have sudo || { echo "install-node.sh: need root or sudo to apt-get install nodejs npm" >&2; exit 1; }
	SUDO=sudo
fi

pkgs=()
have node || pkgs+=(nodejs)
have npm || pkgs+=(npm)
echo "+ apt-get install -y ${pkgs[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${pkgs[@]}"

node --version
npm --version
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
	echo "install-node.sh: note: node $(node --version) from Debian; examples/node-host is verified on Node 20" >&2
fi

#!/usr/bin/env bash
# Builds this policy into policy.wasm: npm ci (assemblyscript, @extism/as-pdk, assemblyscript-json at the
# versions package-lock.json pins, from the npm registry), then asc with asconfig.json. It needs only Node.js
# 20 or later, wherever this directory is.
set -euo pipefail
cd "$(dirname "$0")"
command -v node >/dev/null && command -v npm >/dev/null ||
	{ echo "build.sh: node and npm are needed (Node.js 20 or later; in Ordinal's repository: make node)" >&2; exit 1; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || { echo "build.sh: node $(node --version): AssemblyScript 0.28 needs Node.js 20 or later" >&2; exit 1; }
[ -d node_modules/assemblyscript ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund >&2
npx --no-install asc --target release
echo "built $PWD/policy.wasm"

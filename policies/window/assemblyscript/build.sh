#!/usr/bin/env bash
# Builds the AssemblyScript window policy into OUT (default ../window-as.wasm): npm ci from the npm registry
# (assemblyscript, @extism/as-pdk, assemblyscript-json at the versions package-lock.json pins), then asc.
# policies/build.sh calls it; `make check-policies` compares a fresh build with the committed one. `--use abort=`
# makes a failed assertion a trap (the host reports the policy) rather than an import of env.abort, and names no file.
set -euo pipefail
cd "$(dirname "$0")"
OUT=${1:-../window-as.wasm}
command -v npm >/dev/null || bash ../../../scripts/install-node.sh >&2
[ -d node_modules/assemblyscript ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund >&2
npx --no-install asc window.ts --outFile "$OUT.tmp" --runtime stub --optimizeLevel 3 --shrinkLevel 1 --noAssert --use abort=
mv "$OUT.tmp" "$OUT"

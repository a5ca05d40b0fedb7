#!/usr/bin/env bash
# Builds each policy of policies/ (a directory with a main package) into policies/NAME/NAME.wasm with TinyGo,
# and the AssemblyScript build of window into policies/window/window-as.wasm.
# The modules are committed so `go test` and the CLI need no TinyGo; `make check-policies` (part of
# `make test`) fails when one is not what its source builds (TinyGo builds are reproducible).
#   policies/build.sh [OUTDIR]   OUTDIR: write NAME.wasm there instead (the check builds into a scratch dir)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TINYGO=${TINYGO:-$HOME/.cache/ordinal/tinygo-0.41.1-llvm19/bin/tinygo}
FLAGS=(-target=wasip1 -buildmode=c-shared -no-debug -scheduler=none -opt=2 -gc=leaking)
cd "$ROOT"
for dir in policies/*/; do
	dir=${dir%/}
	name=$(basename "$dir")
	[ -f "$dir/exports.go" ] || continue # kit/ and other libraries
	out=${1:-$dir}/$name.wasm
	"$TINYGO" build "${FLAGS[@]}" -o "$out.tmp" "./$dir" 2> >(grep -v 'is not a recognized feature for this target' >&2 || true)
	mv "$out.tmp" "$out"
	echo "built $out"
done
# the AssemblyScript build of window (npm ci and asc; policies/window/assemblyscript/build.sh)
out=${1:-policies/window}/window-as.wasm
case "$out" in /*) ;; *) out="$ROOT/$out" ;; esac
bash policies/window/assemblyscript/build.sh "$out" 2> >(grep -v '^$' >&2 || true)
echo "built $out"

#!/usr/bin/env bash
# Builds the misbehaving test modules used by host/wasm tests. The .wasm files are
# committed so `go test` works without TinyGo; rerun this after editing a main.go.
set -euo pipefail
cd "$(dirname "$0")"
TINYGO=${TINYGO:-$HOME/.cache/ordinal/tinygo-0.41.1-llvm19/bin/tinygo}
for dir in trap loop oom abi2 noexports hostcall badpolicy baddirect; do
	echo "building $dir.wasm"
	"$TINYGO" build -target=wasip1 -buildmode=c-shared -no-debug -scheduler=none \
		-o "$dir.wasm" "./$dir" 2> >(grep -v 'is not a recognized feature for this target' >&2)
done

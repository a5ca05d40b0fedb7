#!/usr/bin/env bash
# Builds the test modules of the hot swap and the action firewall (host/controller tests, e2e/swap_test.go).
# The .wasm files are committed so `go test` and `make e2e` need no TinyGo; rerun this after editing
# hostile/main.go or guest/ (the variant is the real guest built with another feature-gate default).
#
#   hostile.wasm                    ABI v1 module whose every plan reaches beyond its set (hostile/main.go)
#   ordinal-maxunavailable-off.wasm the real guest with MaxUnavailableStatefulSet off by default
#                                   (build tag ordinal_gate_maxunavailable_off, guest/statefulset/variant*.go)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../../.. && pwd)
TINYGO=${TINYGO:-$HOME/.cache/ordinal/tinygo-0.41.1-llvm19/bin/tinygo}
FLAGS=(-target=wasip1 -buildmode=c-shared -no-debug -scheduler=none)
# the variant is built exactly as the shipped module (the Makefile's TINYGO_FLAGS) plus the build tag
read -r -a GUEST_FLAGS <<< "${TINYGO_FLAGS:--target=wasip1 -buildmode=c-shared -no-debug -scheduler=none -opt=s -gc=leaking}"
filter() { grep -v 'is not a recognized feature for this target' >&2 || true; }
echo "building hostile.wasm"
"$TINYGO" build "${FLAGS[@]}" -o hostile.wasm ./hostile 2> >(filter)
echo "building ordinal-maxunavailable-off.wasm"
(cd "$ROOT" && "$TINYGO" build "${GUEST_FLAGS[@]}" -tags ordinal_gate_maxunavailable_off \
	-o host/controller/testdata/modules/ordinal-maxunavailable-off.wasm ./guest) 2> >(filter)
ls -l *.wasm

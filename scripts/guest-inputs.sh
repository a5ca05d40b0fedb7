#!/usr/bin/env bash
# Prints one digest of everything the embedded modules are built from: the Go files of every package of
# this repository the guest imports (for wasip1, with and without the tag ordinal_extended), go.mod,
# go.sum and the TinyGo version and flags. `make guest` writes it next to the modules; `make build` runs
# TinyGo only when it differs (a change under guest/, internal/ordinal, ..., committed or not).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
files() {
  GOOS=wasip1 GOARCH=wasm GOFLAGS= "$GO" list -deps "$@" \
    -f '{{if and .Module (eq .Module.Path "github.com/ordinal-dev/ordinal")}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}' ./guest
}
{
  echo "tinygo ${TINYGO_VERSION:-} ${TINYGO_FLAGS:-}"
  { files; files -tags ordinal_extended; echo "$PWD/go.mod"; echo "$PWD/go.sum"; } | sort -u | while read -r f; do
    printf '%s %s\n' "${f#"$PWD"/}" "$(sha256sum < "$f" | cut -d' ' -f1)"
  done
} | sha256sum | cut -d' ' -f1

// Package embedded carries the default reconcile module, built from guest/ with TinyGo by `make guest`.
//
// The module is committed so that `go build` and `go install` of the host work without TinyGo;
// `make test` rebuilds it and fails if the committed copy is stale.
package embedded

import _ "embed"

//go:embed ordinal.wasm
var module []byte

// Module returns the bytes of the default reconcile module. Callers must not modify them.
func Module() []byte { return module }

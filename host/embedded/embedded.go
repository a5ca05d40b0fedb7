// Package embedded carries the default reconcile module, built from guest/ with TinyGo by `make guest`,
// and the extended module, the same source built with the tag ordinal_extended (extensions beyond
// upstream, each off unless a set opts in; guest/statefulset/extensions.go).
//
// The module is committed so that `go build` and `go install` of the host work without TinyGo;
// `make test` rebuilds it and fails if the committed copy is stale.
package embedded

import _ "embed"

//go:embed ordinal.wasm
var module []byte

// Module returns the bytes of the default reconcile module. Callers must not modify them.
func Module() []byte { return module }

//go:embed ordinal-extended.wasm
var extended []byte

// ExtendedModule returns the bytes of the extended module. Callers must not modify them.
func ExtendedModule() []byte { return extended }

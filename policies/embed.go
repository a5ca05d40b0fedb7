// Package policies holds the example policy modules Ordinal ships (abi/POLICY.md, README "Policies"), each
// a directory with its source, its fixture tests and its TinyGo build (NAME/NAME.wasm, made by build.sh and
// checked by `make check-policies`), and kit, the library they are written with. Hosts embed the builds: a
// set can name a shipped policy without supplying a module.
package policies

import _ "embed"

//go:embed handoff/handoff.wasm
var handoff []byte

// Builtin returns the shipped policy modules by name.
func Builtin() map[string][]byte {
	return map[string][]byte{"handoff": handoff}
}

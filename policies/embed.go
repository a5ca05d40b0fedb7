// Package policies holds the example policy modules Ordinal ships (abi/POLICY.md, docs/policy-modules.md), each
// a directory with its source, its fixtures (testdata/*.json: an evaluate input and the answer it must get)
// and its TinyGo build (NAME/NAME.wasm, made by build.sh and checked by `make check-policies`), and kit, the
// library they are written with (kit/assemblyscript: the template and kit of a policy in AssemblyScript,
// docs/policies.md). window is also written in AssemblyScript (window/assemblyscript, built
// into window/window-as.wasm); every build answers every fixture of its policy the same. Hosts embed the
// TinyGo builds: a set can name a shipped policy without supplying a module.
package policies

import _ "embed"

var (
	//go:embed handoff/handoff.wasm
	handoff []byte
	//go:embed pdb/pdb.wasm
	pdb []byte
	//go:embed zones/zones.wasm
	zones []byte
	//go:embed window/window.wasm
	window []byte
	//go:embed window/window-as.wasm
	windowAS []byte
)

// Builtin returns the shipped policy modules by name (the TinyGo builds).
func Builtin() map[string][]byte {
	return map[string][]byte{"handoff": handoff, "pdb": pdb, "window": window, "zones": zones}
}

// Builds returns every build of each shipped policy, by policy name and then by language.
func Builds() map[string]map[string][]byte {
	return map[string]map[string][]byte{
		"handoff": {"tinygo": handoff},
		"pdb":     {"tinygo": pdb},
		"window":  {"tinygo": window, "assemblyscript": windowAS},
		"zones":   {"tinygo": zones},
	}
}

// Test module for host/wasm: a valid WASI reactor with none of the Ordinal
// exports; the host must refuse it at Load. Built by ../build.sh.
package main

//go:wasmexport answer
func answer() int32 { return 42 }

func main() {}

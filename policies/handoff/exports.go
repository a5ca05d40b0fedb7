//go:build wasip1

package main

import (
	"github.com/extism/go-pdk"

	"github.com/ordinal-dev/ordinal/policies/kit"
)

// describeJSON is describe's output, on both paths.
const describeJSON = `{"abi":1,"kind":"policy","policy":"handoff","version":"0.1.0"}`

// The Extism exports (abi/POLICY.md section 1), which any Extism host calls.

//go:wasmexport describe
func describe() int32 {
	pdk.Output([]byte(describeJSON))
	return 0
}

//go:wasmexport evaluate
func evaluate() int32 {
	pdk.Output(kit.Evaluate(pdk.Input(), decide))
	return 0
}

// The direct exports (abi/POLICY.md section 1.1), which a host embedding a wasm runtime calls instead.

//go:wasmexport ordinal_alloc
func ordinalAlloc(size uint32) uint32 { return kit.Alloc(size) }

//go:wasmexport ordinal_evaluate
func ordinalEvaluate(ptr, size uint32) uint64 { return kit.EvaluateDirect(ptr, size, decide) }

//go:wasmexport ordinal_describe
func ordinalDescribe() uint64 { return kit.Packed([]byte(describeJSON)) }

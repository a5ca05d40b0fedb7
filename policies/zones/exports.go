//go:build wasip1

package main

import (
	"github.com/extism/go-pdk"

	"github.com/ordinal-dev/ordinal/policies/kit"
)

//go:wasmexport describe
func describe() int32 {
	pdk.Output([]byte(`{"abi":1,"kind":"policy","policy":"zones","version":"0.1.0","context":["snapshot","nodes"]}`))
	return 0
}

//go:wasmexport evaluate
func evaluate() int32 {
	pdk.Output(kit.Evaluate(pdk.Input(), decide))
	return 0
}

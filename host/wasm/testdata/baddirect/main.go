// Test policy module for host/wasm: the policy "bad" of ../badpolicy with the direct exports too (abi/POLICY.md
// section 1.1), which a host calls instead of the Extism ones: on evaluate it misbehaves as its input asks
// ("loop" spins forever, "trap" panics, "big" answers 1 MiB, "oom" allocates without end); anything else
// gets an answer holding nothing. Built by ../build.sh (TinyGo, wasip1).
package main

import (
	"bytes"
	"unsafe"

	"github.com/extism/go-pdk"
)

var (
	spins         uint64
	hoard         [][]byte
	inBuf, outBuf []byte
)

const describeJSON = `{"abi":1,"kind":"policy","policy":"bad","version":"0.0.0"}`

func main() {}

func answer(in []byte) []byte {
	switch {
	case bytes.Contains(in, []byte(`"loop"`)):
		for {
			spins++
		}
	case bytes.Contains(in, []byte(`"trap"`)):
		panic("bad policy")
	case bytes.Contains(in, []byte(`"big"`)):
		return bytes.Repeat([]byte("x"), 1<<20)
	case bytes.Contains(in, []byte(`"oom"`)):
		for {
			hoard = append(hoard, make([]byte, 1<<20))
		}
	}
	return []byte(`{"abi":1,"holds":[]}`)
}

//go:wasmexport describe
func describe() int32 {
	pdk.Output([]byte(describeJSON))
	return 0
}

//go:wasmexport evaluate
func evaluate() int32 {
	pdk.Output(answer(pdk.Input()))
	return 0
}

//go:wasmexport ordinal_alloc
func ordinalAlloc(size uint32) uint32 {
	inBuf = make([]byte, max(size, 1))
	return uint32(uintptr(unsafe.Pointer(&inBuf[0])))
}

//go:wasmexport ordinal_evaluate
func ordinalEvaluate(ptr, size uint32) uint64 { return pack(answer(inBuf[:size])) }

//go:wasmexport ordinal_describe
func ordinalDescribe() uint64 { return pack([]byte(describeJSON)) }

func pack(b []byte) uint64 {
	outBuf = b
	return uint64(uint32(uintptr(unsafe.Pointer(&b[0]))))<<32 | uint64(uint32(len(b)))
}

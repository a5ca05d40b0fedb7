// Test module for host/wasm: implements the direct ABI exports and describe
// correctly, but panics (wasm unreachable) when the snapshot contains the bytes "misbehave".
// Any other input gets a fixed, valid empty plan, so tests can check that the
// host keeps serving after the bad call. Built by ../build.sh (TinyGo, wasip1).
package main

import (
	"bytes"
	"unsafe"
)

const describeJSON = `{"abi":1,"module":"ordinal-test-trap","moduleVersion":"0.0.0","kubernetesVersion":"v1.37.1","features":{}}`

const emptyPlan = `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[]}`

// in and out are package-level so the GC keeps them alive between host calls.
var in, out []byte

//go:wasmexport ordinal_alloc
func ordinalAlloc(size int32) int32 {
	in = make([]byte, size)
	if size == 0 {
		return 0
	}
	return int32(uintptr(unsafe.Pointer(&in[0])))
}

//go:wasmexport ordinal_describe
func ordinalDescribe() int64 { return pack([]byte(describeJSON)) }

//go:wasmexport ordinal_reconcile
func ordinalReconcile(ptr, size int32) int64 {
	snapshot := unsafe.Slice((*byte)(unsafe.Pointer(uintptr(ptr))), size)
	if bytes.Contains(snapshot, []byte("misbehave")) {
		panic("test module asked to misbehave")
	}
	return pack([]byte(emptyPlan))
}

func pack(b []byte) int64 {
	out = b
	return int64(uintptr(unsafe.Pointer(&out[0])))<<32 | int64(len(out))
}

func main() {}

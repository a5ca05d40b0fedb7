//go:build wasip1

// Command guest is Ordinal's reconcile module: thin glue between the wasm exports and the pure
// logic in guest/statefulset. It is the only package that touches the Extism PDK.
//
// Exports (ABI v1, see abi/README.md):
//   - describe, reconcile: Extism exports (input via pdk.Input, output via pdk.Output, return 0)
//   - ordinal_alloc(size i32) -> i32, ordinal_reconcile(ptr i32, len i32) -> i64,
//     ordinal_describe() -> i64: the direct exports for the Go host (one copy in, one copy out;
//     results packed as ptr<<32 | len).
package main

import (
	"unsafe"

	"github.com/extism/go-pdk"
	"github.com/ordinal-dev/ordinal/guest/statefulset"
)

// Buffers handed to the host stay referenced here until the next call into the instance, so
// the garbage collector cannot reclaim them while the host reads or writes them.
var (
	inBuf  []byte
	outBuf []byte
)

// planBuf is the storage of the plans this instance returns, written over by each call (the host copies a plan
// out before its next call: abi/README.md, "Direct path"), so that a held sync does not leave a plan's worth
// of memory behind under TinyGo's leaking collector.
var planBuf []byte

// objects is what this instance decoded of its previous snapshot's objects: the next snapshot may name
// them as unchanged (abi/README.md, "Unchanged objects"). One per instance, for both export paths.
var objects statefulset.ObjectCache

func main() {}

//go:wasmexport describe
func describe() int32 {
	pdk.Output(statefulset.Describe())
	afterExport()
	return 0
}

//go:wasmexport reconcile
func reconcile() int32 {
	planBuf = statefulset.ReconcileInto(&objects, pdk.Input(), planBuf)
	pdk.Output(planBuf)
	afterExport()
	return 0
}

//go:wasmexport ordinal_alloc
func ordinalAlloc(size uint32) uint32 {
	outBuf = nil
	n := size
	if n == 0 {
		n = 1
	}
	if uint32(cap(inBuf)) >= n && !objects.KeepsInput() { // the previous call's buffer, when nothing kept points into it
		inBuf = inBuf[:n]
	} else {
		inBuf = make([]byte, n)
	}
	return uint32(uintptr(unsafe.Pointer(&inBuf[0])))
}

//go:wasmexport ordinal_reconcile
func ordinalReconcile(ptr, length uint32) uint64 {
	// The input is the buffer ordinal_alloc handed out: a host that names any other memory gets the
	// empty-input error plan rather than a guest reading memory it never gave away.
	var in []byte
	if length > 0 && int(length) <= len(inBuf) && ptr == uint32(uintptr(unsafe.Pointer(&inBuf[0]))) {
		in = inBuf[:length]
	}
	planBuf = statefulset.ReconcileInto(&objects, in, planBuf)
	outBuf = planBuf
	afterExport()
	return pack(outBuf)
}

//go:wasmexport ordinal_describe
func ordinalDescribe() uint64 {
	outBuf = statefulset.Describe()
	afterExport()
	return pack(outBuf)
}

func pack(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uint32(uintptr(unsafe.Pointer(&b[0]))))<<32 | uint64(uint32(len(b)))
}

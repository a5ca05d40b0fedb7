//go:build wasip1

package kit

import "unsafe"

// The direct exports (abi/POLICY.md section 1.1), which a host that embeds a wasm runtime calls instead of
// the Extism ones: one copy in, one copy out, no host function. A policy's exports.go exports them as
//
//	//go:wasmexport ordinal_alloc
//	func ordinalAlloc(size uint32) uint32 { return kit.Alloc(size) }
//	//go:wasmexport ordinal_evaluate
//	func ordinalEvaluate(ptr, size uint32) uint64 { return kit.EvaluateDirect(ptr, size, decide) }
//	//go:wasmexport ordinal_describe
//	func ordinalDescribe() uint64 { return kit.Packed(describeJSON) }

// Buffers handed to the host stay referenced here until the next call into the instance, so the garbage
// collector cannot reclaim them while the host writes or reads them.
var inBuf, outBuf []byte

// Alloc is ordinal_alloc: a buffer of size bytes for the host to write evaluate's input into, valid until
// the next call into the instance.
func Alloc(size uint32) uint32 {
	outBuf = nil
	n := max(size, 1)
	if uint32(cap(inBuf)) >= n { // the previous call's: nothing the previous answer kept points into it
		inBuf = inBuf[:n]
	} else {
		inBuf = make([]byte, n)
	}
	return uint32(uintptr(unsafe.Pointer(&inBuf[0])))
}

// EvaluateDirect is ordinal_evaluate: Evaluate on the input the host wrote into Alloc's buffer, the answer
// packed as its address << 32 | its length. Any other address, or a length past the buffer, is read as
// an empty input (answered with an error), never as other memory.
func EvaluateDirect(ptr, size uint32, decide func(*Input) ([]Hold, error)) uint64 {
	var in []byte
	if size > 0 && int(size) <= len(inBuf) && ptr == uint32(uintptr(unsafe.Pointer(&inBuf[0]))) {
		in = inBuf[:size]
	}
	return Packed(Evaluate(in, decide))
}

// Packed is b handed to the host as ordinal_describe and ordinal_evaluate return it.
func Packed(b []byte) uint64 {
	outBuf = b
	if len(b) == 0 {
		return 0
	}
	return uint64(uint32(uintptr(unsafe.Pointer(&b[0]))))<<32 | uint64(uint32(len(b)))
}

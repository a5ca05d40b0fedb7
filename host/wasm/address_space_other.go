//go:build !unix

package wasm

// addressSpace is not reserved on this platform: memories grow by copying.
type addressSpace struct{ b []byte }

func reserve(uint64) *addressSpace { return nil }

func (s *addressSpace) release() {}

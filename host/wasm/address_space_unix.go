//go:build unix

package wasm

import "syscall"

// addressSpace is a private anonymous mapping reserved without swap accounting (MAP_NORESERVE): its pages
// are zero and take memory only when first written.
type addressSpace struct{ b []byte }

// reserve maps n bytes, advised for huge pages (adviseHugePages), or returns nil (the caller then grows by
// copying).
func reserve(n uint64) *addressSpace {
	if n == 0 || n > 1<<33 {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	adviseHugePages(b)
	return &addressSpace{b: b}
}

func (s *addressSpace) release() { _ = syscall.Munmap(s.b) }

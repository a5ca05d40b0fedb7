package wasm

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// memTracker is the wazero memory allocator of every instance, on both call paths. It does two things:
//
//   - it counts the bytes of every linear memory it backs: the Extism SDK does not expose a plugin's
//     module memory, so the Extism path sees (and bounds) an instance's memory through it;
//   - it backs each memory with address space reserved up front for the memory's maximum (which wazero
//     has already capped at MemoryLimitPages), so growing never copies. wazero's default grows a []byte
//     by reallocation, and a guest growing one page at a time held the old and the new buffer at once:
//     the process reached 3.8x the guest limit. Reserved pages cost nothing until the guest touches them,
//     so the process pays for what the guest uses, once.
type memTracker struct{ bytes atomic.Uint64 }

func (t *memTracker) pages() uint32 { return uint32(t.bytes.Load() / wasmPageSize) }

func (t *memTracker) Allocate(capacity, max uint64) experimental.LinearMemory {
	return &trackedMemory{tracker: t, max: max, space: reserve(max)}
}

type trackedMemory struct {
	tracker *memTracker
	max     uint64
	space   *addressSpace // nil where nothing could be reserved: grow by copying
	buf     []byte
}

// Reallocate grows the memory to size bytes. wazero has already checked size
// against the memory's maximum (and so against MemoryLimitPages).
func (m *trackedMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	old := uint64(len(m.buf))
	switch {
	case m.space != nil:
		m.buf = m.space.b[:size] // fresh pages of the reservation are zero
	case size <= uint64(cap(m.buf)):
		m.buf = m.buf[:size] // bytes past len were never written: still zero
	default:
		// Double like append does, so a guest growing page by page is not O(n^2).
		capacity := min(max(size, 2*uint64(cap(m.buf))), m.max)
		buf := make([]byte, size, capacity)
		copy(buf, m.buf)
		m.buf = buf
	}
	if size > old {
		m.tracker.bytes.Add(size - old)
	}
	return m.buf
}

func (m *trackedMemory) Free() {
	m.tracker.bytes.Add(-uint64(len(m.buf)))
	m.buf = nil
	if m.space != nil {
		m.space.release()
		m.space = nil
	}
}

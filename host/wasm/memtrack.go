package wasm

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// memTracker is a wazero memory allocator that counts the bytes of every linear
// memory it backs. The Extism SDK does not expose a plugin's module memory, so
// the Extism path instantiates through one of these to see (and bound) how much
// memory an instance holds: the plugin's memory plus the Extism kernel's.
// Growth mirrors wazero's default: a plain []byte, reallocated with headroom.
type memTracker struct{ bytes atomic.Uint64 }

func (t *memTracker) pages() uint32 { return uint32(t.bytes.Load() / wasmPageSize) }

func (t *memTracker) Allocate(capacity, max uint64) experimental.LinearMemory {
	return &trackedMemory{tracker: t, max: max, buf: make([]byte, 0, capacity)}
}

type trackedMemory struct {
	tracker *memTracker
	max     uint64
	buf     []byte
}

// Reallocate grows the memory to size bytes. wazero has already checked size
// against the memory's maximum (and so against MemoryLimitPages).
func (m *trackedMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	old := uint64(len(m.buf))
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size] // bytes past len were never written: still zero
	} else {
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
}

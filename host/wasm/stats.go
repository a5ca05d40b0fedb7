package wasm

import (
	"sync/atomic"
	"time"
)

// CallStats describes one reconcile call, for metrics and benchmarks.
type CallStats struct {
	Path          string        // "direct" or "extism"
	Acquire       time.Duration // waiting for a pool slot plus instantiating, if FreshInstance
	Guest         time.Duration // copy in, guest reconcile, copy out
	FreshInstance bool          // the call ran on a newly created instance
	MemoryPages   uint32        // guest memory after the call, in 64 KiB pages (extism: plugin + kernel)
	InputBytes    int
	OutputBytes   int
	Recycled      bool // the instance was closed after the call instead of being pooled
}

// PoolStats counts instance lifecycle events of one call path since Load.
type PoolStats struct {
	Calls               uint64
	Instantiated        uint64
	Closed              uint64
	RecycledForMemory   uint64 // memory grew past Config.RecycleAbovePages
	RecycledForCalls    uint64 // Config.MaxCallsPerInstance reached
	DiscardedAfterError uint64 // trap, timeout, cancel or out of memory
}

// Stats are the module's counters for both call paths.
type Stats struct {
	Direct, Extism PoolStats
}

type counters struct {
	calls, instantiated, closed, recycledMemory, recycledCalls, discarded atomic.Uint64
}

func (c *counters) snapshot() PoolStats {
	return PoolStats{
		Calls:               c.calls.Load(),
		Instantiated:        c.instantiated.Load(),
		Closed:              c.closed.Load(),
		RecycledForMemory:   c.recycledMemory.Load(),
		RecycledForCalls:    c.recycledCalls.Load(),
		DiscardedAfterError: c.discarded.Load(),
	}
}

// keepAfter decides whether an instance goes back to the pool after a call, and
// counts why not. An instance is kept while its memory is under RecycleAbovePages, or, for one whose first
// call alone left it larger (a large set's whole snapshot), while it has at most doubled since and still has
// room under MemoryLimitPages for another call like its first: a session's next syncs send only what
// changed, and recycling such an instance would make the next one send the whole set again.
func (c *counters) keepAfter(cfg *Config, err error, calls int, pages, firstPages uint32) bool {
	grown := pages > cfg.RecycleAbovePages && (pages > 2*firstPages || uint64(pages)+uint64(firstPages) > uint64(cfg.MemoryLimitPages))
	switch {
	case err != nil:
		c.discarded.Add(1)
	case grown:
		c.recycledMemory.Add(1)
	case cfg.MaxCallsPerInstance > 0 && calls >= cfg.MaxCallsPerInstance:
		c.recycledCalls.Add(1)
	default:
		return true
	}
	return false
}

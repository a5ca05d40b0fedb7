package wasm

import (
	"fmt"
	"runtime"
	"time"
)

// Config bounds what a module may cost the host. Zero values take the defaults
// documented on each field.
type Config struct {
	// CacheDir, when set, keeps wazero's compiled code on disk so the next process
	// skips compilation (a TinyGo module: ~0.3 s cold, ~10 ms warm). The CLI sets
	// it; servers that compile once per process can leave it empty.
	CacheDir string

	// MemoryLimitPages caps each guest memory, in 64 KiB wasm pages.
	// Default 4096 (256 MiB). At most 65536 (4 GiB); Load refuses more.
	MemoryLimitPages uint32

	// MaxOutputBytes caps one plan (or describe output): a larger one is a module failure and is not
	// copied out of the guest. Default 64 MiB (a 5000-pod Parallel creation plan is about 15 MB).
	MaxOutputBytes int

	// Limits bound the module's static shape (size, compile cost, tables), checked before compiling.
	Limits ModuleLimits

	// Timeout bounds each call into the module (reconcile, and _initialize plus
	// describe when an instance is created), and Load's compile. It is there to stop a looping
	// module, not to police slow ones: a 5000-pod reconcile takes several
	// seconds on a busy 2-core machine. Default 30s; negative disables it (the
	// caller's context still applies).
	Timeout time.Duration

	// RecycleAbovePages closes an instance after a call that left its memory
	// larger than this many pages, instead of returning it to the pool. TinyGo's
	// GC keeps large dead buffers alive, so a reused instance fed multi-MB
	// snapshots only grows; recycling keeps host memory bounded.
	// Default 256 (16 MiB): a 1000-pod call grows a TinyGo guest by about 4 MiB and a fresh
	// instance costs well under a millisecond, so a lower bound keeps a replay's or a controller's
	// resident memory small for nothing (RATIONALE.md, "TinyGo with -gc=leaking"). An instance whose first call alone
	// left it above this (a large set's whole snapshot) is kept while it has at most doubled since
	// and has room under MemoryLimitPages for another call like its first: a Session's later calls
	// send only what changed, and recycling it would make the next call send the whole set again.
	RecycleAbovePages uint32

	// MaxCallsPerInstance closes an instance after this many calls. 0 means no
	// limit; 1 means a fresh instance for every call.
	MaxCallsPerInstance int

	// MaxInstances caps how many instances of each call path exist at once, and
	// so how many calls run concurrently; further calls wait. Each instance can
	// hold up to MemoryLimitPages of memory. Default GOMAXPROCS.
	MaxInstances int

	// WorkBudget bounds each direct-path call by work as well as by time: the number of function
	// entries and loop iterations it may run (default 2^31-1, seconds of a tight loop, far more than a
	// 5000-pod reconcile needs). Guest machine code cannot be preempted by the Go runtime, so while a
	// guest loops, a stop-the-world garbage collection waits for it and no timer can fire to interrupt
	// it; the budget ends such a call on its own (as ErrTimeout), and the process with it.
	WorkBudget uint32
}

const (
	wasmPageSize             = 65536
	defaultMemoryLimitPages  = 4096
	defaultRecycleAbovePages = 256
	defaultTimeout           = 30 * time.Second
	defaultWorkBudget        = 1<<31 - 1
	maxMemoryPages           = 65536
)

// DefaultMaxOutputBytes is Config.MaxOutputBytes when zero.
const DefaultMaxOutputBytes = 64 << 20

// validate refuses values that cannot be honoured, rather than clamping them.
func (c Config) validate() error {
	switch {
	case c.MemoryLimitPages > maxMemoryPages:
		return fmt.Errorf("ordinal module: MemoryLimitPages %d is above the 65536 pages (4 GiB) a wasm32 memory can have", c.MemoryLimitPages)
	case c.MaxOutputBytes < 0:
		return fmt.Errorf("ordinal module: MaxOutputBytes %d is negative", c.MaxOutputBytes)
	}
	return c.Limits.validate()
}

func (c Config) withDefaults() Config {
	if c.MemoryLimitPages == 0 {
		c.MemoryLimitPages = defaultMemoryLimitPages
	}
	if c.MaxOutputBytes == 0 {
		c.MaxOutputBytes = DefaultMaxOutputBytes
	}
	c.Limits = c.Limits.withDefaults()
	if c.RecycleAbovePages == 0 {
		c.RecycleAbovePages = defaultRecycleAbovePages
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.WorkBudget == 0 || c.WorkBudget > defaultWorkBudget {
		c.WorkBudget = defaultWorkBudget
	}
	if c.MaxInstances <= 0 {
		c.MaxInstances = runtime.GOMAXPROCS(0)
	}
	return c
}

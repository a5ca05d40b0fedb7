package cli

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A one-shot command (`ordinal reconcile`) reads one document, runs the module once and exits: the garbage
// collector's cycles in that time free nothing the process needs back. With the default GOGC the collector
// ran twice in a 1000-pod reconcile (the heap's first goal is 4 MiB, passed as the snapshot is read), for
// ~10% of the process's CPU. So the command holds the collector off while it works (holdCollector), up to a
// memory limit: what the runtime held when the hold began, lateGCFloor, and lateGCPerInput bytes per byte
// of the input once it is read (gcHold.input). Past the limit the collector runs as it must to keep to it;
// the limit is far above what the command keeps, so it never runs without end. GOGC or GOMEMLIMIT in the
// environment is the user's choice and is left alone.
const (
	lateGCFloor    = 64 << 20
	lateGCPerInput = 4
)

// collector is the collector's setting before the first of the holds in effect (commands run in one
// process by tests may overlap), put back when the last one ends, and the limit the holds share.
var collector struct {
	sync.Mutex
	holds   int
	percent int
	limit   int64
	base    int64 // the runtime's memory when the first hold began, plus lateGCFloor
	inputs  int64 // lateGCPerInput times the inputs of the holds in effect
}

// gcHold is one command's hold of the collector; the zero value (the environment sets the collector) holds
// nothing.
type gcHold struct {
	held  bool
	bytes int64 // what input added to the limit
}

// holdCollector turns the collector off, within the memory limit, until release.
func holdCollector() *gcHold {
	if userSetGC() {
		return &gcHold{}
	}
	collector.Lock()
	defer collector.Unlock()
	if collector.holds == 0 {
		collector.base = runtimeMemory() + lateGCFloor
		collector.percent = debug.SetGCPercent(-1)
		collector.limit = debug.SetMemoryLimit(collector.base)
	}
	collector.holds++
	return &gcHold{held: true}
}

// input raises the limit by lateGCPerInput times n, the bytes of the command's input.
func (h *gcHold) input(n int) {
	if !h.held {
		return
	}
	collector.Lock()
	defer collector.Unlock()
	add := lateGCPerInput * int64(n)
	h.bytes += add
	collector.inputs += add
	debug.SetMemoryLimit(collector.base + collector.inputs)
}

// release ends the hold; the last one puts the collector's setting back.
func (h *gcHold) release() {
	if !h.held {
		return
	}
	h.held = false
	collector.Lock()
	defer collector.Unlock()
	collector.inputs -= h.bytes
	if collector.holds--; collector.holds > 0 {
		debug.SetMemoryLimit(collector.base + collector.inputs)
		return
	}
	debug.SetGCPercent(collector.percent)
	debug.SetMemoryLimit(collector.limit)
}

// userSetGC reports whether the environment sets the collector (GOGC, GOMEMLIMIT).
func userSetGC() bool {
	_, gogc := os.LookupEnv("GOGC")
	_, limit := os.LookupEnv("GOMEMLIMIT")
	return gogc || limit
}

// runtimeMemory is the memory the runtime's memory limit counts now: everything it mapped but what it
// returned to the system.
func runtimeMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

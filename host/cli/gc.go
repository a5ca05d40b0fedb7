package cli

import (
	"os"
	"runtime"
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
//
// A replay's memory grows with its syncs, not its input, so its hold (holdCollectorOnce) has a floor of
// replayGCFloor and ends at the first collection: a short replay (a 300-pod rollout: seven collections, a
// sixth of its CPU) mostly ends before it, and a long one then collects as it always did. A larger floor is
// memory a long replay holds for nothing: with 64 MiB, a 300-pod OrderedReady rollout peaked 30 MiB higher.
const (
	lateGCFloor    = 64 << 20
	lateGCPerInput = 4
	replayGCFloor  = 24 << 20
)

// collector is the collector's setting before the first of the holds in effect (commands run in one
// process by tests may overlap), put back when the last one ends, and the limit the holds share.
var collector struct {
	sync.Mutex
	holds   int
	percent int
	limit   int64
	base    int64 // the runtime's memory when the first hold began, plus its floor
	inputs  int64 // lateGCPerInput times the inputs of the holds in effect
}

// gcHold is one command's hold of the collector; the zero value (the environment sets the collector) holds
// nothing.
type gcHold struct {
	held  bool
	bytes int64 // what input added to the limit
}

// holdCollector turns the collector off, within the memory limit (floor: lateGCFloor, or replayGCFloor;
// overlapping holds share the first one's), until release.
func holdCollector(floor int64) *gcHold {
	if userSetGC() {
		return &gcHold{}
	}
	collector.Lock()
	defer collector.Unlock()
	if collector.holds == 0 {
		collector.base = runtimeMemory() + floor
		collector.percent = debug.SetGCPercent(-1)
		collector.limit = debug.SetMemoryLimit(collector.base)
	}
	collector.holds++
	return &gcHold{held: true}
}

// holdCollectorOnce is a replay's hold (replayGCFloor): it also ends at the first collection, which only the
// limit starts.
func holdCollectorOnce() *gcHold {
	h := holdCollector(replayGCFloor)
	if h.held {
		// a cleanup runs once a collection found its object unreachable: the first one from here on (the
		// object holds a pointer, so it is never one of the runtime's tiny objects, whose cleanups may not run)
		runtime.AddCleanup(&struct{ _ *gcHold }{}, func(h *gcHold) { h.release() }, h)
	}
	return h
}

// input raises the limit by lateGCPerInput times n, the bytes of the command's input.
func (h *gcHold) input(n int) {
	collector.Lock()
	defer collector.Unlock()
	if !h.held {
		return
	}
	add := lateGCPerInput * int64(n)
	h.bytes += add
	collector.inputs += add
	debug.SetMemoryLimit(collector.base + collector.inputs)
}

// release ends the hold; the last one puts the collector's setting back. It may run twice, and on another
// goroutine (holdCollectorOnce's cleanup).
func (h *gcHold) release() {
	collector.Lock()
	defer collector.Unlock()
	if !h.held {
		return
	}
	h.held = false
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

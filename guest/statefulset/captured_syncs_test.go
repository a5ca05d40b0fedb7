package statefulset

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
)

// BenchmarkCapturedSyncs replays the module inputs a host captured (ORDINAL_SYNCS: a directory of NNNNN.json,
// as host/webhook's BenchmarkPreview1000OrderedReadyAllocs writes with ORDINAL_CAPTURE_SYNCS): the first
// whole snapshot and every delta after it up to the next whole one, each b.N time on an instance of its
// own, so a memory profile (-memprofilerate 1) shows what a rollout's delta syncs allocate.
func BenchmarkCapturedSyncs(b *testing.B) {
	dir := os.Getenv("ORDINAL_SYNCS")
	if dir == "" {
		b.Skip("ORDINAL_SYNCS names no directory of captured inputs")
	}
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 0 // reading and sorting the inputs, and the whole snapshots, are not the deltas' allocations
	defer func() { runtime.MemProfileRate = rate }()
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(names)
	var inputs [][]byte
	for i, n := range names {
		in, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 && len(in) > 100_000 {
			break
		}
		inputs = append(inputs, in)
	}
	// ORDINAL_SYNC_KIND profiles the syncs of one kind only (wait, status, create, delete: the plan's first write)
	only := os.Getenv("ORDINAL_SYNC_KIND")
	var kinds []string
	{
		var c ObjectCache
		buf := ReconcileInto(&c, inputs[0], nil)
		for _, in := range inputs[1:] {
			buf = ReconcileInto(&c, in, buf)
			kinds = append(kinds, syncKind(buf))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.MemProfileRate = 0
		var c ObjectCache
		buf := ReconcileInto(&c, inputs[0], nil)
		runtime.MemProfileRate = rate
		b.StartTimer()
		for k, in := range inputs[1:] {
			if only != "" {
				runtime.MemProfileRate = map[bool]int{true: rate, false: 0}[kinds[k] == only]
			}
			buf = ReconcileInto(&c, in, buf)
		}
		runtime.MemProfileRate = 0
	}
	b.ReportMetric(float64(len(inputs)-1), "deltas/op")
}

// syncKind is what a plan does first: delete or create a pod, write the status, or nothing (wait).
func syncKind(plan []byte) string {
	switch {
	case bytes.Contains(plan, []byte(`"verb":"delete","kind":"Pod"`)):
		return "delete"
	case bytes.Contains(plan, []byte(`"verb":"create","kind":"Pod"`)):
		return "create"
	case bytes.Contains(plan, []byte(`"kind":"StatefulSet"`)):
		return "status"
	}
	return "wait"
}

package webhook

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/preview"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// Issue 49: the preview of a 1000-pod OrderedReady image change (6,002 syncs) in figures: the module calls it
// made, the instances it recycled because the leaking guest's memory grew (each costs a fresh instance and
// the whole set sent again), and the process's CPU per preview. What a sync allocates in the module decides
// recycles/preview (BenchmarkPreview1000OrderedReadyAllocs counts it by the kind of sync).
func BenchmarkPreview1000OrderedReadyRecycles(b *testing.B) {
	w := newWorld(b, 1000, "OrderedReady", 1, "Retain", "")
	var calls, recycled uint64
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("x:%d", i) })
		before, c0 := testModule.Stats().Direct, processCPU()
		res, err := preview.Preview(context.Background(), w.previewInput(cur))
		if err != nil {
			b.Fatal(err)
		}
		if r := res.Preview.Outcome.Result; r != "complete" {
			b.Fatalf("the preview is %s after %d syncs", r, res.Preview.Outcome.Steps)
		}
		after := testModule.Stats().Direct
		calls += after.Calls - before.Calls
		recycled += after.RecycledForMemory - before.RecycledForMemory
		cpu += processCPU() - c0
	}
	b.ReportMetric(float64(calls)/float64(b.N), "calls/preview")
	b.ReportMetric(float64(recycled)/float64(b.N), "recycles/preview")
	b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/preview")
}

// The same preview through a module whose guest allocator is counted (TinyGo's runtime.alloc, as host/wasm's
// allocation tests count it): the bytes each kind of sync allocates in the module, told by its plan (a pod
// deleted, a pod created, the status alone written, nothing: the sync waits) and its input (whole or delta).
func BenchmarkPreview1000OrderedReadyAllocs(b *testing.B) {
	w := newWorld(b, 1000, "OrderedReady", 1, "Retain", "")
	t := &callTap{kinds: map[string]*kindTotal{}}
	ctx := experimental.WithFunctionListenerFactory(context.Background(), t)
	mod, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer mod.Close(context.Background())
	var inputs [][]byte
	if dir := os.Getenv("ORDINAL_CAPTURE_SYNCS"); dir != "" {
		t.capture = &inputs
		defer func() {
			for i, in := range inputs {
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("%05d.json", i)), in, 0o644)
			}
		}()
	}
	for i := 0; i < b.N; i++ {
		cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("x:%d", i) })
		in := w.previewInput(cur)
		in.Module = mod
		res, err := preview.Preview(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if r := res.Preview.Outcome.Result; r != "complete" {
			b.Fatalf("the preview is %s after %d syncs", r, res.Preview.Outcome.Steps)
		}
	}
	names := make([]string, 0, len(t.kinds))
	for k := range t.kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	var all, n int64
	for _, k := range names {
		kt := t.kinds[k]
		all, n = all+kt.bytes, n+kt.calls
		b.Logf("%-28s %6.0f calls/preview %9.1f KiB/call %10.1f KiB/preview", k, float64(kt.calls)/float64(b.N),
			float64(kt.bytes)/float64(kt.calls)/1024, float64(kt.bytes)/float64(b.N)/1024)
		b.ReportMetric(float64(kt.bytes)/float64(kt.calls)/1024, "KiB/"+strings.ReplaceAll(k, " ", "-"))
	}
	b.ReportMetric(float64(all)/float64(b.N)/1024/1024, "MiB/preview")
	b.ReportMetric(float64(mod.Stats().Direct.RecycledForMemory)/float64(b.N), "recycles/preview")
}

type kindTotal struct{ calls, bytes int64 }

// callTap counts the guest allocator's bytes per ordinal_reconcile call and sorts each call by its plan.
type callTap struct {
	kinds  map[string]*kindTotal
	bytes  int64
	inLen  uint32
	inCall bool
	// capture, when set, collects every call's input (for a native profile of the same syncs)
	capture *[][]byte
}

func (t *callTap) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if strings.HasSuffix(def.DebugName(), ".runtime.alloc") || isReconcile(def) {
		return t
	}
	return nil
}

func isReconcile(def api.FunctionDefinition) bool {
	for _, n := range def.ExportNames() {
		if n == "ordinal_reconcile" {
			return true
		}
	}
	return false
}

func (t *callTap) Before(_ context.Context, mod api.Module, def api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	if strings.HasSuffix(def.DebugName(), ".runtime.alloc") {
		if t.inCall {
			t.bytes += int64(uint32(params[0]))
		}
		return
	}
	t.inCall, t.bytes, t.inLen = true, 0, uint32(params[1])
	if t.capture != nil {
		in, _ := mod.Memory().Read(uint32(params[0]), uint32(params[1]))
		*t.capture = append(*t.capture, bytes.Clone(in))
	}
}

func (t *callTap) After(_ context.Context, mod api.Module, def api.FunctionDefinition, results []uint64) {
	if !isReconcile(def) {
		return
	}
	t.inCall = false
	out, _ := mod.Memory().Read(uint32(results[0]>>32), uint32(results[0]))
	kind := "delta"
	if t.inLen > 500_000 {
		kind = "whole"
	}
	switch {
	case bytes.Contains(out, []byte(`"verb":"delete","kind":"Pod"`)):
		kind += " delete pod"
	case bytes.Contains(out, []byte(`"verb":"create","kind":"Pod"`)):
		kind += " create pod"
	case bytes.Contains(out, []byte(`"kind":"StatefulSet"`)):
		kind += " status"
	case bytes.Contains(out, []byte(`"actions":[]`)) || !bytes.Contains(out, []byte(`"verb"`)):
		kind += " wait"
	default:
		kind += " other"
	}
	kt := t.kinds[kind]
	if kt == nil {
		kt = &kindTotal{}
		t.kinds[kind] = kt
	}
	kt.calls++
	kt.bytes += t.bytes
}

func (t *callTap) Abort(context.Context, api.Module, api.FunctionDefinition, error) { t.inCall = false }

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

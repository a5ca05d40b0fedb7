package wasm_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

func TestGuestDescribe(t *testing.T) {
	m := loadGuest(t, wasm.Config{})
	if err := schemacheck.ValidateDescribe(m.DescribeJSON()); err != nil {
		t.Fatal(err)
	}
	d := m.Describe()
	if d.ABI != abi.Version || d.Module == "" || !strings.HasPrefix(d.KubernetesVersion, "v1.37.") {
		t.Errorf("describe %+v", d)
	}
	for _, gate := range []string{abi.GateMaxUnavailableStatefulSet, abi.GateStatefulSetRecreateStrategy,
		abi.GateStatefulSetSemanticRevisionComparison, abi.GateStaleControllerConsistencyStatefulSet} {
		if _, ok := d.Features[gate]; !ok {
			t.Errorf("describe lacks gate %s", gate)
		}
	}
}

// malformedInputs are snapshots the module must answer with an error plan.
// path "" means the test does not check error.path.
func malformedInputs() []struct {
	name, code, path string
	input            []byte
} {
	valid := string(rollingUpdateSnapshot(3))
	junk := bytes.Repeat([]byte("\x00junk{[\"\xff"), 50<<20/10) // 50 MB
	return []struct {
		name, code, path string
		input            []byte
	}{
		{"empty", abi.CodeInvalidJSON, "", nil},
		{"truncated", abi.CodeInvalidJSON, "", []byte(valid[:len(valid)/2])},
		{"trailing garbage", abi.CodeInvalidJSON, "", []byte(valid + "}")},
		{"not an object", abi.CodeInvalidSnapshot, "", []byte(`[1,2,3]`)},
		{"missing abi", abi.CodeUnsupportedABI, "abi", []byte(`{"now":"2026-05-01T12:00:00Z","statefulSet":{}}`)},
		{"unknown abi", abi.CodeUnsupportedABI, "abi", []byte(strings.Replace(valid, `"abi":1`, `"abi":2`, 1))},
		{"missing statefulSet", abi.CodeInvalidSnapshot, "statefulSet", []byte(`{"abi":1,"now":"2026-05-01T12:00:00Z","pods":[]}`)},
		{"statefulSet wrong type", abi.CodeInvalidSnapshot, "statefulSet", []byte(`{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":[]}`)},
		{"replicas wrong type", abi.CodeInvalidSnapshot, "statefulSet.spec.replicas", []byte(strings.Replace(valid, `"replicas":3,`, `"replicas":"3",`, 1))},
		{"pods wrong type", abi.CodeInvalidSnapshot, "pods", []byte(strings.Replace(valid, `"pods":[`, `"pods":{"x":[`, 1) + "}")},
		{"unknown gate", abi.CodeUnknownFeatureGate, "features.NoSuchGate", []byte(`{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":{},"features":{"NoSuchGate":true}}`)},
		{"50 MB of junk", abi.CodeInvalidJSON, "", junk},
	}
}

func TestGuestMalformedInputs(t *testing.T) {
	m := loadGuest(t, wasm.Config{MaxInstances: 1})
	ctx := context.Background()
	good := rollingUpdateSnapshot(3)
	for _, tc := range malformedInputs() {
		t.Run(tc.name, func(t *testing.T) {
			out, err := m.Reconcile(ctx, tc.input)
			if err != nil {
				t.Fatalf("module failed instead of returning an error plan: %v", err)
			}
			p := decodePlan(t, out)
			if p.Error == nil {
				t.Fatalf("no error in plan %.300s", out)
			}
			if p.Error.Code != tc.code || p.Error.Message == "" || (tc.path != "" && p.Error.Path != tc.path) {
				t.Errorf("error %+v, want code %s path %q", *p.Error, tc.code, tc.path)
			}
			if len(p.Actions) != 0 {
				t.Errorf("error plan has %d actions", len(p.Actions))
			}
			viaExtism, err := m.ReconcileExtism(ctx, tc.input)
			if err != nil {
				t.Fatalf("extism path: %v", err)
			}
			if !bytes.Equal(out, viaExtism) {
				t.Errorf("paths differ:\ndirect %.300s\nextism %.300s", out, viaExtism)
			}
			// The module keeps serving.
			out, err = m.Reconcile(ctx, good)
			if err != nil {
				t.Fatal(err)
			}
			if p := decodePlan(t, out); p.Error != nil {
				t.Fatalf("valid snapshot after %s: %v", tc.name, p.Error)
			}
		})
	}
	if s := m.Stats(); s.Direct.DiscardedAfterError != 0 || s.Extism.DiscardedAfterError != 0 {
		t.Errorf("malformed input cost instances: %+v", s)
	}
}

// TestGuestPathsAgree runs every conformance snapshot (and generated ones)
// through both paths: the plans must be byte-identical and schema-valid.
func TestGuestPathsAgree(t *testing.T) {
	m := loadGuest(t, wasm.Config{})
	ctx := context.Background()
	inputs := map[string][]byte{}
	for _, n := range []int{0, 1, 10, 100} {
		inputs[fmt.Sprintf("generated/%d-pods", n)] = rollingUpdateSnapshot(n)
	}
	files := conformanceSnapshots(t)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := schemacheck.ValidateSnapshot(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		inputs[filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f)] = b
	}
	for name, in := range inputs {
		direct, err := m.Reconcile(ctx, in)
		if err != nil {
			t.Errorf("%s: direct: %v", name, err)
			continue
		}
		viaExtism, err := m.ReconcileExtism(ctx, in)
		if err != nil {
			t.Errorf("%s: extism: %v", name, err)
			continue
		}
		if !bytes.Equal(direct, viaExtism) {
			t.Errorf("%s: paths differ:\ndirect %.300s\nextism %.300s", name, direct, viaExtism)
		}
		decodePlan(t, direct)
	}
}

// TestGuestGeneratedSnapshotDoesWork guards the benchmark input: a template
// change on a settled set must produce a plan with actions and no error.
func TestGuestGeneratedSnapshotDoesWork(t *testing.T) {
	m := loadGuest(t, wasm.Config{})
	out, err := m.Reconcile(context.Background(), rollingUpdateSnapshot(10))
	if err != nil {
		t.Fatal(err)
	}
	p := decodePlan(t, out)
	if p.Error != nil || len(p.Actions) == 0 {
		t.Fatalf("plan for a template change: error %v, %d actions\n%.1000s", p.Error, len(p.Actions), out)
	}
	verbs := map[string]bool{}
	for _, a := range p.Actions {
		verbs[a.Verb+" "+a.Kind] = true
	}
	for _, want := range []string{"create ControllerRevision", "delete Pod", "updateStatus StatefulSet"} {
		if !verbs[want] {
			t.Errorf("plan lacks %q: %v", want, verbs)
		}
	}
}

// TestGuestConcurrent: many goroutines on both paths, through a small pool,
// each checking its plan against the one computed sequentially.
func TestGuestConcurrent(t *testing.T) {
	m := loadGuest(t, wasm.Config{MaxInstances: 4})
	ctx := context.Background()
	inputs := [][]byte{rollingUpdateSnapshot(1), rollingUpdateSnapshot(7), rollingUpdateSnapshot(30), []byte(`{"abi":1`)}
	want := make([][]byte, len(inputs))
	for i, in := range inputs {
		out, err := m.Reconcile(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = out
	}
	const goroutines, calls = 16, 12
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*calls)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range calls {
				i := (g + c) % len(inputs)
				call := m.Reconcile
				if (g+c)%3 == 0 {
					call = m.ReconcileExtism
				}
				out, err := call(ctx, inputs[i])
				if err != nil {
					errs <- err
					continue
				}
				if !bytes.Equal(out, want[i]) {
					errs <- fmt.Errorf("goroutine %d call %d: input %d gave a different plan", g, c, i)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := m.Stats(); s.Direct.Instantiated > 4 || s.Extism.Instantiated > 4 {
		t.Errorf("pool exceeded MaxInstances: %+v", s)
	}
}

// TestGuestFreshAndReusedInstancesAgree: instance reuse must not change output.
func TestGuestFreshAndReusedInstancesAgree(t *testing.T) {
	wasmBytes := guestWasm(t)
	reused := load(t, wasmBytes, wasm.Config{MaxInstances: 1, Timeout: 2 * time.Minute})
	fresh := load(t, wasmBytes, wasm.Config{MaxInstances: 1, MaxCallsPerInstance: 1, Timeout: 2 * time.Minute})
	ctx := context.Background()
	for _, n := range []int{5, 50, 5, 0, 50} {
		in := rollingUpdateSnapshot(n)
		a, err := reused.Reconcile(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fresh.Reconcile(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%d pods: reused and fresh instances differ", n)
		}
	}
}

package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/guest/statefulset"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// settledSet is rollingUpdateSnapshot(n) settled: its pods at the revision of the set's template, which the
// snapshot holds (as the native module creates it), every pod with a uid and a resourceVersion, and a claim
// per pod, so a sync of it has nothing to do. It returns the snapshot and its decoded form, from which
// heldDelta builds the deltas of a set that stays.
func settledSet(tb testing.TB, n int) ([]byte, map[string]any) {
	tb.Helper()
	var s map[string]any
	if err := json.Unmarshal(rollingUpdateSnapshot(n), &s); err != nil {
		tb.Fatal(err)
	}
	set := s["statefulSet"].(map[string]any)
	set["spec"].(map[string]any)["volumeClaimTemplates"] = []any{map[string]any{"metadata": map[string]any{"name": "data"},
		"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}, "volumeMode": "Filesystem"}}}
	s["revisions"] = []any{}
	rev := createdRevision(tb, s, "rev-uid", "500")
	name := rev["metadata"].(map[string]any)["name"].(string)
	var claims []any
	for i, p := range s["pods"].([]any) {
		md := p.(map[string]any)["metadata"].(map[string]any)
		md["uid"], md["resourceVersion"] = fmt.Sprintf("uid-%d", i), fmt.Sprint(1000+i)
		md["labels"].(map[string]any)["controller-revision-hash"] = name
		spec := p.(map[string]any)["spec"].(map[string]any)
		spec["volumes"] = []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": fmt.Sprintf("data-web-%d", i)}}}
		claims = append(claims, map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("data-web-%d", i), "namespace": "default", "uid": fmt.Sprintf("pvc-%d", i),
				"resourceVersion": fmt.Sprint(5000 + i), "labels": map[string]any{"app": "web"}},
			"spec":   map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}, "volumeMode": "Filesystem"},
			"status": map[string]any{"phase": "Bound"},
		})
	}
	s["claims"], s["revisions"] = claims, []any{rev}
	status := set["status"].(map[string]any)
	status["currentRevision"], status["updateRevision"], status["observedGeneration"] = name, name, 2
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	var p planOf
	if err := json.Unmarshal(statefulset.Reconcile(b), &p); err != nil || len(p.Actions) != 0 || p.Error != nil {
		tb.Fatalf("the settled set's sync is not empty (%v): %+v", err, p)
	}
	return b, s
}

type planOf struct {
	Actions []struct {
		Verb, Kind, Name string
		Object           map[string]any
	}
	Error any
}

// createdRevision is the ControllerRevision a sync of s creates for its template, as the API server would hold it
// (under uid and resourceVersion rv).
func createdRevision(tb testing.TB, s map[string]any, uid, rv string) map[string]any {
	tb.Helper()
	b, _ := json.Marshal(s)
	var p planOf
	if err := json.Unmarshal(statefulset.Reconcile(b), &p); err != nil {
		tb.Fatal(err)
	}
	for _, a := range p.Actions {
		if a.Verb == "create" && a.Kind == "ControllerRevision" {
			md := a.Object["metadata"].(map[string]any)
			md["namespace"], md["uid"], md["resourceVersion"] = "default", uid, rv
			return a.Object
		}
	}
	tb.Fatalf("the sync creates no revision: %+v", p)
	return nil
}

// midRolloutSet is settledSet(n) half rolled to a new template (n even): the update revision exists (the
// ControllerRevision a sync creates for the template), status.currentRevision and updateRevision differ, pods
// n/2..n-1 are at the update revision (OrderedReady updates from the highest ordinal down) and pod n/2-1 too,
// recreated but not Ready yet, so a sync waits for it. The status is what the module's sync of that world
// writes; the plan shapes are asserted, so a benchmark of its deltas measures a rollout waiting, nothing else.
func midRolloutSet(tb testing.TB, n int) ([]byte, map[string]any) {
	tb.Helper()
	_, s := settledSet(tb, n)
	set := s["statefulSet"].(map[string]any)
	status := set["status"].(map[string]any)
	currentRev := status["currentRevision"].(string)
	set["metadata"].(map[string]any)["generation"] = 3
	const image = "registry.k8s.io/nginx-slim:0.29"
	container(set["spec"].(map[string]any)["template"].(map[string]any))["image"] = image
	rev := createdRevision(tb, s, "rev-uid-2", "501")
	updateRev := rev["metadata"].(map[string]any)["name"].(string)
	if updateRev == currentRev {
		tb.Fatalf("the new template's revision %s is the current one", updateRev)
	}
	s["revisions"] = append(s["revisions"].([]any), rev)
	waiting := n/2 - 1
	for i := waiting; i < n; i++ {
		p := s["pods"].([]any)[i].(map[string]any)
		p["metadata"].(map[string]any)["labels"].(map[string]any)["controller-revision-hash"] = updateRev
		container(p)["image"] = image
	}
	setReady(s, waiting, false)
	status["currentRevision"], status["updateRevision"] = currentRev, updateRev
	// the status the sync writes, as the API server then holds it
	p := nativePlan(tb, s)
	for _, a := range p.Actions {
		if a.Kind == "StatefulSet" && a.Object["status"] != nil {
			set["status"] = a.Object["status"]
		}
	}
	if p := nativePlan(tb, s); len(p.Actions) != 0 || p.Error != nil {
		tb.Fatalf("the sync of the set mid-rollout does not wait for web-%d: %+v", waiting, p)
	}
	st := set["status"].(map[string]any)
	if st["currentRevision"] != currentRev || st["updateRevision"] != updateRev || fmt.Sprint(st["updatedReplicas"]) != fmt.Sprint(n-waiting) {
		tb.Fatalf("the status mid-rollout is not half rolled (current %s, update %s): %v", currentRev, updateRev, st)
	}
	// with web-(n/2-1) Ready the rollout goes on: the next pod down is deleted to be recreated at the update revision
	setReady(s, waiting, true)
	ready := nativePlan(tb, s)
	setReady(s, waiting, false)
	deletes := 0
	for _, a := range ready.Actions {
		if a.Verb == "delete" && a.Kind == "Pod" {
			deletes++
			if a.Name != fmt.Sprintf("web-%d", waiting-1) {
				tb.Fatalf("once web-%d is Ready the rollout deletes %s, not web-%d: %+v", waiting, a.Name, waiting-1, ready)
			}
		}
	}
	if deletes != 1 || ready.Error != nil {
		tb.Fatalf("once web-%d is Ready the rollout does not delete web-%d alone: %+v", waiting, waiting-1, ready)
	}
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b, s
}

// templateChangedSet is rollingUpdateSnapshot(n) with a uid and a resourceVersion per pod, as BenchmarkSessionOnePodChanged
// sends it: its template changed and its update revision is yet to be created, so every sync plans that.
func templateChangedSet(tb testing.TB, n int) ([]byte, map[string]any) {
	tb.Helper()
	var s map[string]any
	if err := json.Unmarshal(rollingUpdateSnapshot(n), &s); err != nil {
		tb.Fatal(err)
	}
	for i, p := range s["pods"].([]any) {
		md := p.(map[string]any)["metadata"].(map[string]any)
		md["uid"], md["resourceVersion"] = fmt.Sprintf("uid-%d", i), fmt.Sprint(1000+i)
	}
	s["claims"] = []any{}
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b, s
}

// container is the first container of a pod or pod template.
func container(o map[string]any) map[string]any {
	return o["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
}

// setReady marks pod i of s Ready or not (its Ready and ContainersReady conditions, its container's ready).
func setReady(s map[string]any, i int, ready bool) {
	p := s["pods"].([]any)[i].(map[string]any)
	st := p["status"].(map[string]any)
	for _, c := range st["conditions"].([]any) {
		if t := c.(map[string]any)["type"]; t == "Ready" || t == "ContainersReady" {
			c.(map[string]any)["status"] = map[bool]string{true: "True", false: "False"}[ready]
		}
	}
	st["containerStatuses"].([]any)[0].(map[string]any)["ready"] = ready
}

// nativePlan is the native module's plan for s.
func nativePlan(tb testing.TB, s map[string]any) planOf {
	tb.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	var p planOf
	if err := json.Unmarshal(statefulset.Reconcile(b), &p); err != nil {
		tb.Fatal(err)
	}
	return p
}

// heldDelta is the delta snapshot of s in which pod i is gone (gone) or back (the pod of s, under a new
// resourceVersion rv), the rest held.
func heldDelta(tb testing.TB, s map[string]any, i int, gone bool, rv int) []byte {
	tb.Helper()
	pods := s["pods"].([]any)
	pod := pods[i].(map[string]any)
	md := pod["metadata"].(map[string]any)
	d := map[string]any{"abi": 1, "now": s["now"], "statefulSet": s["statefulSet"], "pods": []any{}, "revisions": []any{}, "claims": []any{}}
	counts := map[string]any{"pods": len(pods), "revisions": len(s["revisions"].([]any)), "claims": len(s["claims"].([]any))}
	removed := map[string]any{}
	if gone {
		removed["pods"] = []any{md["uid"]}
		counts["pods"] = len(pods) - 1
	} else {
		md["resourceVersion"] = fmt.Sprint(rv)
		d["pods"] = []any{pod}
	}
	d["delta"] = map[string]any{"removed": removed, "counts": counts}
	b, err := json.Marshal(d)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// A held sync of a 1000-pod set whose delta removes a pod or brings it back (what most syncs of a rollout
// send) allocates little in the module: under TinyGo's leaking collector what a call allocates stays until
// the host recycles the instance, and a recycled instance costs the session the whole set again. The index of
// the pods' names made again on each such sync (through TinyGo's reflective hashing of struct keys), a plan's
// buffer, the set's revision patch and its decoded tree per call made it 63 KiB. The bytes are counted
// exactly, at the guest's allocator (TinyGo's runtime.alloc, named in the module's name section).
func TestHeldSyncAllocatesLittle(t *testing.T) {
	g := newAllocCounter(t, guestWasm(t))
	whole, s := settledSet(t, 1000)
	g.call(whole)
	g.call(heldDelta(t, s, 500, false, 0)) // the instance's first delta sizes its buffers
	const calls = 40
	before := g.bytes
	for k := range calls {
		gone := k%2 == 0
		out := g.call(heldDelta(t, s, 500, gone, 9000+k))
		if bytes.Contains(out, []byte(`"error":`)) || gone != bytes.Contains(out, []byte(`{"verb":"create","kind":"Pod","namespace":"default","name":"web-500"`)) {
			t.Fatalf("a held sync without web-500 creates it, and one with it plans nothing: %.400s", out)
		}
	}
	perCall := float64(g.bytes-before) / calls / 1024
	t.Logf("a held sync allocates %.1f KiB in the module", perCall)
	if perCall > 16 {
		t.Errorf("a held sync that removes or brings back a pod allocates %.1f KiB in the module, more than 16", perCall)
	}
}

// A held sync of a 1000-pod set whose template changed and whose update revision is yet to be created (so
// each sync plans its creation again, until the host's world has it) allocates little in the module too: the
// latest revision's semantic comparison, the proposed revision's data parsed for the create and its template,
// found again on every sync from the same bytes, made it 63 KiB; the instance keeps them (revisionMemo).
func TestTemplateChangedSyncAllocatesLittle(t *testing.T) {
	g := newAllocCounter(t, guestWasm(t))
	whole, s := templateChangedSet(t, 1000)
	g.call(whole)
	g.call(heldDelta(t, s, 0, false, 8000)) // the instance's first delta sizes its buffers
	const calls = 40
	before := g.bytes
	for k := range calls {
		out := g.call(heldDelta(t, s, 0, false, 9000+k))
		if bytes.Contains(out, []byte(`"error":`)) || !bytes.Contains(out, []byte(`{"verb":"create","kind":"ControllerRevision"`)) {
			t.Fatalf("a sync of the changed template does not create its revision: %.400s", out)
		}
	}
	perCall := float64(g.bytes-before) / calls / 1024
	t.Logf("a held sync of a changed template allocates %.1f KiB in the module", perCall)
	if perCall > 16 {
		t.Errorf("a held sync of a changed template allocates %.1f KiB in the module, more than 16", perCall)
	}
}

// A whole 1000-pod snapshot, sent again to the instance that holds it (what a host without sessions sends
// every sync, and a session after a recycled instance), allocates at most 1.75 times its size in the module,
// the buffer the host writes it into included (1.5 times, 3.6 MiB for 2.5 MiB). The duplicate check and the
// names index in maps keyed by a struct (hashed by TinyGo through reflection, boxing every key), a copy of
// each object's text and another of each decoded pod, and the closures the decode read every pod through
// made it 2 times (4.9 MiB).
func TestWholeSnapshotAllocatesLittle(t *testing.T) {
	g := newAllocCounter(t, guestWasm(t))
	whole := rollingUpdateSnapshot(1000)
	g.call(whole) // the instance's first call sizes what it keeps
	before := g.bytes
	if out := g.call(whole); bytes.Contains(out, []byte(`"error":`)) {
		t.Fatalf("the snapshot is refused: %.400s", out)
	}
	ratio := float64(g.bytes-before) / float64(len(whole))
	t.Logf("a whole snapshot of %d KiB allocates %d KiB in the module (%.2fx)", len(whole)/1024, (g.bytes-before)/1024, ratio)
	if ratio > 1.75 {
		t.Errorf("a whole 1000-pod snapshot allocates %.2f times its size in the module, more than 1.75", ratio)
	}
}

// allocCounter runs the module's direct exports on one instance of its own, counting the bytes the guest's
// allocator hands out.
type allocCounter struct {
	tb    testing.TB
	ctx   context.Context
	mod   api.Module
	bytes int64
	found bool
}

func newAllocCounter(tb testing.TB, wasmBytes []byte) *allocCounter {
	tb.Helper()
	g := &allocCounter{tb: tb}
	g.ctx = experimental.WithFunctionListenerFactory(context.Background(), g)
	rt := wazero.NewRuntimeWithConfig(g.ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(4096).WithMemoryCapacityFromMax(true))
	tb.Cleanup(func() { rt.Close(context.Background()) })
	wasi_snapshot_preview1.MustInstantiate(g.ctx, rt)
	cm, err := rt.CompileModule(g.ctx, wasmBytes)
	if err != nil {
		tb.Fatal(err)
	}
	if !g.found {
		tb.Fatal("the module names no runtime.alloc: its allocations cannot be counted")
	}
	env := rt.NewHostModuleBuilder("extism:host/env") // never called by the direct exports
	for _, def := range cm.ImportedFunctions() {
		if m, name, _ := def.Import(); m == "extism:host/env" {
			fail := api.GoModuleFunc(func(context.Context, api.Module, []uint64) { panic("called " + name) })
			env.NewFunctionBuilder().WithGoModuleFunction(fail, def.ParamTypes(), def.ResultTypes()).Export(name)
		}
	}
	if _, err := env.Instantiate(g.ctx); err != nil {
		tb.Fatal(err)
	}
	if g.mod, err = rt.InstantiateModule(g.ctx, cm, wazero.NewModuleConfig().WithStartFunctions("_initialize")); err != nil {
		tb.Fatal(err)
	}
	return g
}

// NewFunctionListener counts the guest's allocator only.
func (g *allocCounter) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if strings.HasSuffix(def.DebugName(), ".runtime.alloc") {
		g.found = true
		return g
	}
	return nil
}

func (g *allocCounter) Before(_ context.Context, _ api.Module, _ api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	g.bytes += int64(uint32(params[0]))
}
func (g *allocCounter) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}
func (g *allocCounter) Abort(context.Context, api.Module, api.FunctionDefinition, error)    {}

// call is one reconcile through ordinal_alloc and ordinal_reconcile; it returns the plan.
func (g *allocCounter) call(snapshot []byte) []byte {
	g.tb.Helper()
	r, err := g.mod.ExportedFunction("ordinal_alloc").Call(g.ctx, uint64(len(snapshot)))
	if err != nil || !g.mod.Memory().Write(uint32(r[0]), snapshot) {
		g.tb.Fatalf("ordinal_alloc: %v", err)
	}
	if r, err = g.mod.ExportedFunction("ordinal_reconcile").Call(g.ctx, r[0], uint64(len(snapshot))); err != nil {
		g.tb.Fatal(err)
	}
	out, ok := g.mod.Memory().Read(uint32(r[0]>>32), uint32(r[0]))
	if !ok {
		g.tb.Fatal("the plan is outside guest memory")
	}
	return bytes.Clone(out)
}

// A held sync of a 1000-pod set whose own status and resourceVersion changed since the instance's last sync
// (a rollout's every status write comes back so, a sync in two) allocates little in the module: the set's
// spec (its template, its claim templates) is the one the instance decoded, only its metadata and status are
// read again, and from their text (12.3 KiB now). Decoding the whole set's tree again, the status's tree, the
// status written grown one member at a time and the claims' objects of the waiting pod made it 20.3 KiB.
func TestStatusChangedSyncAllocatesLittle(t *testing.T) {
	g := newAllocCounter(t, guestWasm(t))
	whole, s := midRolloutSet(t, 1000)
	set := s["statefulSet"].(map[string]any)
	status := set["status"].(map[string]any)
	ready := status["readyReplicas"]
	g.call(whole)
	waiting := 1000/2 - 1
	g.call(heldDelta(t, s, waiting, false, 8000)) // the instance's first delta sizes its buffers
	const calls = 40
	before := g.bytes
	for k := range calls {
		// the status as the sync writes it, then one that is stale (a Ready replica fewer), each under a new resourceVersion
		stale := k%2 == 1
		status["readyReplicas"] = ready
		if stale {
			status["readyReplicas"] = len(s["pods"].([]any)) - 2
		}
		set["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprint(7000 + k)
		out := g.call(heldDelta(t, s, waiting, false, 9000+k))
		if bytes.Contains(out, []byte(`"error":`)) || bytes.Contains(out, []byte(`"kind":"Pod"`)) ||
			stale != bytes.Contains(out, []byte(`"verb":"updateStatus"`)) {
			t.Fatalf("a sync of the set mid-rollout writes the status when it is stale and nothing else (stale %v): %.600s", stale, out)
		}
	}
	perCall := float64(g.bytes-before) / calls / 1024
	t.Logf("a held sync of a set whose status changed allocates %.1f KiB in the module", perCall)
	if perCall > 14 {
		t.Errorf("a held sync of a set whose status changed allocates %.1f KiB in the module, more than 14", perCall)
	}
}

package statefulset

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// snapshotDoc reads a conformance snapshot as generic JSON.
func snapshotDoc(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformanceDir, name+".snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// referenced is the snapshot with each of list's objects replaced by its reference.
func referenced(t *testing.T, s map[string]any, list string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	var refs []any
	for _, o := range s[list].([]any) {
		md := o.(map[string]any)["metadata"].(map[string]any)
		refs = append(refs, map[string]any{"unchanged": map[string]any{"uid": md["uid"], "resourceVersion": md["resourceVersion"]}})
	}
	out[list] = refs
	return out
}

func planCode(t *testing.T, out []byte) (string, string) {
	t.Helper()
	var p struct{ Error *PlanError }
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	if p.Error == nil {
		return "", ""
	}
	return p.Error.Code, p.Error.Path + ": " + p.Error.Message
}

// A snapshot whose pods, revisions and claims are references to the previous call's gets that call's plan,
// byte for byte; the instance then holds them again for the next.
func TestReferencesResolveToThePreviousSnapshotsObjects(t *testing.T) {
	const name = "scale/ordered-vct1-delete-delete-to-2" // pods, revisions and claims
	s := snapshotDoc(t, name)
	want := Reconcile(encode(t, s))
	var c ObjectCache
	if got := ReconcileCached(&c, encode(t, s)); string(got) != string(want) {
		t.Fatalf("first call differs from Reconcile")
	}
	all := referenced(t, referenced(t, referenced(t, s, "pods"), "revisions"), "claims")
	for i := 0; i < 3; i++ {
		if got := ReconcileCached(&c, encode(t, all)); string(got) != string(want) {
			t.Fatalf("call %d by references:\n got  %.300s\n want %.300s", i+2, got, want)
		}
	}
}

// A reference that names no object the instance holds is a StaleReference plan with no action: a wrong
// resourceVersion, a uid two objects shared, an instance whose last snapshot was refused, or no cache at all.
func TestUnresolvableReferencesAreStale(t *testing.T) {
	const name = "scale/ordered-vct1-delete-delete-to-2"
	s := snapshotDoc(t, name)
	refs := referenced(t, s, "pods")

	var c ObjectCache
	ReconcileCached(&c, encode(t, s))
	wrong := referenced(t, s, "pods")
	wrong["pods"].([]any)[0].(map[string]any)["unchanged"].(map[string]any)["resourceVersion"] = "999999999"
	if code, msg := planCode(t, ReconcileCached(&c, encode(t, wrong))); code != CodeStaleReference || !strings.Contains(msg, "pods[0]") {
		t.Errorf("wrong resourceVersion: %s %s", code, msg)
	}

	// two pods with one uid and one resourceVersion: neither can be referenced
	twins := snapshotDoc(t, name)
	pods := twins["pods"].([]any)
	md0, md1 := pods[0].(map[string]any)["metadata"].(map[string]any), pods[1].(map[string]any)["metadata"].(map[string]any)
	md1["uid"], md1["resourceVersion"] = md0["uid"], md0["resourceVersion"]
	c = ObjectCache{}
	ReconcileCached(&c, encode(t, twins))
	if code, _ := planCode(t, ReconcileCached(&c, encode(t, referenced(t, twins, "pods")))); code != CodeStaleReference {
		t.Errorf("a uid and resourceVersion two pods shared resolved: %s", code)
	}

	c = ObjectCache{}
	ReconcileCached(&c, encode(t, s))
	ReconcileCached(&c, []byte(`{"abi":1}`)) // refused: the instance holds nothing now
	if code, _ := planCode(t, ReconcileCached(&c, encode(t, refs))); code != CodeStaleReference {
		t.Errorf("after a refused snapshot: %s", code)
	}
	if code, _ := planCode(t, Reconcile(encode(t, refs))); code != CodeStaleReference {
		t.Errorf("without a cache: %s", code)
	}
	// a reference with anything beside "unchanged" is no reference a host may send
	bad := referenced(t, s, "pods")
	bad["pods"].([]any)[0].(map[string]any)["zzz"] = 1 // after "unchanged": JSON objects are written sorted
	c = ObjectCache{}
	ReconcileCached(&c, encode(t, s))
	if code, msg := planCode(t, ReconcileCached(&c, encode(t, bad))); code != CodeInvalidSnapshot || !strings.Contains(msg, "pods[0]") {
		t.Errorf("a reference with other members: %s %s", code, msg)
	}
}

// Two objects of a list that share a uid (a world whose ids start again: the reference harness's, and the
// replay's tick model, give a rollout's new pods the uids of live old ones) are each found by a reference
// that names its resourceVersion too, and the plan is the whole snapshot's; a third call on the referenced
// snapshot holds them again. No delta builds on such a snapshot.
func TestReferencesToObjectsThatShareAUID(t *testing.T) {
	const name = "scale/ordered-vct1-delete-delete-to-2"
	twins := snapshotDoc(t, name)
	pods := twins["pods"].([]any)
	md0, md1 := pods[0].(map[string]any)["metadata"].(map[string]any), pods[1].(map[string]any)["metadata"].(map[string]any)
	if md0["resourceVersion"] == md1["resourceVersion"] {
		t.Fatal("the case's first two pods have one resourceVersion")
	}
	md1["uid"] = md0["uid"]
	want := Reconcile(encode(t, twins))
	var c ObjectCache
	ReconcileCached(&c, encode(t, twins))
	refs := referenced(t, twins, "pods")
	for i := 0; i < 2; i++ {
		if got := ReconcileCached(&c, encode(t, refs)); string(got) != string(want) {
			t.Fatalf("call %d by references:\n got  %.300s\n want %.300s", i+2, got, want)
		}
	}
	if c.held.complete {
		t.Error("a snapshot with a uid twice is held as complete: a delta could build on it")
	}
}

// A whole snapshot's objects are held where they are, in its input, and the cache says so (the exports then
// give the next call another buffer); a delta's objects are copied out of its input, which the next call
// may write over, and a refused snapshot holds nothing.
func TestWholeSnapshotKeepsItsInput(t *testing.T) {
	in := benchSnapshot(3)
	var c ObjectCache
	ReconcileCached(&c, in)
	if !c.KeepsInput() || len(c.held.pods.order) != 3 {
		t.Fatalf("a whole snapshot: KeepsInput %v, %d pods held", c.KeepsInput(), len(c.held.pods.order))
	}
	for _, h := range c.held.pods.order {
		if !within(string(h.v.src), in) {
			t.Fatalf("the held pod %s is not the input's text", h.v.Meta.Name)
		}
	}
	var whole map[string]any
	if err := json.Unmarshal(in, &whole); err != nil {
		t.Fatal(err)
	}
	delta := onePodChanged(whole, 3)
	if out := ReconcileCached(&c, delta); bytes.Contains(out, []byte(`"error":{`)) {
		t.Fatalf("the delta is refused: %s", out)
	}
	if c.KeepsInput() {
		t.Error("after a delta the cache says it keeps the delta's input")
	}
	for _, h := range c.held.pods.order {
		if within(string(h.v.src), delta) {
			t.Errorf("the held pod %s points into the delta's input", h.v.Meta.Name)
		}
	}
	ReconcileCached(&c, []byte(`{"abi":1}`))
	if c.KeepsInput() {
		t.Error("after a refused snapshot the cache says it keeps its input")
	}
}

// within reports whether s lies in b's memory.
func within(s string, b []byte) bool {
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return len(s) > 0 && p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}

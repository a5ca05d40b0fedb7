package statefulset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

	// two pods with one uid: neither can be referenced
	twins := snapshotDoc(t, name)
	pods := twins["pods"].([]any)
	uid := pods[0].(map[string]any)["metadata"].(map[string]any)["uid"]
	pods[1].(map[string]any)["metadata"].(map[string]any)["uid"] = uid
	c = ObjectCache{}
	ReconcileCached(&c, encode(t, twins))
	if code, _ := planCode(t, ReconcileCached(&c, encode(t, referenced(t, twins, "pods")))); code != CodeStaleReference {
		t.Errorf("a uid two pods shared resolved: %s", code)
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

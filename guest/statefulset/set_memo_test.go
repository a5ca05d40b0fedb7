package statefulset

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// A set whose metadata alone changed keeps its decoded spec (setOf), but not a pass over its whole decode:
// a name taken away under the same spec is refused as a whole snapshot refuses it.
func TestSetMemoStillChecksTheMetadata(t *testing.T) {
	const name = "scale/ordered-vct1-delete-delete-to-2"
	for _, edit := range []struct {
		name string
		f    func(md map[string]any)
	}{
		{"name removed", func(md map[string]any) { delete(md, "name") }},
		{"name emptied", func(md map[string]any) { md["name"] = "" }},
	} {
		s := snapshotDoc(t, name)
		var c ObjectCache
		if code, msg := planCode(t, ReconcileCached(&c, encode(t, s))); code != "" && code != CodeSyncFailed {
			t.Fatalf("%s: %s %s", name, code, msg)
		}
		next := clone(t, s)
		md := next["statefulSet"].(map[string]any)["metadata"].(map[string]any)
		edit.f(md)
		md["resourceVersion"] = "999999" // a status write's new resourceVersion: the same spec, other metadata
		want := Reconcile(encode(t, next))
		for _, in := range [][]byte{encode(t, next), encode(t, deltaOf(t, s, next))} {
			var held ObjectCache
			ReconcileCached(&held, encode(t, s))
			if got := ReconcileCached(&held, in); !bytes.Equal(got, want) {
				t.Errorf("%s: held instance\n got  %.300s\n want %.300s", edit.name, got, want)
			}
		}
	}
}

// editSet changes the set's metadata, status, apiVersion or kind (not its spec): what setOf decodes again
// while it keeps the spec it decoded.
func editSet(r *rand.Rand, s map[string]any, step int) string {
	set, _ := s["statefulSet"].(map[string]any)
	if set == nil {
		return "no set"
	}
	md, _ := set["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	st, _ := set["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
	}
	md["resourceVersion"] = "9" + strconv.Itoa(step)
	switch k := r.IntN(22); k {
	case 0:
		delete(md, "name")
	case 1:
		md["name"] = 5
	case 2:
		md["namespace"] = "other"
	case 3:
		delete(md, "namespace")
	case 4:
		md["labels"] = map[string]any{"x": strconv.Itoa(step)}
	case 5:
		md["annotations"] = map[string]any{"a": strconv.Itoa(step)}
	case 6:
		md["uid"] = "uid-" + strconv.Itoa(step)
	case 7:
		md["generation"] = step + 100
	case 8:
		md["deletionTimestamp"] = "2024-01-01T00:00:00Z"
	case 9:
		set["metadata"] = "x"
		return "metadata not an object"
	case 10:
		st["collisionCount"] = step % 3
	case 11:
		delete(st, "collisionCount")
	case 12:
		st["collisionCount"] = "x"
	case 13:
		st["observedGeneration"] = step
	case 14:
		st["conditions"] = []any{map[string]any{"type": "T", "status": "True", "lastTransitionTime": "nope"}}
	case 15:
		set["status"] = nil
		return "status null"
	case 16:
		set["apiVersion"] = []string{"apps/v1", "apps/v1beta2", "example.com/v1", "bad", ""}[r.IntN(5)]
		return "apiVersion " + set["apiVersion"].(string)
	case 17:
		set["kind"] = []string{"StatefulSet", "Foo", ""}[r.IntN(3)]
		return "kind " + set["kind"].(string)
	case 18:
		st["updateRevision"] = "web-" + strconv.Itoa(step)
	case 19:
		st["currentRevision"] = ""
	case 20:
		md["name"] = "web"
		md["namespace"] = "default"
	case 21:
		set["status"] = []any{}
		return "status a list"
	}
	set["metadata"], set["status"] = md, st
	return "edit " + strconv.Itoa(step)
}

// Random sequences of set edits that leave its spec as it was: a held instance (whole snapshots and deltas)
// plans what a fresh one does, byte for byte.
func TestSetMemoEditsAsWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 29))
	for _, cs := range conformanceSnapshots(t) {
		s := decodeWorld(t, cs.in)
		var whole, delta ObjectCache
		ReconcileCached(&whole, cs.in)
		ReconcileCached(&delta, cs.in)
		prev := s
		var trail []string
		for step := 1; step <= 6; step++ {
			next := clone(t, prev)
			trail = append(trail, editSet(r, next, step))
			heldPlansAreFresh(t, fmt.Sprintf("%s %v", cs.name, trail), &whole, &delta, prev, next)
			prev = next
		}
	}
}

// A revision whose data changes under the same uid and resourceVersion (a hand-made world: the API server
// gives every change a new one), sent whole or in a delta, and the set's template changed and changed back
// around it: a held instance plans what a fresh one does (the memos are the decoded revision's, not the uid's).
func TestRevisionDataChangedUnderTheSameVersion(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 17))
	n := 0
	for _, cs := range conformanceSnapshots(t) {
		s := decodeWorld(t, cs.in)
		if len(listOf(s, "revisions")) == 0 || !holdable(s) {
			continue
		}
		var whole, delta ObjectCache
		ReconcileCached(&whole, cs.in)
		ReconcileCached(&delta, cs.in)
		prev := s
		for step := 1; step <= 4; step++ {
			next := clone(t, prev)
			revs := listOf(next, "revisions")
			changeRevisionData(r, next, revs[r.IntN(len(revs))].(map[string]any))
			if step%2 == 0 {
				if set, _ := next["statefulSet"].(map[string]any); set != nil {
					if spec, _ := set["spec"].(map[string]any); spec != nil {
						if tmpl, _ := spec["template"].(map[string]any); tmpl != nil {
							toggleTemplateAnnotation(tmpl)
						}
					}
				}
			}
			heldPlansAreFresh(t, fmt.Sprintf("%s step %d", cs.name, step), &whole, &delta, prev, next)
			n++
			prev = next
		}
	}
	if n < 100 {
		t.Fatalf("%d steps", n)
	}
}

// heldPlansAreFresh checks that two held instances plan for the world next what a fresh one does: whole, sent
// the whole snapshot, and delta, sent its delta from prev (and the whole one, as a host does, where the
// instance answers StaleReference). what names the case in a failure.
func heldPlansAreFresh(t *testing.T, what string, whole, delta *ObjectCache, prev, next map[string]any) {
	t.Helper()
	want := Reconcile(encode(t, next))
	if got := ReconcileCached(whole, encode(t, next)); !bytes.Equal(got, want) {
		t.Fatalf("%s (whole):\n got  %.400s\n want %.400s", what, got, want)
	}
	got := ReconcileCached(delta, encode(t, deltaOf(t, prev, next)))
	if code, _ := planCode(t, got); code == CodeStaleReference {
		got = ReconcileCached(delta, encode(t, next))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s (delta):\n got  %.400s\n want %.400s", what, got, want)
	}
}

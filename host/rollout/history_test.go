package rollout_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/rollout"
)

// The history of a replayed canary: two revisions, the second changing the image, and the pods at each.
func TestHistoryShowsTemplateChanges(t *testing.T) {
	snap := finalSnapshot(t, "partition-canary")
	h, err := rollout.HistoryOf(snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Revisions) != 2 {
		t.Fatalf("%d revisions, want 2: %+v", len(h.Revisions), h.Revisions)
	}
	a, b := h.Revisions[0], h.Revisions[1]
	if a.Label != "A" || b.Label != "B" || a.Number != 1 || b.Number != 2 || !b.Update || b.Pods != 5 {
		t.Errorf("revisions %+v %+v", a.Revision, b.Revision)
	}
	if len(a.Changes) != 0 || len(b.Changes) != 1 || b.ComparedWith != 1 || b.Changes[0].Path != "spec.containers[nginx].image" ||
		string(b.Changes[0].From) != `"registry.k8s.io/nginx-slim:0.27"` || string(b.Changes[0].To) != `"registry.k8s.io/nginx-slim:0.28"` {
		t.Errorf("changes %+v then %+v (from %d), want none then the image", a.Changes, b.Changes, b.ComparedWith)
	}
	js, err := json.Marshal(b.Changes[0])
	if err != nil || string(js) != `{"path":"spec.containers[nginx].image","from":"registry.k8s.io/nginx-slim:0.27","to":"registry.k8s.io/nginx-slim:0.28"}` {
		t.Errorf("a change as JSON: %s %v (the values are JSON values, not strings holding JSON)", js, err)
	}
	var out bytes.Buffer
	if err := h.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"revisions: A=" + a.Name + " (1) B=" + b.Name + " (2)\n", "B from A:", `~ spec.containers[nginx].image: "registry.k8s.io/nginx-slim:0.27" -> "registry.k8s.io/nginx-slim:0.28"`, "CHANGE-CAUSE"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, out.String())
		}
	}
}

// A revision that carries no template is named, not skipped, and the next one is not diffed against it.
func TestHistoryOfABrokenRevision(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(finalSnapshot(t, "partition-canary"), &s); err != nil {
		t.Fatal(err)
	}
	revs := s["revisions"].([]any)
	revs[0].(map[string]any)["data"] = map[string]any{"not": "a template"}
	b, _ := json.Marshal(s)
	h, err := rollout.HistoryOf(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.Revisions[0].Error == "" || len(h.Revisions[1].Changes) != 0 || h.Revisions[1].ComparedWith != 0 {
		t.Errorf("broken revision: %+v then %+v", h.Revisions[0], h.Revisions[1])
	}
	var out bytes.Buffer
	if err := h.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "B: not compared (revision A holds no template)") {
		t.Errorf("text:\n%s", out.String())
	}
}

// withForgedRevisions is the canary's snapshot with three more revisions the selector matches, each a
// newer number with its own image, none of them the set's: an orphan (no controller), one whose
// ownerReference names the set but not as its controller, and one another set controls.
func withForgedRevisions(t *testing.T) []byte {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(finalSnapshot(t, "partition-canary"), &s); err != nil {
		t.Fatal(err)
	}
	set := s["statefulSet"].(map[string]any)["metadata"].(map[string]any)
	revs := s["revisions"].([]any)
	if len(revs) != 2 || set["uid"] == "" {
		t.Fatalf("the canary's snapshot: %d revisions, set uid %v", len(revs), set["uid"])
	}
	ref := func(uid any, controller bool) []any {
		return []any{map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": set["name"], "uid": uid, "controller": controller}}
	}
	for i, owners := range [][]any{nil, ref(set["uid"], false), ref("another-set", true)} {
		var r map[string]any
		b, _ := json.Marshal(revs[0])
		_ = json.Unmarshal(b, &r)
		m := r["metadata"].(map[string]any)
		m["name"], m["uid"] = fmt.Sprintf("forged-%d", i), fmt.Sprintf("forged-uid-%d", i)
		if owners == nil {
			delete(m, "ownerReferences")
		} else {
			m["ownerReferences"] = owners
		}
		r["revision"] = 3 + i
		tmpl := r["data"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)
		tmpl["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = fmt.Sprintf("evil:%d", i)
		revs = append(revs, r)
	}
	s["revisions"] = revs
	b, _ := json.Marshal(s)
	return b
}

// history and undo count the set's own revisions only, as kubectl's rollout history and undo do
// (metav1.IsControlledBy): a revision the selector matches that the set does not control is neither
// listed nor rolled back to, even with the newest number.
func TestHistoryAndUndoCountOnlyTheSetsRevisions(t *testing.T) {
	snap := withForgedRevisions(t)
	h, err := rollout.HistoryOf(snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Revisions) != 2 || h.Revisions[0].Number != 1 || h.Revisions[1].Number != 2 {
		t.Fatalf("history lists %+v, want the set's revisions 1 and 2 only", h.Revisions)
	}
	p, err := rollout.Undo(snap, "statefulsets.apps", 0)
	if err != nil || p.Done != "rolled back" || !strings.Contains(string(p.Data), "nginx-slim:0.27") {
		t.Fatalf("undo to the previous revision: %q %s %v, want revision 1's template (0.27)", p.Done, p.Data, err)
	}
	for _, n := range []int64{3, 4, 5} {
		if p, err := rollout.Undo(snap, "statefulsets.apps", n); err == nil || err.Error() != fmt.Sprintf("unable to find specified revision %d in history", n) {
			t.Errorf("undo to revision %d, not the set's: %q %s %v", n, p.Done, p.Data, err)
		}
	}
}

package rollout_test

import (
	"bytes"
	"encoding/json"
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
	want := rollout.Change{Path: "spec.containers[nginx].image", From: `"registry.k8s.io/nginx-slim:0.27"`, To: `"registry.k8s.io/nginx-slim:0.28"`}
	if len(a.Changes) != 0 || len(b.Changes) != 1 || b.Changes[0] != want {
		t.Errorf("changes %+v then %+v, want none then %+v", a.Changes, b.Changes, want)
	}
	var out bytes.Buffer
	if err := h.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2 (B) from 1 (A):", `~ spec.containers[nginx].image: "registry.k8s.io/nginx-slim:0.27" -> "registry.k8s.io/nginx-slim:0.28"`, "CHANGE-CAUSE"} {
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
	if h.Revisions[0].Error == "" || len(h.Revisions[1].Changes) != 0 {
		t.Errorf("broken revision: %+v then %+v", h.Revisions[0], h.Revisions[1])
	}
}

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
	if a.Label != "1" || b.Label != "2" || a.Number != 1 || b.Number != 2 || !b.Update || b.Pods != 5 {
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
	for _, s := range []string{"2 from 1:", `~ spec.containers[nginx].image: "registry.k8s.io/nginx-slim:0.27" -> "registry.k8s.io/nginx-slim:0.28"`, "CHANGE-CAUSE"} {
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
	if !strings.Contains(out.String(), "2: not compared (revision 1 holds no template)") {
		t.Errorf("text:\n%s", out.String())
	}
}

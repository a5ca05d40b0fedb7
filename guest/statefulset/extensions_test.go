package statefulset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// annotate sets the set's annotation key to value in a snapshot (nil: the snapshot has no set metadata).
func annotate(t *testing.T, snapshot []byte, key, value string) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(snapshot, &v); err != nil {
		t.Fatal(err)
	}
	set, _ := v["statefulSet"].(map[string]any)
	md, _ := set["metadata"].(map[string]any)
	if md == nil {
		return nil // a malformed case: nothing to annotate
	}
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann[key] = value
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withoutKey drops every object member named key (a revision copies the set's annotations).
func withoutKey(t *testing.T, b []byte, key string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, key)
			if a, ok := x["annotations"].(map[string]any); ok && len(a) == 1 && a[key] != nil {
				delete(x, "annotations") // the set had no other annotation
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	out, _ := json.Marshal(v)
	return out
}

type planActions struct {
	Actions []struct{ Verb, Kind string }
	Events  []struct{ Type, Reason, Message string }
	Error   *struct{ Code string }
}

// Every conformance case with the set paused (ordinal.dev/paused: "true"). The faithful module (this
// package without build tags) ignores the annotation: upstream's plan, but for the annotation a new
// revision copies from the set. The extended module (go test -tags ordinal_extended, make test runs both)
// writes no pod and no claim, only revisions and the status, and says what it holds back.
func TestPauseExtension(t *testing.T) {
	snaps, _ := filepath.Glob(filepath.Join(conformanceDir, "*", "*.snapshot.json"))
	if len(snaps) == 0 {
		t.Fatal("no conformance cases under " + conformanceDir)
	}
	held, events := 0, 0
	for _, sp := range snaps {
		name := strings.TrimSuffix(strings.TrimPrefix(sp, conformanceDir+"/"), ".snapshot.json")
		in, err := os.ReadFile(sp)
		if err != nil {
			t.Fatal(err)
		}
		paused := annotate(t, in, annotationPaused, "true")
		if paused == nil {
			continue
		}
		got, want := Reconcile(paused), Reconcile(in)
		if !extendedBuild {
			if d := diffJSON(withoutKey(t, want, annotationPaused), withoutKey(t, got, annotationPaused)); d != "" {
				t.Errorf("%s: the faithful module's plan changed with %s:\n%s", name, annotationPaused, d)
			}
			continue
		}
		var p, up planActions
		if err := json.Unmarshal(got, &p); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(want, &up)
		for _, a := range p.Actions {
			if a.Kind == kindPod || a.Kind == kindPVC {
				t.Errorf("%s: a paused set's plan writes %s %s", name, a.Verb, a.Kind)
			}
		}
		for _, a := range up.Actions {
			if a.Kind == kindPod || a.Kind == kindPVC {
				held++
				break
			}
		}
		for _, e := range p.Events {
			if e.Reason == "Paused" {
				events++
				if !strings.Contains(e.Message, "no pod is created, deleted or updated") {
					t.Errorf("%s: Paused event %q", name, e.Message)
				}
			}
		}
	}
	if extendedBuild && (held < 20 || events < held/2) {
		t.Errorf("only %d cases whose pod writes the pause held back, %d Paused events: the test proves little", held, events)
	}
}

// Describe lists the extensions in the extended module only.
func TestDescribeExtensions(t *testing.T) {
	var d struct {
		ModuleVersion string
		Extensions    []struct{ Name, Annotation, UpstreamIssue string }
	}
	if err := json.Unmarshal(Describe(), &d); err != nil {
		t.Fatal(err)
	}
	if !extendedBuild {
		if d.Extensions != nil || strings.Contains(d.ModuleVersion, "+extended") {
			t.Errorf("the faithful module describes %+v (%s)", d.Extensions, d.ModuleVersion)
		}
		return
	}
	if len(d.Extensions) != len(extensions) || d.Extensions[0].Name != "pause" || d.Extensions[0].Annotation != annotationPaused ||
		!strings.HasSuffix(d.ModuleVersion, "+extended") {
		t.Errorf("the extended module describes %+v (%s)", d.Extensions, d.ModuleVersion)
	}
}

package statefulset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
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
	snaps := conformanceSnapshots(t)
	held, events := 0, 0
	for _, c := range snaps {
		name, in := c.name, c.in
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
	// the contract hosts read (abi) names the annotations the module reads
	want := map[string]string{"pause": abi.AnnotationPaused, "recover-stuck": abi.AnnotationRecoverStuckAfter,
		"reserve-ordinals": abi.AnnotationReserveOrdinals, "resize-claims": abi.AnnotationResizeClaims,
		"progress-deadline": abi.AnnotationProgressDeadlineSeconds, "in-place-update": abi.AnnotationPodUpdatePolicy}
	if len(d.Extensions) != len(want) || !strings.HasSuffix(d.ModuleVersion, "+extended") {
		t.Errorf("the extended module describes %+v (%s)", d.Extensions, d.ModuleVersion)
	}
	for _, e := range d.Extensions {
		if want[e.Name] != e.Annotation || !strings.HasPrefix(e.UpstreamIssue, "kubernetes/kubernetes#") {
			t.Errorf("extension %+v: want annotation %q (abi)", e, want[e.Name])
		}
	}
}

// stuckSnapshot is a rolling update (5 pods at the old revision, a new template) whose web-1 has not been
// Ready since an hour before the snapshot's now: upstream waits for it forever (OrderedReady).
func stuckSnapshot(t *testing.T, recoverAfter string) []byte {
	t.Helper()
	in, err := os.ReadFile(filepath.Join(conformanceDir, "rolling-update", "ordered-p0-mu-unset.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(in, &v); err != nil {
		t.Fatal(err)
	}
	now, _ := time.Parse(time.RFC3339, v["now"].(string))
	p := v["pods"].([]any)[1].(map[string]any)
	if p["metadata"].(map[string]any)["name"] != "web-1" {
		t.Fatal("the case changed: pods[1] is not web-1")
	}
	for _, c := range p["status"].(map[string]any)["conditions"].([]any) {
		c := c.(map[string]any)
		if c["type"] == "Ready" || c["type"] == "ContainersReady" {
			c["status"] = "False"
			c["lastTransitionTime"] = now.Add(-time.Hour).Format(time.RFC3339)
		}
	}
	out, _ := json.Marshal(v)
	if recoverAfter != "" {
		out = annotate(t, out, annotationRecoverStuckAfter, recoverAfter)
	}
	return out
}

type stuckPlan struct {
	Actions []struct{ Verb, Kind, Name string }
	Events  []struct{ Type, Reason, Message string }
	Requeue float64 `json:"requeueAfterSeconds"`
}

func decodeStuckPlan(t *testing.T, b []byte) stuckPlan {
	t.Helper()
	var p stuckPlan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// Extension recover-stuck (kubernetes/kubernetes#67250): a pod not at the update revision and not Ready for
// longer than ordinal.dev/recover-stuck-after is deleted (the highest such ordinal, one per sync) so it comes
// back at the update revision; before then the plan asks for a sync when it will be due; a bad value is a
// warning and no recovery. The faithful module ignores the annotation.
func TestRecoverStuckExtension(t *testing.T) {
	base := Reconcile(stuckSnapshot(t, ""))
	podWrites := func(p stuckPlan) []string {
		var out []string
		for _, a := range p.Actions {
			if a.Kind == kindPod || a.Kind == kindPVC {
				out = append(out, a.Verb+" "+a.Kind+" "+a.Name)
			}
		}
		return out
	}
	if w := podWrites(decodeStuckPlan(t, base)); len(w) != 0 {
		t.Fatalf("upstream writes %v for the stuck rollout: the case no longer shows the trap", w)
	}
	for _, tc := range []struct {
		after       string
		wantDelete  bool
		wantRequeue float64
		wantEvent   string
	}{
		{"10m", true, 0, "Normal RecoveredStuckPod"},
		{"2h", false, 3600, ""},
		{"soon", false, 0, "Warning InvalidAnnotation"},
		{"-5m", false, 0, "Warning InvalidAnnotation"},
	} {
		got := Reconcile(stuckSnapshot(t, tc.after))
		if !extendedBuild {
			if d := diffJSON(withoutKey(t, base, annotationRecoverStuckAfter), withoutKey(t, got, annotationRecoverStuckAfter)); d != "" {
				t.Errorf("%s: the faithful module's plan changed:\n%s", tc.after, d)
			}
			continue
		}
		p := decodeStuckPlan(t, got)
		w := podWrites(p)
		if tc.wantDelete && (len(w) != 1 || w[0] != "delete Pod web-1") {
			t.Errorf("%s: pod writes %v, want web-1 deleted alone", tc.after, w)
		}
		if !tc.wantDelete && len(w) != 0 {
			t.Errorf("%s: pod writes %v, want none", tc.after, w)
		}
		if tc.wantRequeue > 0 && (p.Requeue < tc.wantRequeue-1 || p.Requeue > tc.wantRequeue+1) {
			t.Errorf("%s: requeueAfterSeconds %v, want %v (when web-1 is due)", tc.after, p.Requeue, tc.wantRequeue)
		}
		found := tc.wantEvent == ""
		for _, e := range p.Events {
			if e.Type+" "+e.Reason == tc.wantEvent {
				found = true
				if tc.wantDelete && !strings.Contains(e.Message, "web-1") {
					t.Errorf("%s: event %q does not name the pod", tc.after, e.Message)
				}
			}
		}
		if !found {
			t.Errorf("%s: events %+v, want %s", tc.after, p.Events, tc.wantEvent)
		}
	}
}

// Regression (issue 32, finding 5): ordinal.dev/paused: "True" (or yes, 1, " true") silently did not
// pause, where the other extensions warn of a value they cannot read. A value other than "true" or
// "false" now holds every pod write, as an invalid reserve-ordinals does, with a Warning InvalidAnnotation
// naming it; "false" is upstream's plan. The faithful module ignores the annotation whatever its value.
func TestInvalidPausedValueWarnsAndHoldsPodWrites(t *testing.T) {
	snaps := conformanceSnapshots(t)
	held := 0
	for _, value := range []string{"True", "yes", "1", " true", "false"} {
		for _, c := range snaps {
			in := annotate(t, c.in, annotationPaused, value)
			if in == nil {
				continue
			}
			got, want := Reconcile(in), Reconcile(c.in)
			if !extendedBuild || value == "false" {
				if d := diffJSON(withoutKey(t, want, annotationPaused), withoutKey(t, got, annotationPaused)); d != "" {
					t.Errorf("%s with %s %q: the plan changed:\n%s", c.name, annotationPaused, value, d)
				}
				continue
			}
			var p, up planActions
			if err := json.Unmarshal(got, &p); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal(want, &up)
			if p.Error != nil {
				continue // a snapshot the module refuses: no sync, no event
			}
			for _, a := range p.Actions {
				if (a.Kind == kindPod || a.Kind == kindPVC) && a.Verb != "patch" { // adoption goes on, as reserve-ordinals'
					t.Errorf("%s with %s %q: the plan writes %s %s", c.name, annotationPaused, value, a.Verb, a.Kind)
				}
			}
			for _, a := range up.Actions {
				if (a.Kind == kindPod || a.Kind == kindPVC) && a.Verb != "patch" {
					held++
					break
				}
			}
			warned := false
			for _, e := range p.Events {
				warned = warned || e.Type == "Warning" && e.Reason == "InvalidAnnotation" &&
					strings.HasPrefix(e.Message, annotationPaused+": "+strconv.Quote(value)+` is neither "true" nor "false"`)
			}
			if !warned {
				t.Errorf("%s with %s %q: events %+v, want a Warning InvalidAnnotation naming the value", c.name, annotationPaused, value, p.Events)
			}
		}
	}
	if extendedBuild && held < 80 {
		t.Errorf("only %d plans whose pod writes the invalid value held back: the test proves little", held)
	}
}

// Regression (hostile probe of in-place-update): an extension's enum annotation with an empty value (a Helm
// value left unset renders as "") is the default, as no annotation is: pod-update-policy "" and paused ""
// held every pod write with a Warning InvalidAnnotation, resize-claims "" and on-progress-deadline "" warned.
// Every conformance case's plan with the empty value equals its plan without the annotation, in both builds.
func TestEmptyEnumAnnotationIsTheDefault(t *testing.T) {
	snaps := conformanceSnapshots(t)
	for _, c := range []struct{ key, base, baseValue string }{
		{key: annotationPodUpdatePolicy},
		{key: annotationPaused},
		{key: annotationResizeClaims},
		{key: annotationOnProgressDeadline},
		{key: annotationOnProgressDeadline, base: annotationProgressDeadline, baseValue: "600"},
	} {
		compared := 0
		for _, s := range snaps {
			in := s.in
			if c.base != "" {
				if in = annotate(t, in, c.base, c.baseValue); in == nil {
					continue
				}
			}
			empty := annotate(t, in, c.key, "")
			if empty == nil {
				continue
			}
			if d := diffJSON(Reconcile(in), withoutKey(t, Reconcile(empty), c.key)); d != "" {
				t.Fatalf("%s with %s %q (and %s %q): the plan differs from the plan without it:\n%s", s.name, c.key, "", c.base, c.baseValue, d)
			}
			compared++
		}
		if compared < 1000 {
			t.Errorf("%s: only %d cases compared", c.key, compared)
		}
	}
}

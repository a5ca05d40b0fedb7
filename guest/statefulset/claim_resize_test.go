package statefulset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resizeSnapshot is four Ready pods web-0..3 of a steady set of 4 replicas whose claim template asks for
// 2Gi; claims maps a claim name to its [request, capacity, phase] ("" leaves a field out).
func resizeSnapshot(t *testing.T, annotations map[string]string, claims map[string][3]string) []byte {
	t.Helper()
	in, err := os.ReadFile(filepath.Join(conformanceDir, "scale", "ordered-vct1-delete-delete-to-2.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(in, &v); err != nil {
		t.Fatal(err)
	}
	set := v["statefulSet"].(map[string]any)
	spec := set["spec"].(map[string]any)
	spec["replicas"] = 4
	tmpl := spec["volumeClaimTemplates"].([]any)[0].(map[string]any)
	tmpl["spec"].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"storage": "2Gi"}}
	ann := map[string]any{}
	for k, a := range annotations {
		ann[k] = a
	}
	set["metadata"].(map[string]any)["annotations"] = ann
	for _, c := range v["claims"].([]any) {
		c := c.(map[string]any)
		f, ok := claims[c["metadata"].(map[string]any)["name"].(string)]
		if !ok {
			f = [3]string{"1Gi", "1Gi", "Bound"}
		}
		c["spec"].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"storage": f[0]}}
		st := map[string]any{}
		if f[1] != "" {
			st["capacity"] = map[string]any{"storage": f[1]}
		}
		if f[2] != "" {
			st["phase"] = f[2]
		}
		c["status"] = st
	}
	out, _ := json.Marshal(v)
	return out
}

// Extension resize-claims: one ordinal at a time from the highest, each once the one before is expanded;
// never a shrink, never an unbound claim; the faithful module, a set without the annotation and a paused
// set patch nothing.
func TestResizeClaimsExtension(t *testing.T) {
	on := map[string]string{annotationResizeClaims: "true"}
	grown := [3]string{"2Gi", "2Gi", "Bound"}
	for _, tc := range []struct {
		name   string
		ann    map[string]string
		claims map[string][3]string
		want   string // the claim patched ("" none)
	}{
		{"the highest ordinal first", on, nil, "data-web-3"},
		{"waits while it expands", on, map[string][3]string{"data-web-3": {"2Gi", "1Gi", "Bound"}}, ""},
		{"then the next", on, map[string][3]string{"data-web-3": grown}, "data-web-2"},
		{"capacity not reported yet: the next", on, map[string][3]string{"data-web-3": {"2048Mi", "", "Bound"}}, "data-web-2"},
		{"an unbound claim is skipped", on, map[string][3]string{"data-web-3": {"1Gi", "", "Pending"}}, "data-web-2"},
		{"never a shrink", on, map[string][3]string{"data-web-3": {"3Gi", "3Gi", "Bound"}, "data-web-2": grown, "data-web-1": grown, "data-web-0": {"2.5Gi", "2.5Gi", "Bound"}}, ""},
		{"all grown: nothing", on, map[string][3]string{"data-web-3": grown, "data-web-2": grown, "data-web-1": grown, "data-web-0": grown}, ""},
		{"off without the annotation", nil, nil, ""},
		{"off unless true", map[string]string{annotationResizeClaims: "yes"}, nil, ""},
		{"paused", map[string]string{annotationResizeClaims: "true", annotationPaused: "true"}, nil, ""},
	} {
		p := decodeStuckPlan(t, Reconcile(resizeSnapshot(t, tc.ann, tc.claims)))
		var patched []string
		for _, a := range p.Actions {
			if a.Kind == kindPVC || a.Kind == kindPod {
				patched = append(patched, a.Verb+" "+a.Name)
			}
		}
		want := ""
		if tc.want != "" && extendedBuild {
			want = "patch " + tc.want
		}
		if strings.Join(patched, "; ") != want {
			t.Errorf("%s: writes %v, want %q", tc.name, patched, want)
			continue
		}
		if want != "" {
			found := false
			for _, e := range p.Events {
				found = found || e.Reason == "ResizeClaim" && strings.Contains(e.Message, tc.want+" of Pod web-") && strings.Contains(e.Message, "to 2Gi")
			}
			if !found {
				t.Errorf("%s: events %+v, want a ResizeClaim event naming %s", tc.name, p.Events, tc.want)
			}
		}
	}
}

// The patch is a strategic merge patch of the storage request alone, with the claim's uid as the
// precondition.
func TestResizeClaimsPatch(t *testing.T) {
	if !extendedBuild {
		t.Skip("the extended module's")
	}
	var p struct {
		Actions []struct {
			Verb, Kind, Name, PatchType string
			Patch                       json.RawMessage
		}
	}
	if err := json.Unmarshal(Reconcile(resizeSnapshot(t, map[string]string{annotationResizeClaims: "true"}, nil)), &p); err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"uid":"00000000-0000-4000-8000-000000000008"},"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`
	last := p.Actions[len(p.Actions)-1] // after the status: a refused resize holds back nothing else
	if string(last.Patch) != want || last.PatchType != patchTypeSMP || last.Name != "data-web-3" {
		t.Fatalf("last action %s %s %s, want the patch %s", last.Verb, last.Name, last.Patch, want)
	}
}

// Two templates with one name: the last one's request, as for the claims upstream creates, in one patch.
func TestResizeClaimsDuplicateTemplate(t *testing.T) {
	var v map[string]any
	if err := json.Unmarshal(resizeSnapshot(t, map[string]string{annotationResizeClaims: "true"}, nil), &v); err != nil {
		t.Fatal(err)
	}
	spec := v["statefulSet"].(map[string]any)["spec"].(map[string]any)
	first := map[string]any{"metadata": map[string]any{"name": "data"}, "spec": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "3Gi"}}}}
	spec["volumeClaimTemplates"] = append([]any{first}, spec["volumeClaimTemplates"].([]any)...)
	in, _ := json.Marshal(v)
	var p struct {
		Actions []struct {
			Verb, Kind, Name string
			Patch            json.RawMessage
		}
	}
	if err := json.Unmarshal(Reconcile(in), &p); err != nil {
		t.Fatal(err)
	}
	var patches []string
	for _, a := range p.Actions {
		if a.Verb == verbPatch {
			patches = append(patches, a.Name+" "+string(a.Patch))
		}
	}
	want := []string{`data-web-3 {"metadata":{"uid":"00000000-0000-4000-8000-000000000008"},"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`}
	if !extendedBuild {
		want = nil
	}
	if strings.Join(patches, "\n") != strings.Join(want, "\n") {
		t.Errorf("patches %q, want %q", patches, want)
	}
}

// A set of millions of replicas costs the extension its claims, not its slots.
func TestResizeClaimsLargeSet(t *testing.T) {
	var v map[string]any
	if err := json.Unmarshal(resizeSnapshot(t, map[string]string{annotationResizeClaims: "true", annotationReserveOrdinals: "10-20,30-40"}, nil), &v); err != nil {
		t.Fatal(err)
	}
	v["statefulSet"].(map[string]any)["spec"].(map[string]any)["replicas"] = 4000000
	in, _ := json.Marshal(v)
	var p stuckPlan
	if err := json.Unmarshal(Reconcile(in), &p); err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Actions {
		if a.Verb == verbPatch && (!extendedBuild || a.Name != "data-web-3") {
			t.Errorf("patch %s", a.Name)
		}
	}
}

// A resize-claims value other than "true" or "false" ("True", "yes", "1") resizes nothing and says so, as
// the other extensions warn of a value they cannot read; the faithful module ignores it.
func TestResizeClaimsInvalidValueWarns(t *testing.T) {
	for _, v := range []string{"True", "yes", "1", "false"} {
		p := decodeDeadlinePlan(t, Reconcile(resizeSnapshot(t, map[string]string{annotationResizeClaims: v}, nil)))
		for _, a := range p.Actions {
			if a.Kind == kindPVC && a.Verb == verbPatch {
				t.Errorf("%q: claim %s patched", v, a.Name)
			}
		}
		if want := extendedBuild && v != "false"; p.hasEvent("Warning InvalidAnnotation") != want {
			t.Errorf("%q: events %+v, want an InvalidAnnotation warning: %v", v, p.Events, want)
		}
	}
}

// A template's storage request the extension cannot read ("1e30", "-1Gi", "lots") resizes no claim and says
// so in a Warning naming the template, its claims and the quantity; a readable one warns of nothing. The
// faithful module ignores the annotation.
func TestResizeClaimsUnreadableTemplateSizeWarns(t *testing.T) {
	for size, why := range map[string]string{"1e30": "larger than 2^63-1", "-1Gi": "negative", "lots": "not a quantity", "2Gi": ""} {
		var v map[string]any
		if err := json.Unmarshal(resizeSnapshot(t, map[string]string{annotationResizeClaims: "true"}, nil), &v); err != nil {
			t.Fatal(err)
		}
		tmpl := v["statefulSet"].(map[string]any)["spec"].(map[string]any)["volumeClaimTemplates"].([]any)[0].(map[string]any)
		tmpl["spec"].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"storage": size}}
		in, _ := json.Marshal(v)
		p := decodeDeadlinePlan(t, Reconcile(in))
		var warnings []string
		for _, e := range p.Events {
			if e.Type == eventWarning {
				warnings = append(warnings, e.Reason+": "+e.Message)
			}
		}
		want := []string{}
		if why != "" && extendedBuild {
			want = append(want, `InvalidClaimSize: volumeClaimTemplate data requests storage "`+size+`" (`+why+`): claims data-web-N are not resized (ordinal.dev/resize-claims: "true")`)
		}
		if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q: warnings %q, want %q", size, warnings, want)
		}
		for _, a := range p.Actions {
			if a.Kind == kindPVC && a.Verb == verbPatch && why != "" {
				t.Errorf("%q: claim %s patched", size, a.Name)
			}
		}
	}
}

package firewall_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// rollbackSnapshot is a conformance case's snapshot mid-rollout (status: current revision the case's one,
// update revision another) with the set's annotations, and the current revision's template.
func rollbackSnapshot(t *testing.T, annotations map[string]string) ([]byte, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "conformance", "cases", "rolling-update", "ordered-p0-mu-unset.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	set := v["statefulSet"].(map[string]any)
	md := set["metadata"].(map[string]any)
	ann := map[string]any{}
	for k, a := range annotations {
		ann[k] = a
	}
	md["annotations"] = ann
	set["status"].(map[string]any)["updateRevision"] = "web-broken"
	tmpl := map[string]any{}
	for k, x := range v["revisions"].([]any)[0].(map[string]any)["data"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any) {
		if k != "$patch" {
			tmpl[k] = x
		}
	}
	out, _ := json.Marshal(v)
	return out, tmpl
}

func rollbackAction(t *testing.T, patchType string, ops ...map[string]any) abi.Action {
	t.Helper()
	p, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	return abi.Action{Verb: abi.VerbPatch, Kind: abi.KindStatefulSet, Namespace: "default", Name: "web", PatchType: patchType, Patch: p}
}

// Extension progress-deadline's rollback is the one write of the set besides its status: a JSON patch that
// tests the snapshot's generation and puts back the current revision's own template, on a set that asks for
// it; any other patch of the set is refused.
func TestSetRollbackPatch(t *testing.T) {
	on := map[string]string{abi.AnnotationProgressDeadlineSeconds: "30", abi.AnnotationOnProgressDeadline: "Rollback"}
	snap, tmpl := rollbackSnapshot(t, on)
	const jp = "application/json-patch+json"
	test := func(gen any) map[string]any {
		return map[string]any{"op": "test", "path": "/metadata/generation", "value": gen}
	}
	replace := func(path string, v any) map[string]any {
		return map[string]any{"op": "replace", "path": path, "value": v}
	}
	other := map[string]any{}
	b, _ := json.Marshal(tmpl)
	_ = json.Unmarshal([]byte(strings.Replace(string(b), "nginx-slim:0.27", "nginx-slim:0.99", 1)), &other)

	for _, tc := range []struct {
		name    string
		snap    []byte
		action  abi.Action
		refused firewall.Rule
	}{
		{"the rollback", snap, rollbackAction(t, jp, test(2), replace("/spec/template", tmpl)), ""},
		{"another generation", snap, rollbackAction(t, jp, test(1), replace("/spec/template", tmpl)), firewall.RulePatch},
		{"no test", snap, rollbackAction(t, jp, replace("/spec/template", tmpl)), firewall.RulePatch},
		{"a template the set never ran", snap, rollbackAction(t, jp, test(2), replace("/spec/template", other)), firewall.RulePatch},
		{"the replicas", snap, rollbackAction(t, jp, test(2), replace("/spec/replicas", 9)), firewall.RulePatch},
		{"one more operation", snap, rollbackAction(t, jp, test(2), replace("/spec/template", tmpl), replace("/spec/replicas", 9)), firewall.RulePatch},
		{"a merge patch", snap, rollbackAction(t, "application/merge-patch+json", test(2), replace("/spec/template", tmpl)), firewall.RulePatch},
		{"without the annotations", func() []byte { s, _ := rollbackSnapshot(t, nil); return s }(), rollbackAction(t, jp, test(2), replace("/spec/template", tmpl)), firewall.RuleKindVerb},
		{"on Pause", func() []byte {
			s, _ := rollbackSnapshot(t, map[string]string{abi.AnnotationProgressDeadlineSeconds: "30", abi.AnnotationOnProgressDeadline: "Pause"})
			return s
		}(), rollbackAction(t, jp, test(2), replace("/spec/template", tmpl)), firewall.RuleKindVerb},
	} {
		scope, err := firewall.ScopeFromSnapshot(tc.snap)
		if err != nil {
			t.Fatal(err)
		}
		err = firewall.Check(scope, &abi.Plan{ABI: 1, Actions: []abi.Action{tc.action}})
		var refused *firewall.RefusedError
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refused != "" && (!errors.As(err, &refused) || refused.Rules()[0] != tc.refused):
			t.Errorf("%s: %v, want refused by rule %s", tc.name, err, tc.refused)
		}
	}
	other2 := rollbackAction(t, jp, test(2), replace("/spec/template", tmpl))
	other2.Name = "db"
	scope, _ := firewall.ScopeFromSnapshot(snap)
	if err := firewall.Check(scope, &abi.Plan{ABI: 1, Actions: []abi.Action{other2}}); err == nil {
		t.Error("a rollback patch of another set was allowed")
	}
}

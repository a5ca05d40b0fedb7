package kube

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
)

func fieldStrings(us []fieldcheck.Unknown) string {
	var s []string
	for _, u := range us {
		s = append(s, u.String())
	}
	return strings.Join(s, "\n")
}

// Each kind the host reads is checked against its own Go type, with the field meant.
func TestUnknownFieldsByKind(t *testing.T) {
	for _, c := range []struct{ kind, obj, want string }{
		{"StatefulSet", `{"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"podManagmentPolicy":"Parallel"}}`,
			"spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?"},
		// apps/v1's status has no selector; Ordinal's kind (host/crd) has.
		{"StatefulSet", `{"apiVersion":"apps/v1","status":{"selector":"app=web"}}`, "status.selector: unknown field"},
		{"StatefulSet", `{"apiVersion":"ordinal.dev/v1","status":{"selector":"app=web","replica":1}}`,
			"status.replica: unknown field; did you mean replicas?"},
		{"Pod", `{"spec":{"nodeNme":"a","containers":[{"name":"a","imagePullPolicyy":"Always"}]}}`,
			"spec.nodeNme: unknown field; did you mean nodeName?\nspec.containers[0].imagePullPolicyy: unknown field; did you mean imagePullPolicy?"},
		{"PersistentVolumeClaim", `{"spec":{"storageClasName":"x"}}`, "spec.storageClasName: unknown field; did you mean storageClassName?"},
		{"ControllerRevision", `{"data":{"anything":1},"revison":2}`, "revison: unknown field; did you mean revision?"},
		{"PodDisruptionBudget", `{"spec":{"minAvailabe":1}}`, "spec.minAvailabe: unknown field; did you mean minAvailable?"},
		{"Node", `{"metadata":{"lables":{}}}`, "metadata.lables: unknown field; did you mean labels?"},
		{"Service", `{"spec":{"anything":1}}`, ""}, // a kind the host does not read
		// does not decode (the value is refused in other words, by the module or the API server), and its
		// fields are judged by their names alone: a wrong value hides no misspelt field beside it
		{"Pod", `{"spec":{"nodeNme":"a","priority":"high"}}`, "spec.nodeNme: unknown field; did you mean nodeName?"},
		{"Pod", `{"spec":{"nodeName":"a"}}`, ""},
	} {
		if got := fieldStrings(UnknownFields(c.kind, []byte(c.obj))); got != c.want {
			t.Errorf("%s %s:\n got %q\nwant %q", c.kind, c.obj, got, c.want)
		}
	}
}

// No false positives: kube-apiserver v1.37's own answers (testdata/apiserver-defaults, every field it
// stores) and the manifests it accepted have no field UnknownFields calls unknown.
func TestUnknownFieldsNoneInWhatKubeAPIServerStored(t *testing.T) {
	for _, fx := range kubetest.Fixtures(t, fixturesDir) {
		for which, o := range map[string]any{"input": fx.Input, "answer": fx.Answer} {
			b, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			if us := UnknownFields(fx.Kind, b); len(us) > 0 {
				t.Errorf("%s %s: %s", fx.Name, which, fieldStrings(us))
			}
		}
	}
}

// A checker decodes one object per shape, and still finds the unknown field of an object shaped otherwise.
func TestFieldCheckerShapes(t *testing.T) {
	var c FieldChecker
	pod := func(name, extra string) []byte {
		return []byte(`{"metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"a","image":"x"}]` + extra + `}}`)
	}
	for i, want := range []string{"", "", "spec.nodeNme: unknown field; did you mean nodeName?", ""} {
		extra := ""
		if i == 2 {
			extra = `,"nodeNme":"n"`
		}
		if got := fieldStrings(c.UnknownFields("Pod", pod("web-"+string(rune('0'+i)), extra))); got != want {
			t.Errorf("pod %d: %q, want %q", i, got, want)
		}
	}
	// The same keys under another kind are that kind's question.
	if got := fieldStrings(c.UnknownFields("PersistentVolumeClaim", pod("web-0", ""))); !strings.Contains(got, "spec.containers: unknown field") {
		t.Errorf("a pod's shape read as a claim: %q", got)
	}
}

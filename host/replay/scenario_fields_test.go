package replay

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

const fieldsScenario = `name: fields
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default, labels: {app: web}}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: a, image: x}]}
events:
  - settled: true
    set: {"spec.template.spec.containers[0].image": x1}
`

// A misspelt key of the scenario itself is an error naming it and the key meant, wherever it is: a
// misspelt event would otherwise do nothing.
func TestScenarioUnknownKeysAreErrors(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"events:", "evnts:", "evnts: unknown field; did you mean events?"},
		{"  - settled: true", "  - setled: true", "events[0].setled: unknown field; did you mean settled?"},
		{"name: fields", "name: fields\nkubelet: {readyDelya: 1s}\nlimits: {step: 3}", "2 unknown fields:\n  kubelet.readyDelya: unknown field; did you mean readyDelay?\n  limits.step: unknown field; did you mean steps?"},
		// A set path the StatefulSet does not have: refused before the replay, with the field meant.
		{"containers[0].image", "container[0].image", "events[0].set.spec.template.spec.container: unknown field; did you mean containers?"},
		{`set: {"spec`, `set: {"spec.replcas": 3, "spec.updateStrategy": {rollingUpdat: {partition: 1}}, "spec`, "2 unknown fields:\n  events[0].set.spec.replcas: unknown field; did you mean replicas?\n  events[0].set.spec.updateStrategy.rollingUpdat: unknown field; did you mean rollingUpdate?"},
	} {
		_, err := ParseScenario([]byte(strings.Replace(fieldsScenario, c.from, c.to, 1)))
		var fe *fieldcheck.Error
		if !errors.As(err, &fe) || err.Error() != c.want {
			t.Errorf("%s -> %s: %v, want %q", c.from, c.to, err, c.want)
		}
	}
	if sc, err := ParseScenario([]byte(fieldsScenario)); err != nil || len(sc.UnknownFields) > 0 {
		t.Fatalf("the scenario as written: %v %v", err, sc.UnknownFields)
	}
}

// A misspelt field of a Kubernetes object in a scenario is listed, by its path in the scenario, and dropped
// as kube-apiserver drops it under fieldValidation Warn: the replay is the replay without it, revision
// names and all (the module would otherwise hash the misspelt template field into every revision).
func TestScenarioObjectUnknownFieldsAreDropped(t *testing.T) {
	typo := strings.Replace(fieldsScenario, "{name: a, image: x}", "{name: a, image: x, imagee: z}", 1)
	typo = strings.Replace(typo, "    spec:\n      replicas: 2", "    spec:\n      podManagmentPolicy: Parallel\n      replicas: 2", 1)
	typo += `  - settled: true
    apply: {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: web}, spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}, lables: {}}, spec: {containers: [{name: a, image: x2}]}}}}
`
	clean := fieldsScenario + `  - settled: true
    apply: {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: web}, spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: a, image: x2}]}}}}
`
	sc, err := ParseScenario([]byte(typo))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range sc.UnknownFields {
		got = append(got, u.String())
	}
	want := []string{
		"manifests[0].spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?",
		"manifests[0].spec.template.spec.containers[0].imagee: unknown field; did you mean image?",
		"events[1].apply.spec.template.metadata.lables: unknown field; did you mean labels?",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("UnknownFields:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ref, err := ParseScenario([]byte(clean))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatalf("the world refused what was dropped: %v", err)
	}
	want2, err := Run(context.Background(), ref, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var a, b strings.Builder
	if err := tl.WriteText(&a, true); err != nil {
		t.Fatal(err)
	}
	if err := want2.WriteText(&b, true); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("the replay with the misspelt fields dropped differs from the replay without them:\n%s\n---\n%s", a.String(), b.String())
	}
}

// A set path addresses any key as kubectl's JSONPath does (an annotation's, with dots and slashes, quoted
// in brackets or escaped), sets that key and keeps the others, merges an object into the map there, and
// creates a map missing on the way: the set's other annotations (ordinal.dev/policies among them in a real
// scenario) survive every edit.
func TestSetPathsAddressAnyKey(t *testing.T) {
	sc, err := ParseScenario([]byte(strings.Replace(fieldsScenario, "labels: {app: web}}", "labels: {app: web}, annotations: {keep.example.com/x: \"1\"}}", 1) + `  - settled: true
    set:
      'metadata.annotations["example.com/approve"]': "true"
      metadata.annotations['a.b/c']: d
  - set: {metadata.annotations.example\.com/escaped: e}
  - set: {metadata.annotations: {merged: f}}
  - set: {'spec.template.metadata.annotations["example.com/new"]': g}
`))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	final, err := jsonobj.DecodeObj(tl.Final)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"keep.example.com/x": "1", "example.com/approve": "true", "a.b/c": "d", "example.com/escaped": "e", "merged": "f"}
	if got := jsonobj.GetObj(final, "statefulSet.metadata.annotations"); !jsonobj.Equal(got, want) {
		t.Errorf("the set's annotations: %v, want %v", got, want)
	}
	if got := jsonobj.GetStr(final, `statefulSet.spec.template.metadata.annotations["example.com/new"]`); got != "g" {
		t.Errorf("the template's new annotation: %q", got)
	}
}

// A malformed set path, or null at a list index, is refused before the replay, naming the event, the path
// and (for a malformed one) the character.
func TestSetPathMalformed(t *testing.T) {
	for set, want := range map[string]string{
		`{'metadata.annotations["example.com/approve': x1}`: `events[0].set: path "metadata.annotations[\"example.com/approve", character 42: the quoted key is not closed by "`,
		`{"spec.template.spec.containers[0]": null}`:        "events[0].set: spec.template.spec.containers[0]: null removes a key, not a list item ([0])",
	} {
		bad := strings.Replace(fieldsScenario, `{"spec.template.spec.containers[0].image": x1}`, set, 1)
		if _, err := ParseScenario([]byte(bad)); err == nil || err.Error() != want {
			t.Errorf("set: %s: %v\nwant %s", set, err, want)
		}
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/policies/kit"
)

// input is an evaluate input: a set with annotations, pods with labels, a plan deleting web-1 and web-2
// after a revision create, and what the policy held before.
func input(t *testing.T, annotations map[string]string, labels map[string]map[string]string, held string) []byte {
	t.Helper()
	var pods []any
	for _, n := range []string{"web-0", "web-1", "web-2"} {
		pods = append(pods, map[string]any{"metadata": map[string]any{"name": n, "labels": labels[n]}})
	}
	in := map[string]any{"abi": 1, "from": 1,
		"snapshot": map[string]any{"abi": 1, "now": "2026-11-26T10:10:00Z", "pods": pods,
			"statefulSet": map[string]any{"metadata": map[string]any{"name": "web", "annotations": annotations}}},
		"plan": map[string]any{"abi": 1, "actions": []any{
			map[string]any{"verb": "create", "kind": "ControllerRevision", "name": "web-abc"},
			map[string]any{"verb": "delete", "kind": "Pod", "name": "web-2"},
			map[string]any{"verb": "delete", "kind": "Pod", "name": "web-1"},
			map[string]any{"verb": "updateStatus", "kind": "StatefulSet", "name": "web"}}},
		"context": json.RawMessage(`{"held":` + held + `}`)}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type answer struct {
	Holds []struct {
		Action            int
		Reason, Message   string
		RetryAfterSeconds float64
	}
	Error *struct{ Message string }
}

func evaluate(t *testing.T, in []byte) answer {
	t.Helper()
	var a answer
	out := kit.Evaluate(in, decide)
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return a
}

func TestHandoff(t *testing.T) {
	primary := map[string]map[string]string{"web-1": {"role": "primary"}, "web-2": {"role": "replica"}}
	for _, c := range []struct {
		name        string
		annotations map[string]string
		labels      map[string]map[string]string
		held        string
		want        []int   // actions held
		retry       float64 // of the first hold
		err         string
	}{
		{name: "the primary's delete is held for the default 10m", labels: primary, held: `[]`, want: []int{2}, retry: 600},
		{name: "no pod carries the role", labels: nil, held: `[]`, want: nil},
		{name: "held 4m ago: 6m left", labels: primary, held: `[{"verb":"delete","kind":"Pod","name":"web-1","since":"2026-11-26T10:06:00Z"}]`, want: []int{2}, retry: 360},
		{name: "held 10m ago: let through", labels: primary, held: `[{"verb":"delete","kind":"Pod","name":"web-1","since":"2026-11-26T10:00:00Z"}]`, want: nil},
		{name: "no timeout", annotations: map[string]string{"handoff.ordinal.dev/timeout": "0"}, labels: primary,
			held: `[{"verb":"delete","kind":"Pod","name":"web-1","since":"2026-11-20T10:00:00Z"}]`, want: []int{2}},
		{name: "another label, any value", annotations: map[string]string{"handoff.ordinal.dev/label": "db.example.com/leader"},
			labels: map[string]map[string]string{"web-2": {"db.example.com/leader": "yes"}, "web-1": {"role": "primary"}}, held: `[]`, want: []int{1}, retry: 600},
		{name: "a bad timeout is an error, not a guess", annotations: map[string]string{"handoff.ordinal.dev/timeout": "soon"}, labels: primary, held: `[]`,
			err: "is not a duration"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := evaluate(t, input(t, c.annotations, c.labels, c.held))
			if c.err != "" {
				if a.Error == nil || !strings.Contains(a.Error.Message, c.err) || len(a.Holds) != 0 {
					t.Fatalf("answer %+v: want an error saying %q", a, c.err)
				}
				return
			}
			var got []int
			for _, h := range a.Holds {
				got = append(got, h.Action)
				if h.Reason != "RoleNotHandedOff" || !strings.Contains(h.Message, "still carries") {
					t.Errorf("hold %+v", h)
				}
			}
			if len(got) != len(c.want) || (len(got) > 0 && (got[0] != c.want[0] || a.Holds[0].RetryAfterSeconds != c.retry)) {
				t.Fatalf("holds %+v, want actions %v retrying after %vs", a.Holds, c.want, c.retry)
			}
		})
	}
}

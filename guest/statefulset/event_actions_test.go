package statefulset

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestEventActions runs every conformance case with "eventActions": true. The plan is upstream's with
// one addition: each event that reports a write carries that write's index. An event names its write
// ("<Verb> Pod <name> ..." or "<Verb> Claim <name> ..."; a pod write that failed on its claim's owner
// references, "... could not update claim <name> ...", reports that claim update), so the index is checked
// against the message;
// and every pod or claim event whose write is in the plan points at it. Without the flag, the plan has
// no index at all (TestConformance).
func TestEventActions(t *testing.T) {
	snaps := conformanceSnapshots(t)
	indexed := 0
	for _, c := range snaps {
		name, in := c.name, c.in
		var snap map[string]any
		if err := json.Unmarshal(in, &snap); err != nil {
			t.Fatal(err)
		}
		snap["eventActions"] = true
		in, _ = json.Marshal(snap)
		var p struct {
			Actions []struct{ Verb, Kind, Name string } `json:"actions"`
			Events  []struct {
				Reason, Message string
				Action          *int `json:"action"`
			} `json:"events"`
		}
		out := Reconcile(in)
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(c.path, ".snapshot.json") + ".plan.json")
		if err != nil {
			t.Fatal(err)
		}
		if d := diffJSON(want, withoutEventActions(t, out)); d != "" {
			t.Errorf("%s: with eventActions the plan is not upstream's plus indices:\n%s", name, d)
			continue
		}
		claimed := map[int]bool{}
		for i, ev := range p.Events {
			w := strings.Fields(ev.Message)
			names := len(w) >= 3 && (w[1] == "Pod" || w[1] == "Claim") &&
				(w[0] == "Create" || w[0] == "Update" || w[0] == "Delete")
			if ev.Action == nil {
				if !names {
					continue
				}
				// A pod or claim event without an index: its write must not be in the plan (e.g. a pod
				// create that failed on its claims before the pod was sent).
				kind := map[string]string{"Pod": kindPod, "Claim": kindPVC}[w[1]]
				for j, a := range p.Actions {
					if a.Verb == strings.ToLower(w[0]) && a.Kind == kind && a.Name == w[2] && !claimed[j] {
						t.Errorf("%s: event %d %q has no action, but action %d is its write", name, i, ev.Message, j)
					}
				}
				continue
			}
			j := *ev.Action
			if j < 0 || j >= len(p.Actions) {
				t.Errorf("%s: event %d: action %d of %d", name, i, j, len(p.Actions))
				continue
			}
			a := p.Actions[j]
			kind := map[string]string{"Pod": kindPod, "Claim": kindPVC}[w[1]]
			verb, target := strings.ToLower(w[0]), w[2]
			if _, rest, ok := strings.Cut(ev.Message, " failed error: could not update claim "); ok {
				// a pod's write that failed on its claim's owner references reports that claim update
				verb, kind, target = "update", kindPVC, strings.Fields(rest)[0]
			}
			if !names || a.Verb != verb || a.Kind != kind || a.Name != target {
				t.Errorf("%s: event %d %q points at action %d, %s %s %s", name, i, ev.Message, j, a.Verb, a.Kind, a.Name)
			}
			claimed[j] = true
			indexed++
		}
	}
	if indexed == 0 {
		t.Fatal("no event carried an action index")
	}
	t.Logf("%d events carry the index of their write", indexed)
}

// withoutEventActions is a plan with events[].action removed.
func withoutEventActions(t *testing.T, plan []byte) []byte {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(plan, &p); err != nil {
		t.Fatal(err)
	}
	evs, _ := p["events"].([]any)
	for _, e := range evs {
		delete(e.(map[string]any), "action")
	}
	b, _ := json.Marshal(p)
	return b
}

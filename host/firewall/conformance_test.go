package firewall_test

import (
	"encoding/json"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// The firewall is sound against upstream: every action of every plan the real v1.37.1 controller made
// in the conformance cases (adoptions, releases, claim owner-reference updates, revision renumbering,
// the AlreadyExists-rejected creates of collision cases, double deletes) passes it.
func TestUpstreamPlansPass(t *testing.T) {
	cases, err := conformance.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 500 {
		t.Fatalf("only %d conformance cases embedded", len(cases))
	}
	actions := map[string]int{}
	for _, c := range cases {
		s, err := firewall.ScopeFromSnapshot(c.Snapshot)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		var plan abi.Plan
		if err := json.Unmarshal(c.Plan, &plan); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if err := firewall.Check(s, &plan); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		for _, a := range plan.Actions {
			actions[a.Verb+" "+a.Kind]++
		}
	}
	t.Logf("%d cases, actions checked: %v", len(cases), actions)
}

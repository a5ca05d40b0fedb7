package plan_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/plan"
)

func sentResourceVersion(t *testing.T, a abi.Action) string {
	t.Helper()
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(a.Object, &o); err != nil {
		t.Fatal(err)
	}
	return o.Metadata.ResourceVersion
}

// A sync that updates a claim twice with the same bytes (a pending pod's claims: UpdateStatefulPod repeats
// UpdatePodClaimForRetentionPolicy) sends the second at the resourceVersion its first returned: the
// snapshot's would be refused with a Conflict against the sync's own write. Other bytes are sent as planned.
func TestApplyRebasesARepeatedUpdateOnItsOwnWrite(t *testing.T) {
	base := filepath.Join("..", "..", "internal", "conformance", "cases", "write-failures", "sim-fresh-parallel-start3-two-claims.step-01.first")
	snap, err := os.ReadFile(base + ".snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	scope, err := firewall.ScopeFromSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(base + ".plan.json")
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := plan.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	first := upstream.Actions[0] // update PersistentVolumeClaim data-web-3: the retention policy's owner
	first.Error = ""             // the case reports it refused; here it is written
	if first.Verb != abi.VerbUpdate || first.Kind != abi.KindPersistentVolumeClaim {
		t.Fatalf("the case's first action is %s %s, want a claim update", first.Verb, first.Kind)
	}
	snapRV := sentResourceVersion(t, first)
	other := first // the claim as the snapshot has it: the same object, other bytes
	var obj map[string]any
	if err := json.Unmarshal(first.Object, &obj); err != nil {
		t.Fatal(err)
	}
	delete(obj["metadata"].(map[string]any), "ownerReferences")
	if other.Object, err = json.Marshal(obj); err != nil {
		t.Fatal(err)
	}

	p := &abi.Plan{Actions: []abi.Action{first, first, other}}
	w := &fakeWriter{}
	if _, err := plan.Apply(context.Background(), scope, p, w, plan.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := []string{sentResourceVersion(t, w.sent[0]), sentResourceVersion(t, w.sent[1]), sentResourceVersion(t, w.sent[2])}; got[0] != snapRV || got[1] != "rv1" || got[2] != snapRV {
		t.Errorf("resourceVersions sent %v, want [%s rv1 %s]: the repeat at its first write's, other bytes as planned", got, snapRV, snapRV)
	}
	if string(p.Actions[1].Object) != string(first.Object) {
		t.Errorf("the plan was changed: %s", p.Actions[1].Object)
	}

}

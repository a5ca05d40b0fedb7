package rollout

import (
	"strings"
	"testing"

	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// A write a policy holds makes the rollout wait, and says which policy holds which write and why, first.
func TestHeldWritesMakeTheRolloutWait(t *testing.T) {
	st := &Status{State: StateProgressing, Reasons: []string{"maxUnavailable 1"},
		Next: Next{Writes: []Write{{Verb: "create", Kind: "ControllerRevision", Name: "web-abc"}, {Verb: "delete", Kind: "Pod", Name: "web-3"}}}}
	st.Held(map[int]hostplan.Hold{1: {Policy: "pdb", Reason: "DisruptionBudget", Message: "PodDisruptionBudget web allows no more disruptions"}, 7: {Policy: "x"}})
	if st.State != StateWaiting || len(st.Reasons) != 2 ||
		st.Reasons[0] != "policy pdb holds delete Pod web-3: PodDisruptionBudget web allows no more disruptions" {
		t.Fatalf("state %s reasons %q", st.State, st.Reasons)
	}
	if w := st.Next.Writes[1]; w.HeldBy == nil || w.HeldBy.Policy != "pdb" || st.Next.Writes[0].HeldBy != nil {
		t.Fatalf("writes %+v", st.Next.Writes)
	}
	var b strings.Builder
	if err := st.WriteText(&b); err != nil || !strings.Contains(b.String(), "delete Pod web-3 (held by policy pdb)") {
		t.Fatalf("text %q %v", b.String(), err)
	}
	none := &Status{State: StateComplete}
	none.Held(nil)
	if none.State != StateComplete {
		t.Fatal("no holds changed the state")
	}
}

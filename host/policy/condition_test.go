package policy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// The set's status says what its policies hold: PolicyHold True naming the first held write while a sync holds
// writes, False once one holds none; a set nothing was ever held of gets no condition (its status stays
// upstream's), a lasting hold no rewrite per sync, and the other conditions and members stay as they are.
func TestHoldStatusSaysWhatIsHeld(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	held := []hostplan.HeldWrite{
		{Verb: "delete", Kind: "Pod", Name: "web-3", Hold: hostplan.Hold{Policy: "pdb", Reason: "DisruptionBudget", Message: "PodDisruptionBudget web allows no more disruptions (currentHealthy 4)"}},
		{Verb: "delete", Kind: "Pod", Name: "web-2", Hold: hostplan.Hold{Policy: "pdb", Reason: "DisruptionBudget", Message: "m"}},
	}
	const progressing = `{"type":"Progressing","status":"True","lastTransitionTime":"2026-11-26T09:00:00Z","reason":"RecreateInProgress"}`
	setWith := func(conditions string) func() gjson.Result {
		return func() gjson.Result {
			return gjson.Parse(`{"metadata":{"name":"web","namespace":"db"},"status":{"replicas":5,"conditions":[` + conditions + `]}}`)
		}
	}
	condOf := func(a *abi.Action) gjson.Result {
		return gjson.GetBytes(a.Object, `status.conditions.#(type=="PolicyHold")`)
	}

	// nothing held, nothing said: no write, and the plan's own status write goes as planned
	if a := HoldStatus(setWith(progressing), t0, nil)(nil, nil); a != nil {
		t.Fatalf("a set nothing is held of: %+v", a)
	}
	planned := &abi.Action{Verb: "updateStatus", Kind: "StatefulSet", Namespace: "db", Name: "web", Object: json.RawMessage(`{"status":{"replicas":4}}`)}
	if a := HoldStatus(setWith(progressing), t0, nil)(planned, nil); a != nil {
		t.Fatalf("the plan's status write changed: %+v", a)
	}

	// a hold: the host's status write, from the set's status, the other condition kept
	a := HoldStatus(setWith(progressing), t0, nil)(nil, held)
	c := condOf(a)
	if a == nil || a.Verb != "updateStatus" || a.Namespace != "db" || a.Name != "web" || c.Get("status").String() != "True" ||
		c.Get("reason").String() != "DisruptionBudget" || c.Get("lastTransitionTime").String() != "2026-11-26T10:00:00Z" ||
		c.Get("message").String() != "policy pdb holds delete Pod web-3: PodDisruptionBudget web allows no more disruptions (currentHealthy 4) (and 1 more held)" {
		t.Fatalf("the status write of a hold: %+v (%s)", a, c)
	}
	if gjson.GetBytes(a.Object, "status.replicas").Int() != 5 || !gjson.GetBytes(a.Object, `status.conditions.#(type=="Progressing")`).Exists() {
		t.Fatalf("the rest of the status was not kept: %s", a.Object)
	}
	// in the plan's own status write, when it has one
	a = HoldStatus(setWith(progressing), t0, nil)(planned, held)
	if a == nil || gjson.GetBytes(a.Object, "status.replicas").Int() != 4 || condOf(a).Get("status").String() != "True" {
		t.Fatalf("the plan's status write with a hold: %+v", a)
	}

	// the same hold a minute later, its message changed: no rewrite
	saying := string(gjson.GetBytes(HoldStatus(setWith(progressing), t0, nil)(nil, held).Object, `status.conditions.#(type=="PolicyHold")`).Raw)
	later := append([]hostplan.HeldWrite(nil), held...)
	later[0].Message = "PodDisruptionBudget web allows no more disruptions (currentHealthy 3)"
	if a := HoldStatus(setWith(progressing+","+saying), t0.Add(time.Minute), nil)(nil, later); a != nil {
		t.Fatalf("a lasting hold rewrote the status: %s", a.Object)
	}
	// another write held: rewritten, the transition time kept (still True)
	other := []hostplan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-1", Hold: hostplan.Hold{Policy: "handoff", Reason: "RoleNotHandedOff", Message: "primary"}}}
	c = condOf(HoldStatus(setWith(saying), t0.Add(time.Minute), nil)(nil, other))
	if c.Get("reason").String() != "RoleNotHandedOff" || c.Get("lastTransitionTime").String() != "2026-11-26T10:00:00Z" {
		t.Fatalf("another hold: %s", c.Raw)
	}
	// nothing held any more: False, from now
	a = HoldStatus(setWith(saying), t0.Add(2*time.Minute), nil)(nil, nil)
	c = condOf(a)
	if a == nil || c.Get("status").String() != "False" || c.Get("reason").String() != ReasonNothingHeld || c.Get("lastTransitionTime").String() != "2026-11-26T10:02:00Z" {
		t.Fatalf("released: %+v", a)
	}
	// and False stays False without a write
	if a := HoldStatus(setWith(string(c.Raw)), t0.Add(3*time.Minute), nil)(nil, nil); a != nil {
		t.Fatalf("a False condition rewritten: %s", a.Object)
	}
	// a long message is cut, whole characters
	long := []hostplan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-3", Hold: hostplan.Hold{Policy: "p", Reason: "R", Message: strings.Repeat("é", 1000)}}}
	if m := condOf(HoldStatus(setWith(""), t0, nil)(nil, long)).Get("message").String(); len(m) > maxConditionMessage || !strings.HasSuffix(m, "é...") {
		t.Fatalf("a long message: %d bytes, ends %q", len(m), m[len(m)-8:])
	}
}

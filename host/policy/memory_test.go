package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// A restarted host restores what the set records (MemoryOf of the annotation MemoryWrite wrote and the
// PolicyHold condition HoldStatus wrote), so a hold's time goes on from when it was first held: a restart
// does not start a handoff's timeout over. The record is removed once nothing is held.
func TestRestartKeepsSinceWhenAWriteIsHeld(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	held := []hostplan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-1", Hold: hostplan.Hold{Policy: "handoff", Reason: "RoleNotHandedOff", Message: "m"}}}
	set := []byte(`{"metadata":{"name":"web","namespace":"db","annotations":{"ordinal.dev/policies":"handoff"}},"status":{"replicas":3}}`)

	// a sync holds web-1's delete at t0: the status says so, and the host records its memory in the set
	var before Memory
	status := HoldStatus(func() gjson.Result { return gjson.ParseBytes(set) }, t0, &before)(nil, held)
	before.Record(t0, held, nil)
	set = persist(t, set, status, &before)

	// the controller restarts: its memory is the set's, held since t0, and a sync a minute later keeps t0
	after, err := MemoryOf(gjson.ParseBytes(set))
	if err != nil {
		t.Fatal(err)
	}
	if got := after.held("handoff"); len(got) != 1 || got[0].Name != "web-1" || got[0].Verb != "delete" || got[0].Since != "2026-11-26T10:00:00Z" {
		t.Fatalf("restored: %+v, want handoff's delete of web-1 held since t0", got)
	}
	if rel := after.Record(t0.Add(time.Minute), held, nil); len(rel) != 0 {
		t.Fatalf("released %v", rel)
	}
	if a := MemoryWrite(gjson.ParseBytes(set), after); a != nil {
		t.Fatalf("the set records the hold already; wrote %s", a.Patch)
	}
	rel := after.Record(t0.Add(3*time.Minute), nil, nil)
	if len(rel) != 1 || rel[0].HeldFor != 3*time.Minute {
		t.Fatalf("released %+v, want web-1's delete after 3m", rel)
	}
	set = persist(t, set, HoldStatus(func() gjson.Result { return gjson.ParseBytes(set) }, t0.Add(3*time.Minute), after)(nil, nil), after)
	if a := gjson.GetBytes(set, "metadata.annotations"); a.Get(gjson.Escape(AnnotationHeld)).Exists() || a.Get(gjson.Escape("ordinal.dev/policies")).String() != "handoff" {
		t.Fatalf("nothing held: annotations %s, want the record removed and the rest kept", a)
	}
	if m, err := MemoryOf(gjson.ParseBytes(set)); err != nil || !m.Empty() {
		t.Fatalf("restored after the release: %+v %v", m.held("handoff"), err)
	}
}

// A status write refused while the memory write lands (a fault, a conflict) delays the PolicyHold condition
// by a sync, not the hold: the condition that lands later is dated from the hold's first sync, so a
// controller restarted after it restores the record and times the hold on from when it began. (The chaos
// run that found this: "held since 11:16:43, first recorded since 11:16:33: the hold was timed afresh".)
func TestRestartAfterARefusedStatusWriteKeepsSince(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 400_000_000, time.UTC)
	held := []hostplan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-1", Hold: hostplan.Hold{Policy: "handoff", Reason: "RoleNotHandedOff", Message: "m"}}}
	set := []byte(`{"metadata":{"name":"web","namespace":"db"},"status":{"replicas":3}}`)
	var mem Memory
	sync := func(now time.Time, statusLands bool) {
		status := HoldStatus(func() gjson.Result { return gjson.ParseBytes(set) }, now, &mem)(nil, held)
		mem.Record(now, held, nil)
		if !statusLands {
			status = nil
		}
		set = persist(t, set, status, &mem)
	}
	// the first sync's status write is refused, its memory write lands; a controller restarted now restores it
	sync(t0, false)
	if m, err := MemoryOf(gjson.ParseBytes(set)); err != nil || len(m.held("handoff")) != 1 {
		t.Fatalf("restored before any condition: %+v %v, want the hold since t0", m.held("handoff"), err)
	}
	// ten seconds later the status lands; then the controller restarts
	sync(t0.Add(10*time.Second), true)
	if got := gjson.GetBytes(set, `status.conditions.#(type=="PolicyHold").lastTransitionTime`).String(); got != "2026-11-26T10:00:00Z" {
		t.Errorf("condition dated %s, want the hold's start (t0's second)", got)
	}
	m, err := MemoryOf(gjson.ParseBytes(set))
	if h := m.held("handoff"); err != nil || len(h) != 1 || h[0].Since != "2026-11-26T10:00:00.4Z" {
		t.Fatalf("restored after the late condition: %+v %v, want handoff's delete of web-1 held since t0", h, err)
	}
}

// persist applies a sync's status write (nil: none) and the memory write to set, as the API server would.
func persist(t *testing.T, set []byte, status *abi.Action, mem *Memory) []byte {
	t.Helper()
	if status != nil {
		set, _ = jsonpatch.MergePatch(set, status.Object)
	}
	if a := MemoryWrite(gjson.ParseBytes(set), mem); a != nil {
		if a.Verb != "patch" || a.Kind != "StatefulSet" || a.Name != "web" || a.Namespace != "db" || a.PatchType != "application/merge-patch+json" {
			t.Fatalf("memory write: %+v", a)
		}
		var err error
		if set, err = jsonpatch.MergePatch(set, a.Patch); err != nil {
			t.Fatal(err)
		}
	}
	return set
}

// MemoryOf restores only the hold the set's PolicyHold condition says is on, and says what is wrong with a
// record the host did not write.
func TestMemoryOfReadsTheRecordOfTheHoldOn(t *testing.T) {
	const rec = `{"handoff":[{"verb":"delete","kind":"Pod","name":"web-1","since":"2026-11-26T10:00:00.5Z"}],"pdb":[{"verb":"delete","kind":"Pod","name":"web-1","since":"2026-11-26T09:00:00Z"}]}`
	setWith := func(record, cond string) gjson.Result {
		r, _ := json.Marshal(record)
		return gjson.Parse(`{"metadata":{"annotations":{"ordinal.dev/policy-held":` + string(r) + `}},"status":{"conditions":[` + cond + `]}}`)
	}
	on := `{"type":"PolicyHold","status":"True","lastTransitionTime":"2026-11-26T10:00:00Z","reason":"RoleNotHandedOff"}`
	m, err := MemoryOf(setWith(rec, on))
	if err != nil {
		t.Fatal(err)
	}
	if h := m.held("handoff"); len(h) != 1 || h[0].Since != "2026-11-26T10:00:00.5Z" {
		t.Errorf("handoff's hold: %+v", h)
	}
	if h := m.held("pdb"); len(h) != 0 { // recorded before the condition came on: a hold that ended
		t.Errorf("pdb's hold from before the condition's transition: %+v", h)
	}
	// False since 10:00:00: a sync held nothing in that second, so handoff's record from within it and pdb's
	// from before are of the hold that ended; at 11:00 both are
	for _, off := range []string{"10:00:00", "11:00:00"} {
		cond := `{"type":"PolicyHold","status":"False","lastTransitionTime":"2026-11-26T` + off + `Z","reason":"NothingHeld"}`
		if m, err := MemoryOf(setWith(rec, cond)); err != nil || !m.Empty() {
			t.Errorf("condition %s: restored %+v %v, want nothing", cond, m.held("handoff"), err)
		}
	}
	// False since 09:59:59: handoff's record is of a hold after it, whose status write has not landed
	m, err = MemoryOf(setWith(rec, `{"type":"PolicyHold","status":"False","lastTransitionTime":"2026-11-26T09:59:59Z","reason":"NothingHeld"}`))
	if h := m.held("handoff"); err != nil || len(h) != 1 || len(m.held("pdb")) != 0 {
		t.Errorf("False before handoff's record: handoff %+v pdb %+v %v, want handoff's alone", h, m.held("pdb"), err)
	}
	// no condition: no status write saying a hold has landed, so both records are of the hold on
	m, err = MemoryOf(setWith(rec, ""))
	if err != nil || len(m.held("handoff")) != 1 || len(m.held("pdb")) != 1 {
		t.Errorf("no condition: restored handoff %+v pdb %+v %v, want both", m.held("handoff"), m.held("pdb"), err)
	}
	for _, c := range []struct{ record, want string }{
		{`not json`, "is not a JSON object of policies' held writes"},
		{`{"handoff":[{"verb":"delete","kind":"Pod","since":"2026-11-26T10:00:00Z"}]}`, "policy handoff's write 0 has an empty verb, kind or name"},
		{`{"handoff":[{"verb":"delete","kind":"Pod","name":"web-1","since":"yesterday"}]}`, `policy handoff's write 0: since "yesterday" is not an RFC 3339 time`},
		{`{"handoff":[{"verb":"delete","kind":"Pod","name":"web-1","since":"2026-11-26T10:00:00Z"},{"verb":"delete","kind":"Pod","name":"web-1","since":"2026-11-26T10:00:00Z"}]}`, "recorded twice"},
		{`{"":[]}`, "empty name"},
	} {
		m, err := MemoryOf(setWith(c.record, on))
		if err == nil || !strings.Contains(err.Error(), "annotation ordinal.dev/policy-held") || !strings.Contains(err.Error(), c.want) || !m.Empty() {
			t.Errorf("record %s: %v (restored %v), want an error saying %q and nothing restored", c.record, err, m.held("handoff"), c.want)
		}
	}
}

// A write a policy lets through is released once it is made: when the sync stops before it (its delete
// refused with a 500, a reply lost), the write keeps its time, so the next sync asks the policy with the
// hold's start and a handoff whose timeout let the delete through lets it through again rather than
// holding it afresh. (Found by chaos: "PolicyHold True again after it was False".)
func TestAWriteLetThroughIsReleasedOnceMade(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	del := abi.Action{Verb: "delete", Kind: "Pod", Namespace: "db", Name: "web-1"}
	held := []hostplan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-1", Hold: hostplan.Hold{Policy: "handoff"}}}
	var m Memory
	m.Record(t0, held, nil)
	status := abi.Action{Verb: "updateStatus", Kind: "StatefulSet", Namespace: "db", Name: "web"}
	plan := &abi.Plan{Actions: []abi.Action{status, del}}
	for _, c := range []struct {
		name string
		res  hostplan.Applied
		err  error
	}{
		{"the delete stopped the plan", hostplan.Applied{Plan: plan, Issued: 2}, &hostplan.WriteError{Index: 1, Action: del, Err: errors.New("500")}},
		{"the status write stopped the plan", hostplan.Applied{Plan: plan, Issued: 1}, &hostplan.WriteError{Index: 0, Action: status, Err: errors.New("500")}},
		{"the delete refused and told to the module", hostplan.Applied{Plan: &abi.Plan{Actions: []abi.Action{status, func() abi.Action { a := del; a.Error = "500"; return a }()}}, Issued: 2}, nil},
	} {
		if rel := m.Record(t0.Add(time.Minute), nil, UnmadeOf(c.res, c.err)); len(rel) != 0 {
			t.Errorf("%s: released %v, want the delete kept until it is made", c.name, rel)
		}
		if s, ok := m.Since("handoff", "delete", "Pod", "web-1"); !ok || !s.Equal(t0) {
			t.Errorf("%s: since %v %v, want t0 kept", c.name, s, ok)
		}
	}
	rel := m.Record(t0.Add(2*time.Minute), nil, UnmadeOf(hostplan.Applied{Plan: plan, Issued: 2}, nil))
	if len(rel) != 1 || rel[0].HeldFor != 2*time.Minute {
		t.Errorf("made: released %+v, want the delete after 2m", rel)
	}
	if !m.Empty() {
		t.Errorf("made: still remembered %+v", m.held("handoff"))
	}
}

package policy

import (
	"encoding/json"
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
	before.Record(t0, held)
	set = persist(t, set, HoldStatus(func() gjson.Result { return gjson.ParseBytes(set) }, t0)(nil, held), &before)

	// the controller restarts: its memory is the set's, held since t0, and a sync a minute later keeps t0
	after, err := MemoryOf(gjson.ParseBytes(set))
	if err != nil {
		t.Fatal(err)
	}
	if got := after.held("handoff"); len(got) != 1 || got[0].Name != "web-1" || got[0].Verb != "delete" || got[0].Since != "2026-11-26T10:00:00Z" {
		t.Fatalf("restored: %+v, want handoff's delete of web-1 held since t0", got)
	}
	if rel := after.Record(t0.Add(time.Minute), held); len(rel) != 0 {
		t.Fatalf("released %v", rel)
	}
	if a := MemoryWrite(gjson.ParseBytes(set), after); a != nil {
		t.Fatalf("the set records the hold already; wrote %s", a.Patch)
	}
	rel := after.Record(t0.Add(3*time.Minute), nil)
	if len(rel) != 1 || rel[0].HeldFor != 3*time.Minute {
		t.Fatalf("released %+v, want web-1's delete after 3m", rel)
	}
	set = persist(t, set, HoldStatus(func() gjson.Result { return gjson.ParseBytes(set) }, t0.Add(3*time.Minute))(nil, nil), after)
	if a := gjson.GetBytes(set, "metadata.annotations"); a.Get(gjson.Escape(AnnotationHeld)).Exists() || a.Get(gjson.Escape("ordinal.dev/policies")).String() != "handoff" {
		t.Fatalf("nothing held: annotations %s, want the record removed and the rest kept", a)
	}
	if m, err := MemoryOf(gjson.ParseBytes(set)); err != nil || !m.Empty() {
		t.Fatalf("restored after the release: %+v %v", m.held("handoff"), err)
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
	for _, cond := range []string{"", `{"type":"PolicyHold","status":"False","lastTransitionTime":"2026-11-26T11:00:00Z","reason":"NothingHeld"}`} {
		if m, err := MemoryOf(setWith(rec, cond)); err != nil || !m.Empty() {
			t.Errorf("condition %q: restored %+v %v, want nothing", cond, m.held("handoff"), err)
		}
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

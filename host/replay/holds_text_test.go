package replay

import (
	"strings"
	"testing"
	"time"
)

// A policy's hold of a write lasts over the syncs that plan it: a sync with no writes neither extends nor ends
// it, one whose writes no longer hold it releases it; a write held again later is a hold of its own.
func TestHoldSpans(t *testing.T) {
	held := func(policy, reason, name string) ActionRecord {
		return ActionRecord{Verb: "delete", Kind: "Pod", Name: name, Held: &ActionHold{Policy: policy, Reason: reason, Message: reason + " says why"}}
	}
	status := ActionRecord{Verb: "updateStatus", Kind: "StatefulSet", Name: "web"}
	at := func(s int, acts ...ActionRecord) Step {
		return Step{Offset: Duration(time.Duration(s) * time.Second), Actions: acts}
	}
	steps := []Step{
		at(0, status),
		at(10, held("window", "OutsideWindow", "web-2"), status),
		at(20), // nothing planned: the hold goes on
		at(30, held("window", "OutsideWindow", "web-2")),
		at(40, ActionRecord{Verb: "delete", Kind: "Pod", Name: "web-2"}), // released
		at(50, held("window", "SignalNotTrue", "web-1"), held("pdb", "Budget", "web-0")),
		at(60, held("window", "SignalNotTrue", "web-1")),
	}
	var got []string
	for _, s := range holdSpans(steps) {
		got = append(got, s.policy+" "+s.reason+" "+s.write+" "+s.from.String()+".."+s.to.String()+map[bool]string{true: " released", false: ""}[s.released])
	}
	want := []string{
		"window OutsideWindow delete Pod web-2 10s..40s released",
		"window SignalNotTrue delete Pod web-1 50s..1m",
		"pdb Budget delete Pod web-0 50s..1m released",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("holds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	var b strings.Builder
	writeHolds(&b, steps, "complete")
	for _, w := range []string{
		"holds:\n",
		"  window held delete Pod web-2 from +10s until +40s, when it was released: OutsideWindow: OutsideWindow says why\n",
		"  window held delete Pod web-1 from +50s until the end, still held: SignalNotTrue: SignalNotTrue says why\n",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, b.String())
		}
	}
	b.Reset()
	writeHolds(&b, []Step{at(5, held("pdb", "DisruptionBudget", "web-9")), at(5, status)}, "complete")
	if !strings.Contains(b.String(), "pdb held delete Pod web-9 at +5s, released by the next sync: DisruptionBudget") {
		t.Errorf("a hold the next sync at the same time released:\n%s", b.String())
	}
	b.Reset()
	writeHolds(&b, steps, OutcomeHeld) // the outcome's line names the holds it ends with
	if strings.Contains(b.String(), "web-1") || !strings.Contains(b.String(), "web-2") {
		t.Errorf("a held outcome: the holds it ends with are its line's:\n%s", b.String())
	}
}

package statefulset

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

// A plan does not depend on the order of the snapshot's pods, revisions and claims: a delta snapshot
// (object_delta.go) rebuilds the lists in an order of its own, and must get the whole snapshot's plan.
func TestPlansDoNotDependOnListOrder(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	diff, total := 0, 0
	for _, c := range conformanceSnapshots(t) {
		var s map[string]json.RawMessage
		if json.Unmarshal(c.in, &s) != nil {
			continue
		}
		want := Reconcile(c.in)
		for k := 0; k < 5; k++ {
			for _, l := range []string{"pods", "revisions", "claims"} {
				var a []json.RawMessage
				if json.Unmarshal(s[l], &a) != nil || len(a) < 2 {
					continue
				}
				r.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
				s[l], _ = json.Marshal(a)
			}
			in, _ := json.Marshal(s)
			got := Reconcile(in)
			total++
			if !bytes.Equal(got, want) {
				diff++
				if diff < 6 {
					t.Errorf("%s with its lists shuffled:\n got  %.400s\n want %.400s", c.name, got, want)
				}
			}
		}
	}
	if diff > 0 || total < 1000 {
		t.Fatalf("%d of %d shuffled snapshots got another plan", diff, total)
	}
}

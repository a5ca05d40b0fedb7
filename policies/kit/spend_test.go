package kit_test

import (
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/policies/kit"
)

// A policy that spends a delete's budget and then holds that delete (it checked the budget first, another
// rule second) gets an answer the host refuses whole ("held by the same answer: a held delete spends
// nothing"): the policy is reported failed and holds nothing, so the delete it meant to hold goes out. The
// kit knows the holds when it writes the spends; a held delete's spends need not be said.
func TestASpendOfAHeldDeleteIsNotSaid(t *testing.T) {
	const input = `{"abi":1,"from":0,"context":{},"snapshot":{"now":"2026-11-26T10:00:00Z","pods":[]},` +
		`"plan":{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"default","name":"web-1"}],"events":[]}}`
	out := kit.Evaluate([]byte(input), func(in *kit.Input) ([]kit.Hold, error) {
		in.Spend(in.Actions[0], "db")
		return []kit.Hold{{Action: 0, Reason: "Frozen", Message: "frozen"}}, nil
	})
	p := &abi.Plan{ABI: 1, Actions: []abi.Action{{Verb: "delete", Kind: "Pod", Namespace: "default", Name: "web-1"}}}
	if _, err := policy.CheckAnswer(out, p, 0, nil); err != nil {
		t.Fatalf("answer %s: refused whole by the host (%v): the hold of web-1 is lost", out, err)
	}
}

package kit_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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

// web-2's in-place update (a resize, then the update moving its revision label), web-1's without a resize (both
// change the image: the kubelet restarts the container), a repair of web-0 (its revision label kept), and a
// delete of web-3.
const inPlaceInput = `{"abi":1,"from":0,"context":{},"snapshot":{"now":"2026-11-26T10:00:00Z","pods":[` +
	`{"metadata":{"name":"web-0","labels":{"controller-revision-hash":"r2"}},"spec":{"containers":[{"name":"c","image":"img:2"}]}},` +
	`{"metadata":{"name":"web-1","labels":{"controller-revision-hash":"r1"}},"spec":{"containers":[{"name":"c","image":"img:1"}]}},` +
	`{"metadata":{"name":"web-2","labels":{"controller-revision-hash":"r1"}},"spec":{"containers":[{"name":"c","image":"img:1"}]}},` +
	`{"metadata":{"name":"web-3","labels":{"controller-revision-hash":"r1"}}}]},` +
	`"plan":{"abi":1,"events":[],"actions":[` +
	`{"verb":"resize","kind":"Pod","namespace":"default","name":"web-2","object":{"metadata":{"labels":{"controller-revision-hash":"r1"}}}},` +
	`{"verb":"update","kind":"Pod","namespace":"default","name":"web-2","object":{"metadata":{"labels":{"controller-revision-hash":"r2"},"annotations":{"ordinal.dev/in-place-update":"r2"}},"spec":{"containers":[{"name":"c","image":"img:2"}]}}},` +
	`{"verb":"update","kind":"Pod","namespace":"default","name":"web-1","object":{"metadata":{"labels":{"controller-revision-hash":"r2"},"annotations":{"ordinal.dev/in-place-update":"r2"}},"spec":{"containers":[{"name":"c","image":"img:2"}]}}},` +
	`{"verb":"update","kind":"Pod","namespace":"default","name":"web-0","object":{"metadata":{"labels":{"controller-revision-hash":"r2"},"annotations":{"ordinal.dev/in-place-update":"r2"}},"spec":{"containers":[{"name":"c","image":"img:2"}]}}},` +
	`{"verb":"delete","kind":"Pod","namespace":"default","name":"web-3"}]}}`

func inPlacePlan(t *testing.T) *abi.Plan {
	var in abi.PolicyInput
	if err := json.Unmarshal([]byte(inPlaceInput), &in); err != nil {
		t.Fatal(err)
	}
	return in.Plan
}

func revisions(name string) string {
	return map[string]string{"web-0": "r2", "web-1": "r1", "web-2": "r1", "web-3": "r1"}[name]
}

// The plan's disruptions are its pod deletes and its in-place updates, each in-place update once, at its
// first write (abi/POLICY.md section 2.1); a pod update that keeps its revision label is none.
func TestDisruptions(t *testing.T) {
	in, err := kit.Parse([]byte(inPlaceInput))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range in.Disruptions() {
		got = append(got, fmt.Sprintf("%d %s %s in-place %v update %d", d.Index, d.Verb, d.Name, d.InPlace, d.Update))
	}
	want := []string{"0 resize web-2 in-place true update 1", "2 update web-1 in-place true update 2", "4 delete web-3 in-place false update 4"}
	if !slices.Equal(got, want) {
		t.Fatalf("disruptions\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An in-place update takes its pod down only when the kubelet restarts a container for it: a new image, or a
// new CPU or memory of a container whose resizePolicy restarts it for that resource. One that moves labels or
// resizes live (NotRequired, the default) leaves the pod Ready, and is no disruption to spend or hold.
func TestDisruptionsAreTheInPlaceUpdatesThatRestartAContainer(t *testing.T) {
	const was = `{"name":"c","image":"img:1","resources":{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"memory":"1Gi"}}%s}`
	const restartMemory = `,"resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"},{"resourceName":"memory","restartPolicy":"RestartContainer"}]`
	for _, c := range []struct {
		name, pod, update string
		restarts          bool
	}{
		{"labels only", fmt.Sprintf(was, ""), fmt.Sprintf(was, ""), false},
		{"a new image", fmt.Sprintf(was, ""), strings.Replace(fmt.Sprintf(was, ""), "img:1", "img:2", 1), true},
		{"cpu, resized live by default", fmt.Sprintf(was, ""), strings.Replace(fmt.Sprintf(was, ""), `"cpu":"1"`, `"cpu":"2"`, 1), false},
		{"cpu, NotRequired", fmt.Sprintf(was, restartMemory), strings.Replace(fmt.Sprintf(was, restartMemory), `"cpu":"1"`, `"cpu":"2"`, 1), false},
		{"a memory limit, RestartContainer", fmt.Sprintf(was, restartMemory), strings.Replace(fmt.Sprintf(was, restartMemory), `"limits":{"memory":"1Gi"}`, `"limits":{"memory":"2Gi"}`, 1), true},
		{"a container it did not have", fmt.Sprintf(was, ""), fmt.Sprintf(was, "") + `,{"name":"d","image":"img:1"}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			input := `{"abi":1,"from":0,"context":{},"snapshot":{"now":"2026-11-26T10:00:00Z","pods":[` +
				`{"metadata":{"name":"web-1","labels":{"controller-revision-hash":"r1"}},"spec":{"containers":[` + c.pod + `]}}]},` +
				`"plan":{"abi":1,"events":[],"actions":[{"verb":"update","kind":"Pod","namespace":"default","name":"web-1","object":` +
				`{"metadata":{"labels":{"controller-revision-hash":"r2"},"annotations":{"ordinal.dev/in-place-update":"r2"}},"spec":{"containers":[` + c.update + `]}}}]}}`
			in, err := kit.Parse([]byte(input))
			if err != nil {
				t.Fatal(err)
			}
			if got := in.Restarts(0); got != c.restarts {
				t.Fatalf("Restarts = %v, want %v", got, c.restarts)
			}
			if got := len(in.Disruptions()); got != map[bool]int{true: 1, false: 0}[c.restarts] {
				t.Fatalf("%d disruptions, want the update one only when it restarts a container", got)
			}
		})
	}
}

// An in-place update spends by its first write, and a policy that spends it and then holds any write of it
// (its update, after its resize) has the spend left out, as a held delete's is: the host would refuse the
// whole answer, and with it the hold.
func TestASpendOfAHeldInPlaceUpdateIsNotSaid(t *testing.T) {
	out := kit.Evaluate([]byte(inPlaceInput), func(in *kit.Input) ([]kit.Hold, error) {
		for _, d := range in.Disruptions() {
			in.Spend(d.Action, "db")
		}
		return []kit.Hold{{Action: 1, Reason: "Frozen", Message: "frozen"}}, nil
	})
	a, err := policy.CheckAnswer(out, inPlacePlan(t), 0, revisions)
	if err != nil {
		t.Fatalf("answer %s: refused whole by the host (%v): the hold of web-2 is lost", out, err)
	}
	if len(a.Spends) != 2 || a.Spends[0].Action != 2 || a.Spends[1].Action != 4 {
		t.Fatalf("answer %s: want the spends of web-1's in-place update and web-3's delete only", out)
	}
}

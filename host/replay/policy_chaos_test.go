package replay

import (
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// Chaos for policies, as a user sees it: a policy that starts trapping mid-rollout, a hold the operator
// releases mid-rollout, and a controller restarted while a policy holds. Each rollout of a 3-replica set
// completes, every pod is replaced exactly once (no write repeated, none lost), and a held rollout resumes
// after the release or across the restarts, not only at a time limit.

// podWrites counts, per pod, the creates and deletes the replay issued (not held, not refused).
func podWrites(tl *Timeline) map[string][2]int {
	n := map[string][2]int{}
	for _, s := range tl.Steps {
		for _, a := range s.Actions {
			if a.Kind != abi.KindPod || a.Held != nil || a.Error != "" {
				continue
			}
			c := n[a.Name]
			switch a.Verb {
			case abi.VerbCreate:
				c[0]++
			case abi.VerbDelete:
				c[1]++
			}
			n[a.Name] = c
		}
	}
	return n
}

// checkReplacedOnce: the rollout completed and each of web-0..2 was created twice (at the old revision, then
// the new) and deleted once.
func checkReplacedOnce(t *testing.T, tl *Timeline) {
	t.Helper()
	if tl.Outcome.Result != "complete" {
		t.Fatalf("outcome %s (%s), want complete", tl.Outcome.Result, tl.Outcome.Summary)
	}
	w := podWrites(tl)
	if len(w) != 3 {
		t.Errorf("pods written %v, want web-0..2", w)
	}
	for _, pod := range []string{"web-0", "web-1", "web-2"} {
		if w[pod] != [2]int{2, 1} {
			t.Errorf("%s: %d creates, %d deletes; want 2 and 1 (replaced once, no write repeated)", pod, w[pod][0], w[pod][1])
		}
	}
}

// firstIssued is the offset of the first issued pod delete (-1: none).
func firstIssued(tl *Timeline, verb string) time.Duration {
	for _, s := range tl.Steps {
		for _, a := range s.Actions {
			if a.Kind == abi.KindPod && a.Verb == verb && a.Held == nil && a.Error == "" {
				return time.Duration(s.Offset)
			}
		}
	}
	return -1
}

// A policy that answers the rollout's first delete, then traps at every call: the failure holds nothing
// back (the rollout completes, each pod replaced once), and it is told from the sync it began, mid-rollout.
func TestChaosPolicyTrapsMidRollout(t *testing.T) {
	var sawDelete atomic.Bool
	flaky := goPolicy{name: "flaky", answer: func(in abi.PolicyInput) ([]byte, error) {
		if sawDelete.Load() {
			return nil, &wasm.Error{Kind: wasm.ErrTrap, Op: "evaluate", Msg: "module trapped: unreachable"}
		}
		for _, a := range in.Plan.Actions[in.From:] {
			sawDelete.Store(sawDelete.Load() || a.Verb == abi.VerbDelete && a.Kind == abi.KindPod)
		}
		return json.Marshal(abi.PolicyAnswer{ABI: 1, Holds: []abi.PolicyHold{}})
	}}
	tl := replayWithPolicies(t, "flaky", "", flaky)
	checkReplacedOnce(t, tl)
	if len(tl.PolicyFailures) != 1 {
		t.Fatalf("policy failures %+v, want flaky's traps", tl.PolicyFailures)
	}
	f := tl.PolicyFailures[0]
	if f.Policy != "flaky" || f.Reason != policy.FailTrap || f.Count < 2 {
		t.Errorf("policy failure %+v: want flaky, trap, at the later deletes", f)
	}
	if first := firstIssued(tl, abi.VerbDelete); first < 0 || time.Duration(f.FirstAt) < first {
		t.Errorf("the traps told from +%s, the first delete at +%s: want them from mid-rollout", time.Duration(f.FirstAt), first)
	}
	if len(tl.Outcome.Held) != 0 {
		t.Errorf("held %+v: a failing policy holds nothing", tl.Outcome.Held)
	}
}

// The window policy holds the rollout until the operator opens the window 5m in: no pod is deleted before
// then, the rollout resumes at the edit and completes, each pod replaced once.
func TestChaosHoldReleasedMidRollout(t *testing.T) {
	tl := replayFile(t, filepath.Join(scenarioDir, "policy-window-opened.yaml"), "")
	checkReplacedOnce(t, tl)
	first := firstIssued(tl, abi.VerbDelete)
	if !heldWith(tl, "it opens at") || first < 5*time.Minute || first > 5*time.Minute+time.Minute {
		t.Errorf("the first delete at +%s: want it held until the window opens at +5m, then at once", first)
	}
}

// The handoff policy holds the primary's delete while the controller restarts every 30s: the rollout
// resumes when the policy's timeout ends (the restarts keep its start) and completes, each pod replaced
// once: no restarted controller repeats a write its predecessor made.
func TestChaosControllerRestartedWhileHeld(t *testing.T) {
	sc, err := LoadScenario(filepath.Join(scenarioDir, "policy-handoff-restarts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	restarts := 0
	for _, ev := range sc.Events {
		if ev.RestartController {
			restarts++
		}
	}
	if restarts < 3 {
		t.Fatalf("%d restarts in the scenario, want several while the delete is held", restarts)
	}
	tl := replayScenario(t, sc)
	checkReplacedOnce(t, tl)
	held, resumed := time.Duration(-1), time.Duration(-1)
	for _, s := range tl.Steps {
		for _, a := range s.Actions {
			if a.Name != "web-1" || a.Verb != abi.VerbDelete {
				continue
			}
			if a.Held != nil && held < 0 {
				held = time.Duration(s.Offset)
			} else if a.Held == nil && a.Error == "" {
				resumed = time.Duration(s.Offset)
			}
		}
	}
	if held < 0 || resumed <= held {
		t.Errorf("web-1's delete held from +%s, issued at +%s: want it held, then the rollout resumed", held, resumed)
	}
}

package replay

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A replay's controller restart starts from what the set records of its policies' holds, as a restarted
// controller does (policy.MemoryOf): with the controller restarted every 30 s, the handoff policy's 2m
// timeout of the primary's delete still runs from when it was first held, and the delete goes through 2m
// after that. Where a user's replace of the set drops that record before each restart, each restarted
// controller times the hold afresh, and the delete waits until 2m after the last restart: the restart reads
// the set, not the replay's own memory.
func TestControllerRestartKeepsWhatPoliciesHeld(t *testing.T) {
	sc, err := LoadScenario(filepath.Join(scenarioDir, "policy-handoff-restarts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	firstHeld, deleted, restarts, _ := heldAndDeleted(t, sc)
	if firstHeld < 0 || deleted < 0 {
		t.Fatalf("web-1's delete first held at %v, issued at %v (-1: never)", firstHeld, deleted)
	}
	if deleted-firstHeld != 2*time.Minute || restarts < 3 {
		t.Fatalf("web-1's delete held from +%v to +%v with %d restarts in between: want released at the 2m timeout across at least 3 restarts",
			firstHeld, deleted, restarts)
	}

	// the same, with the set replaced (its record of the holds dropped) at each restart
	var set map[string]any
	if err := json.Unmarshal(sc.Manifests[0], &set); err != nil {
		t.Fatal(err)
	}
	set["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "registry.k8s.io/nginx-slim:0.28"
	replace, _ := json.Marshal(set)
	var events []Event
	for _, ev := range sc.Events {
		if ev.RestartController {
			events = append(events, Event{After: ev.After, Apply: replace}, Event{RestartController: true})
			continue
		}
		events = append(events, ev)
	}
	sc.Events = events
	if firstHeld, deleted, restarts, last := heldAndDeleted(t, sc); firstHeld < 0 || restarts < 3 || deleted != last+2*time.Minute {
		t.Fatalf("with the record dropped at each restart: web-1's delete first held at +%v, issued at +%v, %d restarts after, the last at +%v; want issued 2m after the last",
			firstHeld, deleted, restarts, last)
	}
}

// heldAndDeleted replays sc and reports when web-1's delete was first held and when it was issued (-1:
// never), how many controller restarts came in between, and when the last of them was.
func heldAndDeleted(t *testing.T, sc *Scenario) (firstHeld, deleted time.Duration, restarts int, last time.Duration) {
	t.Helper()
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	firstHeld, deleted = -1, -1
	for _, s := range tl.Steps {
		for _, w := range s.World {
			if firstHeld >= 0 && deleted < 0 && strings.Contains(w.Message, "controller restarted") {
				restarts, last = restarts+1, time.Duration(s.Offset)
			}
		}
		for _, a := range s.Actions {
			if a.Verb != "delete" || a.Kind != "Pod" || a.Name != "web-1" {
				continue
			}
			switch {
			case a.Held != nil && a.Held.Policy == "handoff" && firstHeld < 0:
				firstHeld = time.Duration(s.Offset)
			case a.Held == nil && a.Error == "" && deleted < 0:
				deleted = time.Duration(s.Offset)
			}
		}
	}
	return firstHeld, deleted, restarts, last
}

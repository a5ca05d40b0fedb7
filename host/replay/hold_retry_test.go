package replay

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A hold the operator releases mid-replay (the window opened by an edit of its annotation) leaves the
// hold's retry queued for the window's next opening, 18 hours on; the rollout completes at once and the
// replay ends complete there, not at its time limit six hours after the edit.
func TestReleasedHoldRetryLetsTheWorldSettle(t *testing.T) {
	tl := replayFile(t, filepath.Join(scenarioDir, "policy-window-opened.yaml"), "")
	if !heldWith(tl, "it opens at 2026-11-29T02:00:00Z") {
		t.Fatal("no delete held until Sunday's window: the scenario no longer queues a retry hours away")
	}
	if tl.Outcome.Result != "complete" {
		t.Fatalf("outcome %s, want complete: %s", tl.Outcome.Result, tl.StopReason)
	}
	if last := tl.Steps[len(tl.Steps)-1]; time.Duration(last.Offset) > 10*time.Minute {
		t.Errorf("the last sync is at +%s: the replay waited for the released hold's retry", time.Duration(last.Offset))
	}
}

// A released hold's retry still brings the set back, as the controller's work queue does, while anything
// else is still to happen: the signal's 30s retry comes back mid-rollout, after the signal turned true.
func TestReleasedHoldRetryComesWhileTheWorldChanges(t *testing.T) {
	sc, err := ParseScenario([]byte(`name: signal-released
start: "2026-11-28T03:00:00Z"
signals: {db-healthy: true}
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: web
      namespace: default
      annotations: {ordinal.dev/policies: window, window.ordinal.dev/allow: "Sat-Sun 02:00-06:00", window.ordinal.dev/signal: db-healthy}
    spec:
      replicas: 3
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: nginx, image: registry.k8s.io/nginx-slim:0.27}]}
events:
  - settled: true
    signals: {db-healthy: false}
  - set: {"spec.template.spec.containers[0].image": registry.k8s.io/nginx-slim:0.28}
  - after: 10s
    signals: {db-healthy: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	tl := replayScenario(t, sc)
	if tl.Outcome.Result != "complete" {
		t.Fatalf("outcome %s, want complete: %s", tl.Outcome.Result, tl.StopReason)
	}
	i := len(tl.Steps) - 1 // the last sync the signal held
	for i >= 0 && !stepHeld(tl.Steps[i], "SignalNotTrue") {
		i--
	}
	if i < 0 {
		t.Fatal("no delete held by the signal")
	}
	due := time.Duration(tl.Steps[i].Offset) + 30*time.Second
	for _, s := range tl.Steps[i+1:] {
		if time.Duration(s.Offset) == due && slices.Contains(s.Trigger, "requeue") {
			return
		}
	}
	t.Errorf("no requeue at +%s, the held delete's retry, while the rollout went on", due)
}

// heldWith reports whether a step of tl held a write whose refusal says text.
func heldWith(tl *Timeline, text string) bool {
	return slices.ContainsFunc(tl.Steps, func(s Step) bool {
		return slices.ContainsFunc(s.Actions, func(a ActionRecord) bool { return a.Held != nil && strings.Contains(a.Error, text) })
	})
}

// stepHeld reports whether s held a write for reason.
func stepHeld(s Step, reason string) bool {
	return slices.ContainsFunc(s.Actions, func(a ActionRecord) bool { return a.Held != nil && a.Held.Reason == reason })
}

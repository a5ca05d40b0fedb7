package replay

import (
	"strings"
	"testing"
)

// The default limits count from each change of the world, so a scenario of several rollouts finishes however
// many it makes; limits a scenario sets count from its start; a replay stopped at a limit says how far the
// set got. (Run with a floor of 20 syncs: 3 replicas allow 30 syncs per change, fewer than the whole.)
func TestDefaultLimitsCountFromEachChange(t *testing.T) {
	defer func(f int) { defaultStepsFloor = f }(defaultStepsFloor)
	defaultStepsFloor = 20
	const rollouts = `
name: three-rollouts
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default}
    spec:
      replicas: 3
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: "nginx:1"}]}
events:
  - {settled: true, set: {"spec.template.spec.containers[0].image": "nginx:2"}}
  - {settled: true, set: {"spec.template.spec.containers[0].image": "nginx:3"}}
  - {settled: true, set: {"spec.template.spec.containers[0].image": "nginx:4"}}
`
	sc, err := ParseScenario([]byte(rollouts))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(t.Context(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if tl.Outcome.Result == "limit" || len(tl.Steps) <= 30 {
		t.Fatalf("outcome %s after %d syncs (%s): want all three rollouts replayed, more than one change's 30 syncs", tl.Outcome.Result, len(tl.Steps), tl.StopReason)
	}
	// the same total as a scenario's own limit stops it, and says where the set was
	sc.Limits.Steps = 30
	tl, err = Run(t.Context(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if tl.Outcome.Result != "limit" || !strings.Contains(tl.StopReason, "step limit (30 syncs) reached; the set's status: replicas=3") {
		t.Fatalf("outcome %s: %s", tl.Outcome.Result, tl.StopReason)
	}
}

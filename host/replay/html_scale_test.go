package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/replay/world"
)

// scaleScenario is a rollout of n pods, to test the picture at scale: the set is created (Parallel, so
// that 1000 pods do not take hours of virtual time), its image is bumped once it is Ready
// (maxUnavailable 10%, minReadySeconds so that the controller requeues), then, while it rolls, it is
// scaled down by a tenth and a pod is deleted by hand; five minutes after it settles the image is bumped
// again.
func scaleScenario(t testing.TB, n int) *Scenario {
	t.Helper()
	y := fmt.Sprintf(`name: scale-%[1]d
description: "%[1]d replicas: created, rolled twice with maxUnavailable 10%%, scaled down and a pod deleted mid-rollout"
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default}
    spec:
      replicas: %[1]d
      serviceName: web
      minReadySeconds: 10
      podManagementPolicy: Parallel
      updateStrategy:
        type: RollingUpdate
        rollingUpdate: {maxUnavailable: "10%%"}
      selector:
        matchLabels: {app: web}
      template:
        metadata:
          labels: {app: web}
        spec:
          containers:
            - {name: nginx, image: "nginx:1.25"}
events:
  - settled: true
    after: 30s
    set: {"spec.template.spec.containers[0].image": "nginx:1.26"}
  - after: 20s
    set: {"spec.replicas": %[2]d}
  - after: 5s
    deletePod: web-1
  - settled: true
    after: 5m
    set: {"spec.template.spec.containers[0].image": "nginx:1.27"}
`, n, n-n/10)
	sc, err := ParseScenario([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func replayScenario(t testing.TB, sc *Scenario) *Timeline {
	t.Helper()
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// syntheticRollout is a timeline of pods pods and about syncs syncs without replaying it (a real
// 1000-pod replay of thousands of syncs takes minutes): every pod is replaced in turn, three syncs an
// instant, with an edit at the start and a requeue every tenth instant. It has the shape of a
// maxUnavailable-1 rollout, which is the worst case for the page: every pod changes state at its own
// time.
func syntheticRollout(pods, syncs int) *Timeline {
	tl := &Timeline{Scenario: fmt.Sprintf("synthetic-%dx%d", pods, syncs), Model: "delays", Start: "2026-11-22T10:00:00Z",
		Revisions: []RevisionLabel{{Label: "A", Name: "web-6cbd9df98d", Number: 1}, {Label: "B", Name: "web-54cb854cf9", Number: 2}}}
	perPod := max(syncs/pods, 1)
	for i := 0; i < syncs; i++ {
		instant := i / 3
		st := Step{Index: i, Offset: Duration(time.Duration(instant) * 2 * time.Second), Trigger: []string{"watch"},
			Revisions: fmt.Sprintf("replicas=%d ready=%d available=%d current=%d updated=%d revisions A->B", pods, pods-1, pods-1, pods-i/perPod, i/perPod)}
		if i == 0 {
			st.Trigger = []string{"user"}
			st.World = []WorldEvent{{Source: "user", Message: `set spec.template.spec.containers[0].image = "nginx:1.26"`}}
		} else if i%3 == 0 && instant%10 == 0 {
			st.Trigger = []string{"requeue"}
		}
		rolling := pods - 1 - i/perPod // maxUnavailable 1, highest ordinal first
		var states []PodState
		for o := 0; o < pods; o++ {
			p := PodState{Name: fmt.Sprintf("web-%d", o), Ordinal: o, Label: "A", Phase: "Running", Ready: true}
			switch {
			case o > rolling:
				p.Label = "B"
			case o == rolling && i%perPod < perPod/3:
				p.Terminating = true
			case o == rolling && i%perPod < 2*perPod/3:
				p.Label, p.Phase, p.Ready = "B", "Pending", false
			case o == rolling:
				p.Label, p.Ready = "B", false
			}
			states = append(states, p)
		}
		st.Pods = GridOf(states)
		st.Actions = []ActionRecord{{Verb: "updateStatus", Kind: world.KindSet, Name: "web", Detail: st.Revisions}}
		tl.Steps = append(tl.Steps, st)
	}
	tl.Outcome = Outcome{Result: "complete", Summary: fmt.Sprintf("all %d pods Ready at revision B", pods), Steps: syncs, Duration: tl.Steps[syncs-1].Offset}
	return tl
}

// editsScenario is a set of 2 pods whose image is edited edits times, each edit once the previous one has
// rolled out: edits+1 revisions, and edits user edits spread over the picture.
func editsScenario(t testing.TB, edits int) *Scenario {
	t.Helper()
	var ev strings.Builder
	for i := 1; i <= edits; i++ {
		fmt.Fprintf(&ev, "  - settled: true\n    after: 10s\n    set: {\"spec.template.spec.containers[0].image\": \"nginx:1.%d\"}\n", i)
	}
	y := fmt.Sprintf(`name: edits-%[1]d
description: "2 replicas, image edited %[1]d times, each edit once the previous one rolled out"
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default}
    spec:
      replicas: 2
      serviceName: web
      podManagementPolicy: Parallel
      selector:
        matchLabels: {app: web}
      template:
        metadata:
          labels: {app: web}
        spec:
          containers:
            - {name: nginx, image: "nginx:1.0"}
events:
%[2]s`, edits, ev.String())
	sc, err := ParseScenario([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// noPodsScenario is a set of 0 replicas whose image is edited: a replay without a single pod.
func noPodsScenario(t testing.TB) *Scenario {
	t.Helper()
	sc, err := ParseScenario([]byte(`name: no-pods
description: "0 replicas: the image is edited, no pod ever exists"
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default}
    spec:
      replicas: 0
      serviceName: web
      selector:
        matchLabels: {app: web}
      template:
        metadata:
          labels: {app: web}
        spec:
          containers:
            - {name: nginx, image: "nginx:1.25"}
events:
  - settled: true
    after: 30s
    set: {"spec.template.spec.containers[0].image": "nginx:1.26"}
`))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

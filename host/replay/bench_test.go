package replay

import (
	"context"
	"fmt"
	"testing"
)

// benchScenario is a set of n replicas created from a manifest (OrderedReady by default; Parallel
// with maxUnavailable 10%), and with roll, its image bumped once it settles.
func benchScenario(n int, parallel, roll bool) string {
	policy := ""
	if parallel {
		policy = "\n      podManagementPolicy: Parallel\n      updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: \"10%\"}}"
	}
	events := ""
	if roll {
		events = "\nevents:\n  - settled: true\n    after: 5s\n    set:\n      spec.template.spec.containers[0].image: \"registry.k8s.io/nginx-slim:0.28\""
	}
	return fmt.Sprintf(`name: bench
description: bench
kubelet: {model: tick}
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default, labels: {app: web}}
    spec:
      replicas: %d
      serviceName: web%s
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
            - {name: nginx, image: "registry.k8s.io/nginx-slim:0.27", ports: [{name: web, containerPort: 80}]}%s
`, n, policy, events)
}

// BenchmarkReplay replays creations and rollouts with the tick model (what `make bench-upstream`
// compares with oracle simulate); syncs/op says how many module calls one replay made.
func BenchmarkReplay(b *testing.B) {
	for _, c := range []struct {
		name           string
		n              int
		parallel, roll bool
	}{{"create-100", 100, false, false}, {"create-300", 300, false, false}, {"roll-300-parallel", 300, true, true}} {
		sc, err := ParseScenario([]byte(benchScenario(c.n, c.parallel, c.roll)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			var syncs int
			for b.Loop() {
				tl, err := Run(context.Background(), sc, testOptions())
				if err != nil {
					b.Fatal(err)
				}
				if tl.Outcome.Result != "complete" {
					b.Fatalf("outcome %s: %s", tl.Outcome.Result, tl.StopReason)
				}
				syncs = len(tl.Steps)
			}
			b.ReportMetric(float64(syncs), "syncs/op")
		})
	}
}

package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
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

// BenchmarkPreview previews an image change of a settled 300-pod set with the delays model (PreviewEdit:
// the edit's replay, the traps it looks for, and the never-Ready what-if); syncs/op counts the replays' module calls. The tests' checks
// of every encode and collection (TestMain) are off: this measures what a user's preview costs.
func BenchmarkPreview(b *testing.B) {
	defer withoutChecks()()
	for _, c := range []struct {
		name     string
		parallel bool
	}{{"image-300-orderedready", false}, {"image-300-parallel", true}} {
		sc, err := ParseScenario([]byte(strings.Replace(benchScenario(300, c.parallel, false), "kubelet: {model: tick}\n", "", 1)))
		if err != nil {
			b.Fatal(err)
		}
		tl, err := Run(context.Background(), sc, testOptions())
		if err != nil || tl.Outcome.Result != "complete" {
			b.Fatalf("creating the set: %v %+v", err, tl.Outcome)
		}
		base, err := ScenarioFromSnapshot(tl.Final)
		if err != nil {
			b.Fatal(err)
		}
		edit := mustJSON(jsonobj.GetObj(mustDecode(b, tl.Final), "statefulSet"))
		edit = []byte(strings.Replace(string(edit), "nginx-slim:0.27", "nginx-slim:0.28", 1))
		b.Run(c.name, func(b *testing.B) {
			var syncs int
			for b.Loop() {
				p := previewComplete(b, base, edit)
				syncs = p.Outcome.Steps
				if n := p.NeverReady; n != nil { // the what-if's replays (preview_never_ready.go)
					syncs += n.Outcome.Steps
					if n.Undo != nil {
						syncs += n.Undo.Outcome.Steps
					}
				}
			}
			b.ReportMetric(float64(syncs), "syncs/op")
		})
	}
}

// withoutChecks turns off the tests' checks of every encode, collection and tracked delta (TestMain) until
// the function it returns is called: a benchmark measures what a user's replay costs.
func withoutChecks() (restore func()) {
	enc, graph, tracked := verifyEncodedObjects, world.VerifyOwnerGraph, wasm.VerifyTrackedChanges
	verifyEncodedObjects, world.VerifyOwnerGraph, wasm.VerifyTrackedChanges = false, false, false
	return func() { verifyEncodedObjects, world.VerifyOwnerGraph, wasm.VerifyTrackedChanges = enc, graph, tracked }
}

// previewComplete previews edit of base as `ordinal preview --scenario` does, failing unless it completes.
func previewComplete(b *testing.B, base *Scenario, edit []byte) *Preview {
	p, err := PreviewEdit(context.Background(), base, edit, testOptions())
	if err != nil {
		b.Fatal(err)
	}
	if p.Outcome.Result != "complete" {
		b.Fatalf("outcome %s: %s", p.Outcome.Result, p.Outcome.Summary)
	}
	return p
}

func mustDecode(b *testing.B, js []byte) Obj {
	o, err := jsonobj.DecodeObj(js)
	if err != nil {
		b.Fatal(err)
	}
	return o
}

// BenchmarkPreviewClaims previews an image change of a settled OrderedReady set with a claim per pod (the
// figure of docs/evidence/performance.md), PreviewEdit as `ordinal preview --scenario` runs it.
func BenchmarkPreviewClaims(b *testing.B) {
	defer withoutChecks()()
	for _, n := range []int{300, 1000} {
		b.Run(fmt.Sprintf("image-%d-orderedready-claims", n), func(b *testing.B) {
			base, edit := settledWithClaims(b, n)
			var syncs int
			for b.Loop() {
				syncs = previewComplete(b, base, edit).Outcome.Steps
			}
			b.ReportMetric(float64(syncs), "syncs/op")
		})
	}
}

// settledWithClaims is the world a created n-pod OrderedReady set with a claim template settles in, and the
// set with its image changed.
func settledWithClaims(b *testing.B, n int) (*Scenario, []byte) {
	src := strings.Replace(benchScenario(n, false, false), "kubelet: {model: tick}\n", "", 1)
	src = strings.Replace(src, `containerPort: 80}]}`, `containerPort: 80}], volumeMounts: [{name: data, mountPath: /data}]}
      volumeClaimTemplates:
        - metadata: {name: data}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}`, 1)
	sc, err := ParseScenario([]byte(src))
	if err != nil {
		b.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil || tl.Outcome.Result != "complete" {
		b.Fatalf("creating the set: %v %+v", err, tl.Outcome)
	}
	if got := len(jsonobj.GetArr(mustDecode(b, tl.Final), "claims")); got != n {
		b.Fatalf("the settled world has %d claims, want %d", got, n)
	}
	base, err := ScenarioFromSnapshot(tl.Final)
	if err != nil {
		b.Fatal(err)
	}
	edit := mustJSON(jsonobj.GetObj(mustDecode(b, tl.Final), "statefulSet"))
	return base, []byte(strings.Replace(string(edit), "nginx-slim:0.27", "nginx-slim:0.28", 1))
}

// BenchmarkWriteJSON writes the timeline of a 300-pod Parallel rollout as `ordinal replay -o json` does
// (WriteJSON through termsafe's writer): most of a short replay's output is its steps' pods and plans.
func BenchmarkWriteJSON(b *testing.B) {
	defer withoutChecks()()
	sc, err := ParseScenario([]byte(benchScenario(300, true, true)))
	if err != nil {
		b.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for b.Loop() {
		c := &countingWriter{}
		j := termsafe.NewJSONWriter(c)
		if err := tl.WriteJSON(j); err != nil {
			b.Fatal(err)
		}
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
		n = c.n
	}
	b.SetBytes(n)
}

// countingWriter counts what it is given.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

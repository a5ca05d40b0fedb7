package wasm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/policies"
)

// BenchmarkPolicyOverhead is what a set's policies add to a sync (issue 29: at most 10%): a 1000-pod set
// mid-rollout, its module call (the whole snapshot, as a sync without a session sends it) and, in the same
// iteration, the three shipped policies judging its plan (each given the set and the objects the plan
// names, the pdb policy a budget), with a policy.Run per sync as hosts make it. It reports policies/sync,
// the ratio of the two times: "index" finds the plan's objects by reading the snapshot's lists (a host
// without an object lookup), "lookup" through the host's lookup (the replay's).
func BenchmarkPolicyOverhead(b *testing.B) {
	for _, lookup := range []bool{false, true} {
		name := map[bool]string{false: "index", true: "lookup"}[lookup]
		b.Run(name, func(b *testing.B) { benchPolicyOverhead(b, lookup) })
	}
}

func benchPolicyOverhead(b *testing.B, lookup bool) {
	ctx := context.Background()
	m := loadGuest(b, wasm.Config{})
	snap := strings.Replace(string(rollingUpdateSnapshot(1000)), `"labels":{"app":"web"}},"spec":{"replicas"`,
		`"labels":{"app":"web"},"annotations":{"ordinal.dev/policies":"handoff,window,pdb","window.ordinal.dev/allow":"00:00-24:00"}},"spec":{"replicas"`, 1)
	if !strings.Contains(snap, "window.ordinal.dev/allow") {
		b.Fatal("the set carries no policies")
	}
	var mods []policy.Module
	for _, name := range []string{"handoff", "window", "pdb"} {
		p, err := wasm.LoadPolicy(ctx, policies.Builtin()[name], wasm.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close(ctx)
		mods = append(mods, p)
	}
	budget := json.RawMessage(`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web","namespace":"default","generation":1},` +
		`"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}},"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":1000,"desiredHealthy":999}}`)
	memory := &policy.Memory{}
	var object func(kind, name string) (json.RawMessage, bool)
	if lookup { // what the replay's snapshot builder knows as it writes the snapshot
		var s struct{ Pods []json.RawMessage }
		if err := json.Unmarshal([]byte(snap), &s); err != nil {
			b.Fatal(err)
		}
		byName := map[string]json.RawMessage{}
		for i, p := range s.Pods {
			byName[fmt.Sprintf("web-%d", i)] = p
		}
		object = func(kind, name string) (json.RawMessage, bool) {
			raw, ok := byName[name]
			return raw, ok && kind == "Pod"
		}
	}
	var syncTime, policyTime time.Duration
	for b.Loop() {
		t0 := time.Now()
		raw, err := m.Reconcile(ctx, []byte(snap))
		if err != nil {
			b.Fatal(err)
		}
		p, err := plan.Decode(raw)
		if err != nil || len(p.Actions) == 0 {
			b.Fatalf("plan: %v", err)
		}
		t1 := time.Now()
		run := &policy.Run{Policies: mods, Snapshot: []byte(snap), Memory: memory, PodDisruptionBudgets: []json.RawMessage{budget}, Object: object,
			Failed: func(f policy.Failure) { b.Fatal(f) }} // one per sync, as hosts make it
		run.Judge(ctx, p, 0)
		policyTime += time.Since(t1)
		syncTime += t1.Sub(t0)
	}
	b.ReportMetric(float64(policyTime)/float64(syncTime), "policies/sync")
}

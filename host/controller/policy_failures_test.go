package controller

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// A policy that traps holds nothing back (the pod is created), and the controller says so: a Warning
// PolicyFailed event on the set and ordinal_policy_failures_total{policy, reason="trap"}.
func TestPolicyFailureIsCountedAndRecorded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api := &fakeAPI{}
	c := withBadPolicy(t, ctx, api, "trap")
	rec := record.NewFakeRecorder(20)
	c.recorder = rec
	if _, err := c.sync(ctx, "ns/web"); err != nil {
		t.Fatal(err)
	}
	created := false
	for _, r := range api.reqs {
		created = created || r.Method == "POST" && strings.HasSuffix(r.Path, "/pods")
	}
	if !created {
		t.Errorf("the failing policy held the pod's create back: requests %v", api.reqs)
	}
	if v, ok := series(t, c.metrics, "ordinal_policy_failures_total", map[string]string{"policy": "bad", "reason": policy.FailTrap}); !ok || v != 1 {
		t.Errorf("ordinal_policy_failures_total{policy=bad,reason=trap}: present %v, value %v; want 1", ok, v)
	}
	var events []string
	for len(rec.Events) > 0 {
		events = append(events, <-rec.Events)
	}
	if !strings.Contains(strings.Join(events, "\n"), "Warning PolicyFailed policy bad: ") {
		t.Errorf("events %q, want a Warning PolicyFailed naming the policy", events)
	}
}

// A held sync whose record of the holds (the set's policy-held annotation) is refused fails, so the set is
// retried with the error backoff: the hold's own retry may be hours away (a closed window), and until the
// record lands a restarted controller would time the hold afresh. (Found by chaos: a window policy's hold
// recorded in the status, not in the annotation, for 3 minutes and counting.)
func TestARefusedRecordOfTheHoldsIsRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const setPath = "PATCH /apis/apps/v1/namespaces/ns/statefulsets/web"
	api := &fakeAPI{failures: map[string]int{setPath: 500}}
	c := withBadPolicy(t, ctx, api, "hold")
	c.recorder = record.NewFakeRecorder(20)
	_, err := c.sync(ctx, "ns/web")
	patched := false
	for _, r := range api.reqs {
		patched = patched || r.Method+" "+r.Path == setPath && strings.Contains(r.Body, policy.AnnotationHeld)
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/pods") {
			t.Errorf("the held create was sent: %v", r)
		}
	}
	if !patched {
		t.Fatalf("no record of the hold was written: requests %v", api.reqs)
	}
	if err == nil || !strings.Contains(err.Error(), policy.AnnotationHeld) {
		t.Errorf("sync error %v, want the refused record of the holds (retried with the error backoff)", err)
	}
}

// withBadPolicy is a controller of the 1-replica set ns/web, on the embedded module, whose one policy is
// the test policy "bad" told to misbehave as misbehave says (its testdata/badpolicy/main.go).
func withBadPolicy(t *testing.T, ctx context.Context, api *fakeAPI, misbehave string) *Controller {
	t.Helper()
	m, err := loadModule(ctx, embedded.Module())
	if err != nil {
		t.Fatal(err)
	}
	ref := &module.Ref{}
	ref.Install(m, module.InfoOf(m), func() { m.Close(ctx) })
	code, err := os.ReadFile("../wasm/testdata/badpolicy.wasm")
	if err != nil {
		t.Fatal(err)
	}
	policies := policy.NewRegistry(func(ctx context.Context, code []byte) (*wasm.Policy, error) {
		return wasm.LoadPolicy(ctx, code, wasm.Config{})
	}, nil)
	t.Cleanup(policies.Close)
	if err := policies.AddFile(ctx, code, "badpolicy.wasm"); err != nil {
		t.Fatal(err)
	}
	set := defaulted(t, kubetest.Set())
	set.Spec.Replicas = ptr.To[int32](1)
	set.Annotations = map[string]string{abi.AnnotationPolicies: "bad", "misbehave": misbehave}
	c := newFakeController(t, ctx, ref, api, set)
	c.cfg.Policies = policies
	return c
}

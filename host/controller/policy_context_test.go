package controller

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
)

// namedOnly is a policy that asks for no context beyond held and signals.
type namedOnly string

func (n namedOnly) Name() string    { return string(n) }
func (namedOnly) Wants(string) bool { return false }
func (namedOnly) Evaluate(context.Context, []byte) ([]byte, error) {
	return []byte(`{"abi":1,"holds":[]}`), nil
}

// LivePolicyContext, the one way a preview of a live set gives its policies their context: the signals of
// the ConfigMap named (none when it does not exist), nothing read for a set that names no policy or without
// a client, and a malformed reference refused.
func TestLivePolicyContext(t *testing.T) {
	ctx := context.Background()
	get := func(_ context.Context, name string) (policy.Module, error) { return namedOnly(name), nil }
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", Annotations: map[string]string{abi.AnnotationPolicies: "window"}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "signals", Namespace: "ops"}, Data: map[string]string{"db-healthy": "true"}}
	client := fake.NewClientset(cm)

	pc, err := LivePolicyContext(ctx, client, set, nil, get, "ops/signals")
	if err != nil || len(pc.Policies) != 1 || string(pc.Signals["db-healthy"]) != "true" {
		t.Fatalf("%+v, %v", pc, err)
	}
	if pc, err := LivePolicyContext(ctx, client, set, nil, get, "ops/gone"); err != nil || len(pc.Signals) != 0 {
		t.Fatalf("a ConfigMap that does not exist: %+v, %v (want no signals)", pc, err)
	}
	if _, err := LivePolicyContext(ctx, client, set, nil, get, "signals"); err == nil || !strings.Contains(err.Error(), "NAMESPACE/NAME") {
		t.Fatalf("a malformed reference: %v", err)
	}
	calls := len(client.Actions())
	bare := set.DeepCopy()
	bare.Annotations = nil
	if pc, err := LivePolicyContext(ctx, client, bare, nil, get, "ops/signals"); err != nil || pc.Policies != nil || len(client.Actions()) != calls {
		t.Fatalf("a set naming no policy: %+v, %v, %d calls", pc, err, len(client.Actions())-calls)
	}
	if pc, err := LivePolicyContext(ctx, nil, set, nil, get, "ops/signals"); err != nil || len(pc.Policies) != 1 || pc.Signals != nil {
		t.Fatalf("without a client: %+v, %v", pc, err)
	}
}

package policy

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/ordinal-dev/ordinal/abi"
)

// namedOnly is a policy that asks for no context beyond held and signals.
type namedOnly string

func (n namedOnly) Name() string    { return string(n) }
func (namedOnly) Wants(string) bool { return false }
func (namedOnly) Evaluate(context.Context, []byte) ([]byte, error) {
	return []byte(`{"abi":1,"holds":[]}`), nil
}

// ReadLiveContext, the one way a preview of a live set gives its policies their context: the signals of
// the ConfigMap named (none when it does not exist), nothing read for a set that names no policy or without
// a client, and a malformed reference refused.
func TestReadLiveContext(t *testing.T) {
	ctx := context.Background()
	get := func(_ context.Context, name string) (Module, error) { return namedOnly(name), nil }
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", Annotations: map[string]string{abi.AnnotationPolicies: "window"}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "signals", Namespace: "ops"}, Data: map[string]string{"db-healthy": "true"}}
	client := k8sfake.NewClientset(cm)

	pc, err := ReadLiveContext(ctx, client, set, nil, get, "ops/signals")
	if err != nil || len(pc.Policies) != 1 || string(pc.Signals["db-healthy"]) != "true" {
		t.Fatalf("%+v, %v", pc, err)
	}
	if pc, err := ReadLiveContext(ctx, client, set, nil, get, "ops/gone"); err != nil || len(pc.Signals) != 0 {
		t.Fatalf("a ConfigMap that does not exist: %+v, %v (want no signals)", pc, err)
	}
	if _, err := ReadLiveContext(ctx, client, set, nil, get, "signals"); err == nil || !strings.Contains(err.Error(), "NAMESPACE/NAME") {
		t.Fatalf("a malformed reference: %v", err)
	}
	calls := len(client.Actions())
	bare := set.DeepCopy()
	bare.Annotations = nil
	if pc, err := ReadLiveContext(ctx, client, bare, nil, get, "ops/signals"); err != nil || pc.Policies != nil || len(client.Actions()) != calls {
		t.Fatalf("a set naming no policy: %+v, %v, %d calls", pc, err, len(client.Actions())-calls)
	}
	if pc, err := ReadLiveContext(ctx, nil, set, nil, get, "ops/signals"); err != nil || len(pc.Policies) != 1 || pc.Signals != nil {
		t.Fatalf("without a client: %+v, %v", pc, err)
	}
}

// A signal is its value as JSON where the value is JSON, else the string; a ConfigMap gone is no signals.
func TestSignalsFromAConfigMap(t *testing.T) {
	var s Signals
	if s.Get() != nil {
		t.Fatal("signals before any ConfigMap")
	}
	s.Set(&corev1.ConfigMap{Data: map[string]string{"db-healthy": "true", "lag": "3", "state": "degraded", "obj": `{"ok":false}`}})
	got := s.Get()
	for k, want := range map[string]string{"db-healthy": "true", "lag": "3", "state": `"degraded"`, "obj": `{"ok":false}`} {
		if string(got[k]) != want {
			t.Errorf("%s = %s, want %s", k, got[k], want)
		}
	}
	s.Set(nil)
	if len(s.Get()) != 0 {
		t.Fatalf("signals after the ConfigMap is gone: %v", s.Get())
	}
	var none *Signals
	if none.Get() != nil {
		t.Fatal("a nil Signals has signals")
	}
}

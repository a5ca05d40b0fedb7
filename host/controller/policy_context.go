package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
)

// PolicyContext is what a set's policies read besides its snapshot, read once from the cluster as a sync
// has it: the PodDisruptionBudgets and nodes a policy asks for, and the signals.
type PolicyContext struct {
	Policies       []policy.Module // the policies the set names, resolved
	Budgets, Nodes []json.RawMessage
	Signals        map[string]json.RawMessage
}

// LivePolicyContext is the one way a preview of a live set gives its policies their context — `kubectl
// ordinal preview|timeline|status` and the webhook's previews — as the controller's sync gives it (policy.Live,
// and the signals it watches): it resolves the policies set names (ordinal.dev/policies) with get and, when
// it names any, reads from the API server the PodDisruptionBudgets and nodes of pods they ask for
// (policy.Live) and the signals of the ConfigMap signals names (NAMESPACE/NAME, the controller's
// --signals-configmap; "": none; a ConfigMap that does not exist: none, as in the controller). Without a
// client (c nil) only the policies. An error is a context the policies cannot be given: the caller does
// not preview without it, as a sync does not run without it.
func LivePolicyContext(ctx context.Context, c kubernetes.Interface, set *appsv1.StatefulSet, pods []*corev1.Pod,
	get func(context.Context, string) (policy.Module, error), signals string) (PolicyContext, error) {
	var out PolicyContext
	value, ok := set.Annotations[abi.AnnotationPolicies]
	if !ok {
		return out, nil
	}
	var err error
	if out.Policies, err = policy.Resolve(ctx, value, get); err != nil || len(out.Policies) == 0 || c == nil {
		return out, err
	}
	if out.Budgets, out.Nodes, err = policy.Live(ctx, c, set.Namespace, pods, out.Policies); err != nil {
		return out, err
	}
	if signals == "" {
		return out, nil
	}
	ns, name, err := SignalsConfigMapRef(signals)
	if err != nil {
		return out, err
	}
	cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm = nil // no ConfigMap: no signals, as in the controller
	case err != nil:
		return out, fmt.Errorf("--signals-configmap %s: %w", signals, err)
	}
	var s Signals
	s.Set(cm)
	out.Signals = s.Get()
	return out, nil
}

// SignalsConfigMapRef reads --signals-configmap's NAMESPACE/NAME.
func SignalsConfigMapRef(ref string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(ref, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("--signals-configmap must be NAMESPACE/NAME, not %q", ref)
	}
	return namespace, name, nil
}

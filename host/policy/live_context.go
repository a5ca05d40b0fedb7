package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/abi"
)

// LiveContext is what a set's policies read besides its snapshot, read once from the cluster as a sync
// has it: the PodDisruptionBudgets and nodes a policy asks for, and the signals.
type LiveContext struct {
	Policies       []Module // the policies the set names, resolved
	Budgets, Nodes []json.RawMessage
	Signals        map[string]json.RawMessage
}

// ReadLiveContext is the one way a preview of a live set gives its policies their context — `kubectl
// ordinal preview|timeline|status` and the webhook's previews — as the controller's sync gives it (Live,
// and the signals it watches): it resolves the policies set names (ordinal.dev/policies) with get and, when
// it names any, reads from the API server the PodDisruptionBudgets and nodes of pods they ask for
// (Live) and the signals of the ConfigMap signals names (NAMESPACE/NAME, the controller's
// --signals-configmap; "": none; a ConfigMap that does not exist: none, as in the controller). Without a
// client (c nil) only the policies. An error is a context the policies cannot be given: the caller does
// not preview without it, as a sync does not run without it.
func ReadLiveContext(ctx context.Context, c kubernetes.Interface, set *appsv1.StatefulSet, pods []*corev1.Pod,
	get func(context.Context, string) (Module, error), signals string) (LiveContext, error) {
	var out LiveContext
	value, ok := set.Annotations[abi.AnnotationPolicies]
	if !ok {
		return out, nil
	}
	var err error
	if out.Policies, err = Resolve(ctx, value, get); err != nil || len(out.Policies) == 0 || c == nil {
		return out, err
	}
	if out.Budgets, out.Nodes, err = Live(ctx, c, set.Namespace, pods, out.Policies); err != nil {
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

// Signals are the values the controller supplies the sets' policies (abi.PolicyContext.Signals), read from
// one ConfigMap (--signals-configmap): each data key a signal, its value JSON where it is JSON (true,
// 3, {"ok":true}), else the string. Whoever knows the signal — a health check, a CI job, an operator —
// writes the ConfigMap; a policy never fetches anything itself. Safe for concurrent use.
type Signals struct {
	mu     sync.RWMutex
	values map[string]json.RawMessage
}

// Get returns the current signals (nil: none yet). The map is not changed afterwards.
func (s *Signals) Get() map[string]json.RawMessage {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.values
}

// Set replaces the signals with a ConfigMap's data (nil: the ConfigMap is gone, no signals).
func (s *Signals) Set(cm *corev1.ConfigMap) {
	values := map[string]json.RawMessage{}
	if cm != nil {
		for k, v := range cm.Data {
			if json.Valid([]byte(v)) {
				values[k] = json.RawMessage(v)
			} else {
				b, _ := json.Marshal(v)
				values[k] = b
			}
		}
	}
	s.mu.Lock()
	s.values = values
	s.mu.Unlock()
}

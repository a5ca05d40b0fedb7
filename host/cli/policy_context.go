package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/controller"
	"github.com/ordinal-dev/ordinal/host/policy"
)

// livePolicyContext is what a set's policies read besides the snapshot, fetched from the cluster for
// `kubectl ordinal preview|timeline|status` as the controller fetches it for a sync: the
// PodDisruptionBudgets and nodes a policy asks for (policy.Live) and the signals of --signals-configmap
// (the controller's flag, read once here).
type livePolicyContext struct {
	Policies       []policy.Module // the policies the set names, resolved
	Budgets, Nodes []json.RawMessage
	Signals        map[string]json.RawMessage
}

// policyContextFlags are a plugin command's flags for what a set's policies read: --signals-configmap.
type policyContextFlags struct{ ref string }

func (f *policyContextFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.ref, "signals-configmap", "", "NAMESPACE/NAME of the ConfigMap of signals the controller gives the sets' policies (its --signals-configmap), read once: the policies see them as in a sync")
}

// fetch resolves the policies set names and reads their context (nothing when it names none; nothing
// live without a client).
func (f *policyContextFlags) fetch(ctx context.Context, c kubernetes.Interface, set *appsv1.StatefulSet, pods []*corev1.Pod,
	get func(context.Context, string) (policy.Module, error)) (livePolicyContext, error) {
	var out livePolicyContext
	value, ok := set.Annotations[abi.AnnotationPolicies]
	if !ok {
		return out, nil
	}
	var err error
	if out.Policies, err = policy.Resolve(ctx, value, get); err != nil {
		return out, withCode(ExitUsage, err)
	}
	if c == nil {
		return out, nil
	}
	if out.Budgets, out.Nodes, err = policy.Live(ctx, c, set.Namespace, pods, out.Policies); err != nil {
		return out, withCode(ExitUsage, err)
	}
	if f.ref == "" {
		return out, nil
	}
	ns, name, ok := strings.Cut(f.ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return out, withCode(ExitUsage, fmt.Errorf("--signals-configmap must be NAMESPACE/NAME, not %q", f.ref))
	}
	cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm = nil // no ConfigMap: no signals, as in the controller
	case err != nil:
		return out, withCode(ExitUsage, fmt.Errorf("--signals-configmap %s: %w", f.ref, err))
	}
	var s controller.Signals
	s.Set(cm)
	out.Signals = s.Get()
	return out, nil
}

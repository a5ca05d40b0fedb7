package policy

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// Budgets are the PodDisruptionBudgets of ns that select any of pods, as the API server returns them, for
// the policies that ask for them (abi.ContextPodDisruptionBudgets): the controller's syncs and `kubectl
// ordinal status`. Read when needed, from the API server (a policy that guards disruptions must not decide
// from a cache that lags a budget's status more than the disruption controller does); an error fails the
// caller rather than let such a policy decide without its budgets.
func Budgets(ctx context.Context, client kubernetes.Interface, ns string, pods []*corev1.Pod) ([]json.RawMessage, error) {
	list, err := client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the PodDisruptionBudgets a policy of the set reads: %w", err)
	}
	var out []json.RawMessage
	for i := range list.Items {
		pdb := &list.Items[i]
		if pdb.Spec.Selector == nil {
			continue // policy/v1: selects nothing
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		if !selectsAny(sel, pods) {
			continue
		}
		pdb.APIVersion, pdb.Kind = policyv1.SchemeGroupVersion.String(), "PodDisruptionBudget"
		b, err := json.Marshal(pdb)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func selectsAny(sel labels.Selector, pods []*corev1.Pod) bool {
	for _, p := range pods {
		if sel.Matches(labels.Set(p.Labels)) {
			return true
		}
	}
	return false
}

// ClientBudgets commits spent disruptions (Run.Budgets) to an API server, under the budget's resourceVersion,
// as the eviction subresource writes them; FieldManager names the writer in the budget's managedFields.
type ClientBudgets struct {
	Client       kubernetes.Interface
	FieldManager string
}

// UpdateBudgetStatus writes pdb's status (BudgetWriter).
func (c ClientBudgets) UpdateBudgetStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error) {
	return c.Client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, pdb, metav1.UpdateOptions{FieldManager: c.FieldManager})
}

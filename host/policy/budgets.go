package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// Budgets are the PodDisruptionBudgets of ns that select any of pods, as the API server returns them, for
// the policies that ask for them (abi.ContextPodDisruptionBudgets), listed from the API server: previews of
// a live set (`kubectl ordinal preview|status`, the webhook). The controller reads its informer's (BudgetsOf):
// a delete's spend is written under the budget's resourceVersion, so a cache that lags cannot overspend it.
// An error fails the caller rather than let such a policy decide without its budgets.
func Budgets(ctx context.Context, client kubernetes.Interface, ns string, pods []*corev1.Pod) ([]json.RawMessage, error) {
	list, err := client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the PodDisruptionBudgets a policy of the set reads: %w", err)
	}
	budgets := make([]*policyv1.PodDisruptionBudget, len(list.Items))
	for i := range list.Items {
		budgets[i] = &list.Items[i]
	}
	return BudgetsOf(budgets, pods)
}

// BudgetsOf are the budgets that select any of pods, each as JSON with its apiVersion and kind and without
// managedFields, in name order (abi.PolicyContext.PodDisruptionBudgets).
func BudgetsOf(budgets []*policyv1.PodDisruptionBudget, pods []*corev1.Pod) ([]json.RawMessage, error) {
	budgets = slices.Clone(budgets)
	slices.SortFunc(budgets, func(a, b *policyv1.PodDisruptionBudget) int { return strings.Compare(a.Name, b.Name) })
	var out []json.RawMessage
	for _, pdb := range budgets {
		sel := budgetSelector(pdb.Spec.Selector)
		if sel == nil || !selectsAny(sel, pods) {
			continue
		}
		pdb = pdb.DeepCopy() // a cache's objects are shared: the kind is set on a copy
		pdb.APIVersion, pdb.Kind = policyv1.SchemeGroupVersion.String(), "PodDisruptionBudget"
		pdb.ManagedFields = nil // as the controller's informers keep it, whichever way it was read
		b, err := json.Marshal(pdb)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// budgetSelector is a budget's selector as labels.Selector, nil when it selects nothing: policy/v1's budget
// without a selector, or one that does not parse (its validation refuses those).
func budgetSelector(s *metav1.LabelSelector) labels.Selector {
	if s == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil
	}
	return sel
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

// Budget reads a budget from the API server (BudgetWriter).
func (c ClientBudgets) Budget(ctx context.Context, namespace, name string) (*policyv1.PodDisruptionBudget, error) {
	return c.Client.PolicyV1().PodDisruptionBudgets(namespace).Get(ctx, name, metav1.GetOptions{})
}

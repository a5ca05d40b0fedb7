package policy

import (
	"context"
	"encoding/json"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/abi"
)

// budgetStores are several budgets' status subresources, by name.
type budgetStores map[string]*budgetStore

func (s budgetStores) Budget(ctx context.Context, ns, name string) (*policyv1.PodDisruptionBudget, error) {
	return s[name].Budget(ctx, ns, name)
}

func (s budgetStores) UpdateBudgetStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error) {
	return s[pdb.Name].UpdateBudgetStatus(ctx, pdb)
}

// POLICY.md 4.1: "A held delete spends nothing." A delete that spends two budgets, the first with a
// disruption and the second with none, is held; the first budget must not keep the spend.
func TestAHeldDeleteSpendsNothingOfItsOtherBudgets(t *testing.T) {
	first, second := newBudgetStore(1), newBudgetStore(0)
	second.b.Name = "db-zone"
	stores := budgetStores{"db": first, "db-zone": second}
	r := &Run{Policies: []Module{spender(`{"action":0,"podDisruptionBudget":"db"},{"action":0,"podDisruptionBudget":"db-zone"}`)},
		Snapshot: []byte(spendSnapshot), PodDisruptionBudgets: []json.RawMessage{first.raw(t), second.raw(t)}, Budgets: stores, Now: spendNow}
	p := &abi.Plan{ABI: 1, Actions: spendPlan().Actions[:1]}
	if holds := r.Judge(context.Background(), p, 0); len(holds) != 0 {
		t.Fatalf("holds %+v", holds)
	}
	h := r.Admit(context.Background(), p, 0)
	if h == nil {
		t.Fatal("the delete was admitted though db-zone has no disruption left")
	}
	if first.b.Status.DisruptionsAllowed != 1 || len(first.b.Status.DisruptedPods) != 0 {
		t.Fatalf("the delete is held (%s), yet budget db keeps its spend: disruptionsAllowed %d, disruptedPods %v",
			h.Message, first.b.Status.DisruptionsAllowed, first.b.Status.DisruptedPods)
	}
}

// A budget read again after a 409 is spent without checking that it still selects the pod: its selector
// changed (and its controller observed the change) between the policy's read and the spend, so the host
// spends a disruption of a budget that does not select the pod the delete names (POLICY.md section 3: a
// spend names "a budget ... whose selector selects that pod").
func TestAReReadBudgetMustStillSelectThePod(t *testing.T) {
	store := newBudgetStore(1)
	given := store.raw(t)
	store.b = store.b.DeepCopy()
	store.b.ResourceVersion, store.b.Generation, store.b.Status.ObservedGeneration = "11", 2, 2
	store.b.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}
	r := &Run{Policies: []Module{spender(`{"action":0,"podDisruptionBudget":"db"}`)}, Snapshot: []byte(spendSnapshot),
		PodDisruptionBudgets: []json.RawMessage{given}, Budgets: store, Now: spendNow}
	p := &abi.Plan{ABI: 1, Actions: spendPlan().Actions[:1]}
	r.Judge(context.Background(), p, 0)
	h := r.Admit(context.Background(), p, 0)
	if h == nil || store.updates != 0 {
		t.Fatalf("held %+v, %d updates: budget db no longer selects web-1 (selector app=cache), yet its disruption was spent for it (disruptedPods %v)",
			h, store.updates, store.b.Status.DisruptedPods)
	}
}

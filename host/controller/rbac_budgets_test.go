package controller

import (
	"context"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/internal/rbacrules"
)

// What policy.ClientBudgets asks of the API server (a spend's update, and after a 409 the budget read again)
// is granted by the deployed RBAC: a re-read it may not make turns every conflicting spend into a held delete
// ("reading it again failed: ... forbidden") instead of the retry abi/POLICY.md 4.1 describes.
func TestTheBudgetsClientIsGrantedWhatItCalls(t *testing.T) {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "prod"}}
	client := fake.NewClientset(pdb)
	cb := policy.ClientBudgets{Client: client, FieldManager: FieldManager}
	if _, err := cb.UpdateBudgetStatus(context.Background(), pdb); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Budget(context.Background(), "prod", "db"); err != nil {
		t.Fatal(err)
	}
	used := map[string]string{}
	for _, a := range client.Actions() {
		r := a.GetResource().Group + "/" + a.GetResource().Resource
		if a.GetSubresource() != "" {
			r += "/" + a.GetSubresource()
		}
		used[r+" "+a.GetVerb()] = "policy.ClientBudgets"
	}
	for _, path := range []string{"../../examples/deploy/rbac.yaml"} { // the chart's is a template: kept the same by hand
		granted, err := rbacrules.Granted(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, missing := rbacrules.Compare(granted, used); len(missing) > 0 {
			t.Errorf("%s lacks what policy.ClientBudgets calls: %v", path, missing)
		}
	}
}

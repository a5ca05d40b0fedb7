package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/abi"
)

// updatedInPlace is web-1 updated in place to revision web-b at the spend: its status image, start and Ready
// condition as given, and extra members of its metadata.
func updatedInPlace(statusImage string, started time.Time, ready bool, meta string) string {
	return fmt.Sprintf(`{"metadata":{"name":"web-1","labels":{"app":"db","controller-revision-hash":"web-b"},`+
		`"annotations":{"ordinal.dev/in-place-update":"web-b"}%s},`+
		`"spec":{"containers":[{"name":"c","image":"img:2"}]},`+
		`"status":{"phase":"Running","conditions":[{"type":"Ready","status":"%s"}],`+
		`"containerStatuses":[{"name":"c","image":"%s","state":{"running":{"startedAt":"%s"}}}]}}`,
		meta, map[bool]string{true: "True", false: "False"}[ready], statusImage, started.UTC().Format(time.RFC3339))
}

// A disruption spent for an in-place update is given back once the pod runs its new spec and is Ready
// again, before the policies read the budget: the pod counts as healthy, and the next pod's update can
// spend the disruption in the same sync instead of after the disruption controller's two-minute timeout.
// Until then, and for any disruption that is not such a pod's, the budget is left as it is.
func TestSpentDisruptionOfAnInPlaceUpdateIsReturnedOnceItIsOver(t *testing.T) {
	later := spendNow.Add(3 * time.Second)
	for _, c := range []struct {
		name     string
		pod      string
		returned bool
	}{
		{"back", updatedInPlace("img:2", later, true, ""), true},
		{"restarted in the second of the spend", updatedInPlace("img:2", spendNow.Add(400*time.Millisecond), true, ""), true},
		{"containers not restarted yet", updatedInPlace("img:1", later, true, ""), false},
		{"not Ready yet", updatedInPlace("img:2", later, false, ""), false},
		{"started before the spend (an eviction's)", updatedInPlace("img:2", spendNow.Add(-time.Second), true, ""), false},
		{"being deleted", updatedInPlace("img:2", later, true, `,"deletionTimestamp":"2026-11-26T10:00:05Z"`), false},
		{"not updated in place", `{"metadata":{"name":"web-1","labels":{"app":"db"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := newBudgetStore(0)
			store.b.Status.CurrentHealthy, store.b.Status.DesiredHealthy = 2, 2
			store.b.Status.DisruptedPods = map[string]metav1.Time{"web-1": metav1.NewTime(spendNow)}
			var seen []int32
			pol := &fake{name: "pdb", answer: func(in abi.PolicyInput) (string, error) {
				for _, raw := range in.Context.PodDisruptionBudgets {
					var b policyv1.PodDisruptionBudget
					_ = json.Unmarshal(raw, &b)
					seen = append(seen, b.Status.DisruptionsAllowed)
				}
				return `{"abi":1,"holds":[]}`, nil
			}}
			snapshot := `{"abi":1,"now":"2026-11-26T10:00:10Z","statefulSet":{"metadata":{"name":"web"}},"pods":[` + c.pod + `]}`
			r := &Run{Policies: []Module{pol}, Snapshot: []byte(snapshot), PodDisruptionBudgets: []json.RawMessage{store.raw(t)},
				Budgets: store, Now: spendNow.Add(10 * time.Second)}
			r.Judge(context.Background(), spendPlan(), 0)
			r.Judge(context.Background(), spendPlan(), 1) // a later plan of the sync returns nothing twice
			b := store.b
			if !c.returned {
				if store.updates != 0 || len(seen) == 0 || seen[0] != 0 {
					t.Fatalf("%d updates, the policy saw disruptionsAllowed %v: want the budget left as it is", store.updates, seen)
				}
				return
			}
			if store.updates != 1 || len(b.Status.DisruptedPods) != 0 || b.Status.CurrentHealthy != 3 || b.Status.DisruptionsAllowed != 1 {
				t.Fatalf("%d updates, status %+v: want web-1 given back, counted healthy, one disruption allowed", store.updates, b.Status)
			}
			if len(seen) == 0 || seen[0] != 1 {
				t.Fatalf("the policy saw disruptionsAllowed %v: want the budget as returned (1)", seen)
			}
		})
	}
}

// A return the API server refuses (the budget changed since: its controller's recount) leaves the
// context's budget as read; the next sync tries again, and the disruption controller's timeout still
// returns it.
func TestSpentDisruptionReturnRefusedLeavesTheBudgetAsRead(t *testing.T) {
	store := newBudgetStore(0)
	store.b.Status.DisruptedPods = map[string]metav1.Time{"web-1": metav1.NewTime(spendNow)}
	given := store.raw(t)
	store.err = errors.New("conflict")
	pol := spender("")
	snapshot := `{"abi":1,"now":"2026-11-26T10:00:10Z","statefulSet":{"metadata":{"name":"web"}},"pods":[` +
		updatedInPlace("img:2", spendNow.Add(time.Second), true, "") + `]}`
	r := &Run{Policies: []Module{pol}, Snapshot: []byte(snapshot), PodDisruptionBudgets: []json.RawMessage{given},
		Budgets: store, Now: spendNow.Add(10 * time.Second)}
	r.Judge(context.Background(), spendPlan(), 0)
	if string(r.PodDisruptionBudgets[0]) != string(given) {
		t.Fatalf("the context's budget changed after a refused return:\n%s", r.PodDisruptionBudgets[0])
	}
}

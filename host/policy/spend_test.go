package policy

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ordinal-dev/ordinal/abi"
)

// budgetStore is an API server's PodDisruptionBudget status subresource: an update whose resourceVersion is
// not the stored one is refused with 409 Conflict; an accepted one gets the next resourceVersion.
type budgetStore struct {
	b       *policyv1.PodDisruptionBudget
	updates int
	reads   int
	err     error                               // when set, every update is refused with it
	before  func(*policyv1.PodDisruptionBudget) // another writer, before each update (its controller's recount)
}

func (s *budgetStore) Budget(_ context.Context, namespace, name string) (*policyv1.PodDisruptionBudget, error) {
	s.reads++
	return s.b.DeepCopy(), nil
}

// recount is the disruption controller writing the budget's status: a new resourceVersion.
func (s *budgetStore) recount(allowed int32) {
	rv, _ := strconv.Atoi(s.b.ResourceVersion)
	s.b = s.b.DeepCopy()
	s.b.ResourceVersion, s.b.Status.DisruptionsAllowed = strconv.Itoa(rv+1), allowed
}

func (s *budgetStore) UpdateBudgetStatus(_ context.Context, pdb *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error) {
	if s.err != nil {
		return &policyv1.PodDisruptionBudget{}, s.err // as client-go: an empty object with the error
	}
	if s.before != nil {
		s.before(s.b)
	}
	if pdb.ResourceVersion != s.b.ResourceVersion {
		return &policyv1.PodDisruptionBudget{}, apierrors.NewConflict(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, pdb.Name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	s.updates++
	next := pdb.DeepCopy()
	rv, _ := strconv.Atoi(pdb.ResourceVersion)
	next.ResourceVersion = strconv.Itoa(rv + 1)
	s.b = next
	return next.DeepCopy(), nil
}

func (s *budgetStore) raw(t *testing.T) json.RawMessage {
	b, err := json.Marshal(s.b)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newBudgetStore(allowed int32) *budgetStore {
	return &budgetStore{b: &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", Generation: 1, ResourceVersion: "10"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed, CurrentHealthy: 3, DesiredHealthy: 3 - allowed},
	}}
}

// Two pod deletes of a Parallel set; the snapshot's pods carry the budget's label.
func spendPlan() *abi.Plan {
	return &abi.Plan{ABI: 1, Actions: []abi.Action{
		{Verb: "delete", Kind: "Pod", Namespace: "default", Name: "web-1"},
		{Verb: "delete", Kind: "Pod", Namespace: "default", Name: "web-2"},
		{Verb: "updateStatus", Kind: "StatefulSet", Namespace: "default", Name: "web"},
	}}
}

const spendSnapshot = `{"abi":1,"now":"2026-11-26T10:00:00Z","statefulSet":{"metadata":{"name":"web"}},"pods":[` +
	`{"metadata":{"name":"web-1","labels":{"app":"db"}}},{"metadata":{"name":"web-2","labels":{"app":"db"}}}]}`

// spender is the pdb policy's contract: it allows the deletes and says which budget each spends.
func spender(spends string) *fake {
	return &fake{name: "pdb", answer: func(abi.PolicyInput) (string, error) {
		return `{"abi":1,"holds":[],"spends":[` + spends + `]}`, nil
	}}
}

var spendNow = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// admitAll asks Admit about each write of p as the applier does, and returns the holds by action.
func admitAll(r *Run, p *abi.Plan) map[int]string {
	out := map[int]string{}
	for i := range p.Actions {
		if p.Actions[i].Verb == abi.VerbUpdateStatus {
			continue
		}
		if h := r.Admit(context.Background(), p, i); h != nil {
			out[i] = h.Policy + " " + h.Reason + ": " + h.Message
		}
	}
	return out
}

// Each delete spends its disruption before it is sent, as an eviction does: the budget's status says one
// less and names the pod; the second spend of one sync goes under the resourceVersion of the first's update.
func TestAdmitSpendsEachDisruptionAsAnEviction(t *testing.T) {
	store := newBudgetStore(2)
	r := &Run{Policies: []Module{spender(`{"action":0,"podDisruptionBudget":"db"},{"action":1,"podDisruptionBudget":"db"}`)},
		Snapshot: []byte(spendSnapshot), PodDisruptionBudgets: []json.RawMessage{store.raw(t)}, Budgets: store, Now: spendNow}
	p := spendPlan()
	if holds := r.Judge(context.Background(), p, 0); len(holds) != 0 {
		t.Fatalf("holds %+v", holds)
	}
	if held := admitAll(r, p); len(held) != 0 {
		t.Fatalf("held %v: the budget had two disruptions for two deletes", held)
	}
	b := store.b
	if store.updates != 2 || b.Status.DisruptionsAllowed != 0 || b.ResourceVersion != "12" || len(b.Status.DisruptedPods) != 2 ||
		!b.Status.DisruptedPods["web-2"].Time.Equal(spendNow) {
		t.Fatalf("budget after the sync: %d updates, rv %s, status %+v", store.updates, b.ResourceVersion, b.Status)
	}
}

// Two sets decide from the same budget at the same instant, each seeing its last disruption: the first to
// send its delete spends it; the other's update is refused (409 Conflict) and its delete is held, to be
// decided again a second later from the budget as it is then.
func TestAdmitTheLastDisruptionIsSpentOnce(t *testing.T) {
	store := newBudgetStore(1)
	given := store.raw(t)
	run := func() *Run {
		return &Run{Policies: []Module{spender(`{"action":0,"podDisruptionBudget":"db"}`)}, Snapshot: []byte(spendSnapshot),
			PodDisruptionBudgets: []json.RawMessage{given}, Budgets: store, Now: spendNow}
	}
	a, b := run(), run()
	p := &abi.Plan{ABI: 1, Actions: spendPlan().Actions[:1]}
	a.Judge(context.Background(), p, 0)
	b.Judge(context.Background(), p, 0)
	if held := admitAll(a, p); len(held) != 0 {
		t.Fatalf("the first set's delete held: %v", held)
	}
	held := admitAll(b, p)
	if !strings.Contains(held[0], "pdb BudgetChanged: PodDisruptionBudget db: no disruption left to spend (disruptionsAllowed 0)") || store.reads != 1 {
		t.Fatalf("the second set's delete: %q (%d reads), want it held: the budget read again after the 409 has none left", held[0], store.reads)
	}
	if h := b.Admit(context.Background(), p, 0); h == nil || h.RetryAfter != MinRetryAfter {
		t.Fatalf("the hold %+v: want another sync after %v", h, MinRetryAfter)
	}
	if store.updates != 1 || store.b.Status.DisruptionsAllowed != 0 || len(store.b.Status.DisruptedPods) != 1 {
		t.Fatalf("budget: %d updates, status %+v: want the one disruption spent once", store.updates, store.b.Status)
	}
}

// What the host holds without an update: a budget with nothing left (a policy that counted wrong), one whose
// controller has not observed its last change, an update the API server refuses otherwise.
func TestAdmitHoldsWhatCannotBeSpent(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*budgetStore)
		spent string // the spends of the answer
		want  map[int]string
	}{
		{"more than left", func(*budgetStore) {}, `{"action":0,"podDisruptionBudget":"db"},{"action":1,"podDisruptionBudget":"db"}`,
			map[int]string{1: "BudgetChanged: PodDisruptionBudget db: no disruption left to spend (disruptionsAllowed 0)"}},
		{"stale", func(s *budgetStore) { s.b.Generation = 2 }, `{"action":0,"podDisruptionBudget":"db"}`,
			map[int]string{0: "BudgetChanged: PodDisruptionBudget db: changed since its status was computed (generation 2, observed 1)"}},
		{"refused", func(s *budgetStore) {
			s.err = apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "db", errors.New("no RBAC"))
		}, `{"action":0,"podDisruptionBudget":"db"}`,
			map[int]string{0: "BudgetNotSpent: PodDisruptionBudget db: could not spend a disruption: poddisruptionbudgets.policy \"db\" is forbidden: no RBAC"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := newBudgetStore(1)
			c.edit(store)
			r := &Run{Policies: []Module{spender(c.spent)}, Snapshot: []byte(spendSnapshot),
				PodDisruptionBudgets: []json.RawMessage{store.raw(t)}, Budgets: store, Now: spendNow}
			p := spendPlan()
			r.Judge(context.Background(), p, 0)
			held := admitAll(r, p)
			if len(held) != len(c.want) {
				t.Fatalf("held %v, want %v", held, c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(held[i], w) {
					t.Fatalf("action %d held %q, want %q", i, held[i], w)
				}
			}
		})
	}
}

// A spend the context cannot back is out of contract: the whole answer is refused (the policy failed, it
// holds and spends nothing).
func TestSpendsOutsideTheContextFailThePolicy(t *testing.T) {
	for _, c := range []struct{ name, spends, want string }{
		{"unknown budget", `{"action":0,"podDisruptionBudget":"other"}`, `PodDisruptionBudget "other" is not one the host gave it`},
		{"not selected", `{"action":0,"podDisruptionBudget":"db"}`, "PodDisruptionBudget db does not select pod web-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := newBudgetStore(1)
			if c.name == "not selected" {
				store.b.Spec.Selector.MatchLabels = map[string]string{"app": "cache"}
			}
			var failed []Failure
			r := &Run{Policies: []Module{spender(c.spends)}, Snapshot: []byte(spendSnapshot),
				PodDisruptionBudgets: []json.RawMessage{store.raw(t)}, Budgets: store,
				Failed: func(f Failure) { failed = append(failed, f) }}
			p := spendPlan()
			r.Judge(context.Background(), p, 0)
			if len(failed) != 1 || !strings.Contains(failed[0].Error(), c.want) {
				t.Fatalf("failures %v, want one saying %q", failed, c.want)
			}
			if held := admitAll(r, p); len(held) != 0 || store.updates != 0 {
				t.Fatalf("held %v, %d updates: a refused answer spends nothing", held, store.updates)
			}
		})
	}
}

// A budget changed since the policy read it but still with a disruption (its controller recounted: a new
// resourceVersion, the same allowance) is read again and spent, as the eviction API retries a conflict; one
// that changes at every write is held after a few attempts.
func TestAdmitRereadsABudgetThatChanged(t *testing.T) {
	store := newBudgetStore(1)
	given := store.raw(t)
	store.recount(1) // the disruption controller wrote the status after the host read it
	r := &Run{Policies: []Module{spender(`{"action":0,"podDisruptionBudget":"db"}`)}, Snapshot: []byte(spendSnapshot),
		PodDisruptionBudgets: []json.RawMessage{given}, Budgets: store, Now: spendNow}
	p := &abi.Plan{ABI: 1, Actions: spendPlan().Actions[:1]}
	r.Judge(context.Background(), p, 0)
	if h := r.Admit(context.Background(), p, 0); h != nil {
		t.Fatalf("held %+v: the budget still had its disruption", h)
	}
	if store.reads != 1 || store.updates != 1 || store.b.Status.DisruptionsAllowed != 0 {
		t.Fatalf("%d reads, %d updates, status %+v: want one read again and the spend written", store.reads, store.updates, store.b.Status)
	}

	busy := newBudgetStore(5)
	busy.before = func(*policyv1.PodDisruptionBudget) { busy.recount(5) }
	r = &Run{Policies: []Module{spender(`{"action":0,"podDisruptionBudget":"db"}`)}, Snapshot: []byte(spendSnapshot),
		PodDisruptionBudgets: []json.RawMessage{busy.raw(t)}, Budgets: busy, Now: spendNow}
	r.Judge(context.Background(), p, 0)
	h := r.Admit(context.Background(), p, 0)
	if h == nil || h.Reason != ReasonBudgetChanged || !strings.Contains(h.Message, "3 times in a row") || busy.updates != 0 {
		t.Fatalf("a budget that changes at every write: %+v, %d updates", h, busy.updates)
	}
}

// A budget the API server will not update (RBAC, too many unconfirmed disruptions) is tried again after
// notSpentRetry, not every second; a budget that changed, at once.
func TestAdmitRetriesARefusalLater(t *testing.T) {
	store := newBudgetStore(1)
	store.err = apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "db", errors.New("no RBAC"))
	r := &Run{Policies: []Module{spender(`{"action":0,"podDisruptionBudget":"db"}`)}, Snapshot: []byte(spendSnapshot),
		PodDisruptionBudgets: []json.RawMessage{store.raw(t)}, Budgets: store, Now: spendNow}
	p := &abi.Plan{ABI: 1, Actions: spendPlan().Actions[:1]}
	r.Judge(context.Background(), p, 0)
	if h := r.Admit(context.Background(), p, 0); h == nil || h.Reason != ReasonBudgetNotSpent || h.RetryAfter != notSpentRetry {
		t.Fatalf("hold %+v: want BudgetNotSpent, again after %v", h, notSpentRetry)
	}
	none := newBudgetStore(0)
	r = &Run{Policies: []Module{spender(`{"action":0,"podDisruptionBudget":"db"}`)}, Snapshot: []byte(spendSnapshot),
		PodDisruptionBudgets: []json.RawMessage{none.raw(t)}, Budgets: none, Now: spendNow}
	r.Judge(context.Background(), p, 0)
	if h := r.Admit(context.Background(), p, 0); h == nil || h.Reason != ReasonBudgetChanged || h.RetryAfter != MinRetryAfter {
		t.Fatalf("hold %+v: want BudgetChanged, again after %v", h, MinRetryAfter)
	}
}

// An in-place update of web-2 (its resize, then the update moving its revision label from r1 to r2 with the
// in-place record), one of web-1 without a resize, and a repair of web-0 that keeps its revision label (on a
// pod updated in place earlier: the record names its revision already).
func inPlacePlan() *abi.Plan {
	pod := func(name, rev string) json.RawMessage {
		return json.RawMessage(`{"metadata":{"name":"` + name + `","labels":{"app":"db","controller-revision-hash":"` + rev +
			`"},"annotations":{"ordinal.dev/in-place-update":"` + rev + `"}}}`)
	}
	return &abi.Plan{ABI: 1, Actions: []abi.Action{
		{Verb: "resize", Kind: "Pod", Namespace: "default", Name: "web-2", Object: pod("web-2", "r1")},
		{Verb: "update", Kind: "Pod", Namespace: "default", Name: "web-2", Object: pod("web-2", "r2")},
		{Verb: "update", Kind: "Pod", Namespace: "default", Name: "web-1", Object: pod("web-1", "r2")},
		{Verb: "update", Kind: "Pod", Namespace: "default", Name: "web-0", Object: pod("web-0", "r2")},
		{Verb: "updateStatus", Kind: "StatefulSet", Namespace: "default", Name: "web"},
	}}
}

const inPlaceSnapshot = `{"abi":1,"now":"2026-11-26T10:00:00Z","statefulSet":{"metadata":{"name":"web"}},"pods":[` +
	`{"metadata":{"name":"web-0","labels":{"app":"db","controller-revision-hash":"r2"}}},` +
	`{"metadata":{"name":"web-1","labels":{"app":"db","controller-revision-hash":"r1"}}},` +
	`{"metadata":{"name":"web-2","labels":{"app":"db","controller-revision-hash":"r1"}}}]}`

// A spend may name an in-place update by its first action — the resize when it has one, else the update —
// and nothing else of it: not the update after its resize, not a pod update that moves no revision label, not
// one the same answer holds any part of (abi/POLICY.md section 2.1). One out of contract refuses the answer.
func TestSpendsOfInPlaceUpdates(t *testing.T) {
	p := inPlacePlan()
	r := &Run{Snapshot: []byte(inPlaceSnapshot)}
	for _, c := range []struct{ name, answer, want string }{
		{"the resize", `{"abi":1,"holds":[],"spends":[{"action":0,"podDisruptionBudget":"db"}]}`, ""},
		{"an update without a resize", `{"abi":1,"holds":[],"spends":[{"action":2,"podDisruptionBudget":"db"}]}`, ""},
		{"both", `{"abi":1,"holds":[],"spends":[{"action":0,"podDisruptionBudget":"db"},{"action":2,"podDisruptionBudget":"db"}]}`, ""},
		{"the update after its resize", `{"abi":1,"holds":[],"spends":[{"action":1,"podDisruptionBudget":"db"}]}`,
			"action 1 is the update of pod web-2's in-place update, whose resize (action 0) comes first"},
		{"a repair", `{"abi":1,"holds":[],"spends":[{"action":3,"podDisruptionBudget":"db"}]}`, "neither a pod delete nor an in-place update"},
		{"the resize, its update held", `{"abi":1,"holds":[{"action":1,"reason":"R","message":"m"}],"spends":[{"action":0,"podDisruptionBudget":"db"}]}`,
			"pod web-2's in-place update is held by the same answer (its update, action 1)"},
		{"the resize, held", `{"abi":1,"holds":[{"action":0,"reason":"R","message":"m"}],"spends":[{"action":0,"podDisruptionBudget":"db"}]}`,
			"held by the same answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CheckAnswer([]byte(c.answer), p, 0, r.podRevision)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
	// Without the snapshot's pods, a pod update the module marks as in place (its record naming its new
	// revision label) is one: a host that knows no pods cannot tell a repair.
	if _, err := CheckAnswer([]byte(`{"abi":1,"holds":[],"spends":[{"action":2,"podDisruptionBudget":"db"}]}`), p, 0, nil); err != nil {
		t.Fatal(err)
	}
}

// An in-place update spends its budget right before its first write is sent, as a delete does: the resize's
// Admit commits it (web-2 among the budget's disruptedPods), and the update after it spends nothing more; an
// in-place update without a resize spends at its update. The budget's last disruption spent, the next
// in-place update is held before any write of it goes out.
func TestAdmitSpendsAnInPlaceUpdateBeforeItsResize(t *testing.T) {
	store := newBudgetStore(1)
	r := &Run{Policies: []Module{spender(`{"action":0,"podDisruptionBudget":"db"},{"action":2,"podDisruptionBudget":"db"}`)},
		Snapshot: []byte(inPlaceSnapshot), PodDisruptionBudgets: []json.RawMessage{store.raw(t)}, Budgets: store, Now: spendNow}
	p := inPlacePlan()
	if holds := r.Judge(context.Background(), p, 0); len(holds) != 0 {
		t.Fatalf("holds %+v", holds)
	}
	if h := r.Admit(context.Background(), p, 0); h != nil {
		t.Fatalf("the resize held: %+v", h)
	}
	if _, ok := store.b.Status.DisruptedPods["web-2"]; !ok || store.b.Status.DisruptionsAllowed != 0 || store.updates != 1 {
		t.Fatalf("after the resize: %d updates, status %+v", store.updates, store.b.Status)
	}
	if h := r.Admit(context.Background(), p, 1); h != nil || store.updates != 1 {
		t.Fatalf("the update after its resize: hold %+v, %d updates", h, store.updates)
	}
	h := r.Admit(context.Background(), p, 2)
	if h == nil || h.Reason != ReasonBudgetChanged || !strings.Contains(h.Message, "no disruption left") {
		t.Fatalf("web-1's in-place update: hold %+v", h)
	}
}

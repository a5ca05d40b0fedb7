package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tidwall/gjson"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/inplace"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// BudgetWriter writes a PodDisruptionBudget's status under the resourceVersion the object carries, as the
// eviction subresource does (the controller: client-go's UpdateStatus; a replay: its disruption controller).
// A budget changed since is refused with the API server's 409 Conflict.
type BudgetWriter interface {
	UpdateBudgetStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error)
	// Budget reads a budget as it is now (uncached), after an update was refused as changed.
	Budget(ctx context.Context, namespace, name string) (*policyv1.PodDisruptionBudget, error)
}

// maxSpendAttempts is how many times a spend is written before its delete is held: a budget changed since
// it was read (409) is read again and spent again if it still has a disruption, as the eviction API retries.
const maxSpendAttempts = 3

// notSpentRetry is when a delete whose budget the API server would not update is tried again: such refusals
// (RBAC, a budget with too many unconfirmed disruptions) do not pass in a second.
const notSpentRetry = 15 * time.Second

// Reasons of the holds the host makes when a delete cannot spend what its policy said it spends.
const (
	ReasonBudgetChanged  = "BudgetChanged"  // the budget changed since the policy read it, or has nothing left
	ReasonBudgetNotSpent = "BudgetNotSpent" // the API server refused the budget's update otherwise
)

// maxDisruptedPods is the eviction API's MaxDisruptedPodSize: a budget whose controller has not confirmed
// that many disruptions takes no more.
const maxDisruptedPods = 2000

// spent is one budget an allowed write spends, and the policy that said so.
type spent struct{ policy, budget string }

// checkSpends checks an answer's spends against the context (abi/POLICY.md section 3): each budget is one
// of the context's, and selects the pod the delete or in-place update names. Out of contract refuses the
// whole answer.
func (r *Run) checkSpends(p *abi.Plan, spends []abi.PolicySpend) error {
	if len(spends) == 0 {
		return nil
	}
	r.loadLedger()
	for i, s := range spends {
		b := r.ledger[s.PodDisruptionBudget]
		if b == nil {
			return fmt.Errorf("spends[%d]: PodDisruptionBudget %q is not one the host gave it", i, cut(s.PodDisruptionBudget, 64))
		}
		if b.selector == nil || !b.selector.Matches(r.podLabels(p.Actions[s.Action].Name)) {
			return fmt.Errorf("spends[%d]: PodDisruptionBudget %s does not select pod %s", i, s.PodDisruptionBudget, p.Actions[s.Action].Name)
		}
	}
	return nil
}

// spend records what policy's answer spends, for Admit.
func (r *Run) spend(policy string, spends []abi.PolicySpend) {
	for _, s := range spends {
		if r.spends == nil {
			r.spends = map[int][]spent{}
		}
		dup := false
		for _, o := range r.spends[s.Action] {
			dup = dup || o.budget == s.PodDisruptionBudget // two policies spending one budget: once
		}
		if !dup {
			r.spends[s.Action] = append(r.spends[s.Action], spent{policy, s.PodDisruptionBudget})
		}
	}
}

// Admit is host/plan's Options.Admit: right before action i of p is sent — a pod delete, or an in-place
// update's first action (its resize, when it has one: the budget is spent before the pod changes) — the
// disruptions the policies said it spends are committed, as the eviction API commits them (abi/POLICY.md
// section 4.1): each budget's
// status written with one disruption less and the pod among its disruptedPods, under the resourceVersion
// the policy was given (or the host's own last update of it in this sync). A budget that cannot be spent
// holds the write, as the policy that spent it, for another sync a second later.
func (r *Run) Admit(ctx context.Context, p *abi.Plan, i int) *hostplan.Hold {
	spends := r.spends[i]
	if len(spends) == 0 || r.Budgets == nil {
		return nil
	}
	pod := p.Actions[i].Name
	now := r.Now
	if now.IsZero() {
		now = time.Now()
	}
	var done []unspent // spent for this delete, returned if a later budget of it holds it
	for _, s := range spends {
		entry := r.ledger[s.budget]
		prior, h := r.spendOne(ctx, s, entry, pod, now)
		if h != nil {
			for _, u := range done {
				r.unspend(ctx, u, pod)
			}
			return h
		}
		done = append(done, unspent{entry, prior})
	}
	return nil
}

// spendOne commits one disruption of entry's budget for pod, or says why the delete is held.
// prior is the pod's disruptedPods entry the update replaced (nil: none).
func (r *Run) spendOne(ctx context.Context, s spent, entry *budgetEntry, pod string, now time.Time) (prior *metav1.Time, _ *hostplan.Hold) {
	if entry.pdb == nil {
		entry.pdb = &policyv1.PodDisruptionBudget{}
		if err := json.Unmarshal(entry.raw, entry.pdb); err != nil {
			entry.pdb = nil
			return nil, &hostplan.Hold{Policy: s.policy, Reason: ReasonBudgetNotSpent, RetryAfter: notSpentRetry,
				Message: fmt.Sprintf("PodDisruptionBudget %s: the host's copy does not decode: %v", s.budget, err)}
		}
	}
	b := entry.pdb
	hold := func(reason, format string, args ...any) *hostplan.Hold {
		retry := MinRetryAfter // the budget changed: decide again from it at once
		if reason == ReasonBudgetNotSpent {
			retry = notSpentRetry // the API server refused otherwise (RBAC, a full disruptedPods): not every second
		}
		return &hostplan.Hold{Policy: s.policy, Reason: reason, RetryAfter: retry,
			Message: fmt.Sprintf("PodDisruptionBudget %s: ", b.Name) + fmt.Sprintf(format, args...)}
	}
	var updated *policyv1.PodDisruptionBudget
	for attempt := 1; updated == nil; attempt++ {
		switch {
		case b.Status.ObservedGeneration < b.Generation:
			return nil, hold(ReasonBudgetChanged, "changed since its status was computed (generation %d, observed %d); deciding again", b.Generation, b.Status.ObservedGeneration)
		case b.Status.DisruptionsAllowed < 1:
			return nil, hold(ReasonBudgetChanged, "no disruption left to spend (disruptionsAllowed %d); deciding again", b.Status.DisruptionsAllowed)
		case len(b.Status.DisruptedPods) >= maxDisruptedPods:
			return nil, hold(ReasonBudgetNotSpent, "%d disruptions not yet confirmed by its controller; deciding again", len(b.Status.DisruptedPods))
		}
		next := b.DeepCopy()
		next.Status.DisruptionsAllowed--
		if next.Status.DisruptedPods == nil {
			next.Status.DisruptedPods = map[string]metav1.Time{}
		}
		prior = nil
		if t, ok := next.Status.DisruptedPods[pod]; ok {
			prior = &t
		}
		next.Status.DisruptedPods[pod] = metav1.NewTime(now)
		got, err := r.Budgets.UpdateBudgetStatus(ctx, next)
		if err == nil {
			updated = got // client-go answers an empty object with its errors: taken only without one
		}
		switch {
		case apierrors.IsConflict(err) && attempt < maxSpendAttempts:
			// Changed since it was read — another writer's spend, its controller's recount: as the eviction
			// API does, read it again and spend if it still has a disruption.
			was := b
			if b, err = r.Budgets.Budget(ctx, was.Namespace, was.Name); err != nil {
				b = was
				return nil, hold(ReasonBudgetNotSpent, "changed since the policy read it, and reading it again failed: %s", cut(err.Error(), 512))
			}
			// The policy spent the budget it was given: one recreated under its name, or whose selector no
			// longer selects the pod, is not that budget (section 3), and the policy decides again.
			if b.UID != was.UID || !selectsPod(b, r.podLabels(pod)) {
				return nil, hold(ReasonBudgetChanged, "changed since the policy read it: it is no longer the budget of pod %s the policy spent; deciding again", pod)
			}
		case apierrors.IsConflict(err):
			return nil, hold(ReasonBudgetChanged, "changed since the policy read it, %d times in a row (other writers spend it or its controller recounts); deciding again", attempt)
		case err != nil:
			return nil, hold(ReasonBudgetNotSpent, "could not spend a disruption: %s", cut(err.Error(), 512))
		}
	}
	entry.pdb = updated
	return prior, nil
}

// unspent is a spend of a delete that may have to be returned.
type unspent struct {
	entry *budgetEntry
	prior *metav1.Time
}

// unspend returns the disruption spendOne committed for pod in entry's budget, the delete being held after
// all (POLICY.md 4.1: a held delete spends nothing). A return the API server refuses is left to the budget's
// controller, which returns a disruption whose pod was not deleted within two minutes.
// An earlier disruption of the pod that the spend replaced (a delete sent and refused before) is kept.
func (r *Run) unspend(ctx context.Context, u unspent, pod string) {
	next := u.entry.pdb.DeepCopy()
	if _, ok := next.Status.DisruptedPods[pod]; !ok {
		return
	}
	if u.prior != nil {
		next.Status.DisruptedPods[pod] = *u.prior
	} else {
		delete(next.Status.DisruptedPods, pod)
	}
	next.Status.DisruptionsAllowed++
	if got, err := r.Budgets.UpdateBudgetStatus(ctx, next); err == nil {
		u.entry.pdb = got
	}
}

// selectsPod: b's selector selects a pod of those labels.
func selectsPod(b *policyv1.PodDisruptionBudget, pod labels.Set) bool {
	sel := budgetSelector(b.Spec.Selector)
	return sel != nil && sel.Matches(pod)
}

// budgetEntry is a budget of the context as the sync's spends need it: its selector, read when a policy first
// spends (an answer's spends are checked against it), and the whole budget, decoded when a delete first
// spends it and then as the host's own update of it returned it.
type budgetEntry struct {
	raw      json.RawMessage
	selector labels.Selector // nil: it selects nothing (no selector, or one that does not parse)
	pdb      *policyv1.PodDisruptionBudget
}

// loadLedger reads the context's budgets' names and selectors once a sync.
func (r *Run) loadLedger() {
	if r.ledger != nil {
		return
	}
	r.ledger = map[string]*budgetEntry{}
	for _, raw := range r.PodDisruptionBudgets {
		b := gjson.ParseBytes(raw)
		e := &budgetEntry{raw: raw}
		if sel := b.Get("spec.selector"); sel.IsObject() {
			var ls metav1.LabelSelector
			if err := json.Unmarshal([]byte(sel.Raw), &ls); err == nil {
				e.selector = budgetSelector(&ls)
			}
		}
		r.ledger[b.Get("metadata.name").String()] = e
	}
}

// podRevision is the revision label of the snapshot's pod of that name ("" when none), which tells an
// in-place update from another pod update (CheckAnswer).
func (r *Run) podRevision(name string) string {
	if v := r.pod(name).Get("metadata.labels").Get(gjson.Escape(inplace.LabelRevision)); v.Type == gjson.String {
		return v.Str
	}
	return ""
}

// podLabels are the labels of the snapshot's pod of that name (none: no pod).
func (r *Run) podLabels(name string) labels.Set {
	out := labels.Set{}
	r.pod(name).Get("metadata.labels").ForEach(func(k, v gjson.Result) bool {
		out[k.String()] = v.String()
		return true
	})
	return out
}

// pod is the snapshot's pod of that name (Exists false: none).
func (r *Run) pod(name string) gjson.Result {
	var pod gjson.Result
	if r.Object != nil {
		if raw, ok := r.Object(abi.KindPod, name); ok {
			pod = gjson.ParseBytes(raw)
		}
	}
	if !pod.Exists() {
		for _, p := range gjson.GetBytes(r.Snapshot, "pods").Array() {
			if p.Get("metadata.name").String() == name {
				pod = p
				break
			}
		}
	}
	return pod
}

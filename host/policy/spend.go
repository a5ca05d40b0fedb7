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
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// BudgetWriter writes a PodDisruptionBudget's status under the resourceVersion the object carries, as the
// eviction subresource does (the controller: client-go's UpdateStatus; a replay: its disruption controller).
// A budget changed since is refused with the API server's 409 Conflict.
type BudgetWriter interface {
	UpdateBudgetStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error)
}

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
// of the context's, and selects the pod the delete names. Out of contract refuses the whole answer.
func (r *Run) checkSpends(p *abi.Plan, spends []abi.PolicySpend) error {
	if len(spends) == 0 {
		return nil
	}
	if err := r.loadLedger(); err != nil {
		return err
	}
	for i, s := range spends {
		b := r.ledger[s.PodDisruptionBudget]
		if b == nil {
			return fmt.Errorf("spends[%d]: PodDisruptionBudget %q is not one the host gave it", i, cut(s.PodDisruptionBudget, 64))
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if b.Spec.Selector == nil || err != nil || !sel.Matches(r.podLabels(p.Actions[s.Action].Name)) {
			return fmt.Errorf("spends[%d]: PodDisruptionBudget %s does not select pod %s", i, b.Name, p.Actions[s.Action].Name)
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

// Admit is host/plan's Options.Admit: right before action i of p is sent, the disruptions the policies said
// it spends are committed, as the eviction API commits them (abi/POLICY.md section 4.1): each budget's
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
	for _, s := range spends {
		b := r.ledger[s.budget]
		hold := func(reason, format string, args ...any) *hostplan.Hold {
			return &hostplan.Hold{Policy: s.policy, Reason: reason, RetryAfter: MinRetryAfter,
				Message: fmt.Sprintf("PodDisruptionBudget %s: ", b.Name) + fmt.Sprintf(format, args...)}
		}
		switch {
		case b.Status.ObservedGeneration < b.Generation:
			return hold(ReasonBudgetChanged, "changed since its status was computed (generation %d, observed %d); deciding again", b.Generation, b.Status.ObservedGeneration)
		case b.Status.DisruptionsAllowed < 1:
			return hold(ReasonBudgetChanged, "no disruption left to spend (disruptionsAllowed %d); deciding again", b.Status.DisruptionsAllowed)
		case len(b.Status.DisruptedPods) >= maxDisruptedPods:
			return hold(ReasonBudgetNotSpent, "%d disruptions not yet confirmed by its controller; deciding again", len(b.Status.DisruptedPods))
		}
		next := b.DeepCopy()
		next.Status.DisruptionsAllowed--
		if next.Status.DisruptedPods == nil {
			next.Status.DisruptedPods = map[string]metav1.Time{}
		}
		next.Status.DisruptedPods[pod] = metav1.NewTime(now)
		updated, err := r.Budgets.UpdateBudgetStatus(ctx, next)
		switch {
		case apierrors.IsConflict(err):
			return hold(ReasonBudgetChanged, "changed since the policy read it (another writer spent a disruption or its controller recounted); deciding again")
		case err != nil:
			return hold(ReasonBudgetNotSpent, "could not spend a disruption: %s", cut(err.Error(), 512))
		}
		r.ledger[s.budget] = updated
	}
	return nil
}

// loadLedger decodes the context's budgets once a sync.
func (r *Run) loadLedger() error {
	if r.ledger != nil {
		return nil
	}
	r.ledger = map[string]*policyv1.PodDisruptionBudget{}
	for _, raw := range r.PodDisruptionBudgets {
		b := &policyv1.PodDisruptionBudget{}
		if err := json.Unmarshal(raw, b); err != nil {
			return fmt.Errorf("the host's PodDisruptionBudgets: %w", err)
		}
		r.ledger[b.Name] = b
	}
	return nil
}

// podLabels are the labels of the snapshot's pod of that name (none: no pod).
func (r *Run) podLabels(name string) labels.Set {
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
	out := labels.Set{}
	pod.Get("metadata.labels").ForEach(func(k, v gjson.Result) bool {
		out[k.String()] = v.String()
		return true
	})
	return out
}

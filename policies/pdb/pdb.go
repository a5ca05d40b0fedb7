// Command pdb is a policy module (abi/POLICY.md): the controller's pod deletions respect the
// PodDisruptionBudgets that cover the pods, as evictions do (kubernetes/kubernetes#89820, #58146, #91808).
// Upstream's StatefulSet controller deletes pods without asking any budget, so a rollout or a scale-down
// can take a database below its quorum while a node drain, which evicts, would have waited.
//
// The host supplies the budgets of the set's namespace that select any of its pods, as the API server
// returns them (context.podDisruptionBudgets); their status is kube-controller-manager's disruption
// controller's, so one budget spans every set and Deployment whose pods it selects. A delete of a healthy
// pod (Ready, not terminating) spends one disruption of each budget that selects it, this sync's earlier
// deletes counted; a budget with none left holds it. An allowed delete says which budgets it spends, and the
// host writes each spend into the budget's status before it sends the delete, as the eviction API does, so
// two sets deciding from one budget at the same instant cannot both spend its last disruption. Deleting a pod that is not healthy spends nothing (it
// is disrupted already), as an eviction of it would not. A budget its controller has not observed since its
// last change holds every delete it selects.
//
// An in-place update of a pod (the extended module's pod-update-policy: a resize, then an update after which
// the kubelet restarts its containers) is a disruption as its delete would be: it needs, and spends, a
// disruption of each budget selecting a healthy pod, is held when one has none, and is held and spent by its
// first write (the resize, when it has one: abi/POLICY.md section 2.1), so the budget is spent before the pod
// changes at all. One that restarts no container (labels only, a resize the kubelet makes live) keeps the pod
// Ready and spends nothing (kit's Disruptions).
package main

import (
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/policies/kit"
)

const retry = 15 * time.Second

func main() {}

type budget struct {
	name              string
	pdb               gjson.Result
	allowed           int64
	stale             bool
	deletes, inPlaces bool // what of this sync spent its disruptions
}

// spend counts one disruption of this sync: a delete's, or an in-place update's.
func (b *budget) spend(d kit.Disruption) {
	b.allowed--
	b.deletes, b.inPlaces = b.deletes || !d.InPlace, b.inPlaces || d.InPlace
}

// spentBy names what of this sync spent the budget, for a hold's message.
func (b *budget) spentBy() string {
	switch {
	case b.deletes && b.inPlaces:
		return "deletes and in-place updates"
	case b.inPlaces:
		return "in-place updates"
	}
	return "deletes"
}

func decide(in *kit.Input) ([]kit.Hold, error) {
	var budgets []*budget
	for _, p := range in.Context("podDisruptionBudgets").Array() {
		b := &budget{name: p.Get("metadata.name").String(), pdb: p, allowed: p.Get("status.disruptionsAllowed").Int()}
		b.stale = p.Get("status.observedGeneration").Int() < p.Get("metadata.generation").Int()
		budgets = append(budgets, b)
	}
	if len(budgets) == 0 {
		return nil, nil
	}
	var holds []kit.Hold
	for _, d := range in.Disruptions() {
		a := d.Action
		if a.Errors.String() != "" {
			continue
		}
		pod := in.Pod(a.Name)
		if !kit.Healthy(pod) {
			continue
		}
		var covering []*budget
		for _, b := range budgets {
			if kit.Selects(b.pdb.Get("spec.selector"), pod.Get("metadata.labels")) {
				covering = append(covering, b)
			}
		}
		if a.Index < in.From { // issued earlier in this sync (an in-place update: begun): it spent its disruptions
			for _, b := range covering {
				b.spend(d)
			}
			continue
		}
		var blocked *budget
		for _, b := range covering {
			if b.stale || b.allowed <= 0 {
				blocked = b
				break
			}
		}
		if blocked == nil {
			for _, b := range covering {
				b.spend(d)
				in.Spend(a, b.name) // committed by the host before the write, as an eviction commits it
			}
			continue
		}
		given := blocked.pdb.Get("status.disruptionsAllowed").Int()
		spent := ""
		if given > 0 {
			spent = ", all spent by this sync's " + blocked.spentBy()
		}
		msg := "PodDisruptionBudget " + blocked.name + " allows no more disruptions (disruptionsAllowed " +
			strconv.FormatInt(given, 10) + spent + "; currentHealthy " +
			strconv.FormatInt(blocked.pdb.Get("status.currentHealthy").Int(), 10) + ", desiredHealthy " +
			strconv.FormatInt(blocked.pdb.Get("status.desiredHealthy").Int(), 10) + ")"
		if blocked.stale {
			msg = "PodDisruptionBudget " + blocked.name + " has changed since its status was computed (generation " +
				strconv.FormatInt(blocked.pdb.Get("metadata.generation").Int(), 10) + ", observed " +
				strconv.FormatInt(blocked.pdb.Get("status.observedGeneration").Int(), 10) + ")"
		}
		holds = append(holds, kit.Hold{Action: a.Index, Reason: "DisruptionBudget", Message: msg, RetryAfter: retry})
	}
	return holds, nil
}

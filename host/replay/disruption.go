package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

const kindPDB = "PodDisruptionBudget"

// budgetsFor are the world's PodDisruptionBudgets that select any of the set's pods, each with the status
// kube-controller-manager's disruption controller would give it now (for the policies that ask for them).
// The replay's disruption controller is instant: a budget's status always counts the world as it is.
func (e *engine) budgetsFor(policies []policy.Module) []json.RawMessage {
	if len(e.pdbs) == 0 || !policy.Wants(policies, abi.ContextPodDisruptionBudgets) {
		return nil
	}
	var out []json.RawMessage
	for _, pdb := range e.pdbs {
		if b, ok := e.budgetStatus(pdb); ok {
			out = append(out, b)
		}
	}
	return out
}

// budgetStatus is the budget with its status (the disruption controller's getExpectedPodCount and
// countHealthyPods: a pod is healthy when Ready, not terminating and not among the budget's disrupted pods;
// expected pods are the scale of the pods' controllers, here the set's replicas for its pods and 1 for any
// other), ok false when it selects none of the set's pods.
func (e *engine) budgetStatus(pdb Obj) (json.RawMessage, bool) {
	if ns := jsonobj.GetStr(pdb, "metadata.namespace"); ns != "" && ns != e.api.Namespace() {
		return nil, false
	}
	selector, err := pdbSelector(pdb)
	if err != nil || selector == nil {
		return nil, false // policy/v1: a budget without a selector selects nothing (validatePDB refused a bad one)
	}
	setUID := jsonobj.GetStr(e.api.StatefulSet(), "metadata.uid")
	r, _ := jsonobj.GetInt(e.api.StatefulSet(), "spec.replicas")
	replicas := int(r)
	matched, ours, others, healthy := 0, 0, 0, 0
	spent := e.disruptedOf(jsonobj.GetStr(pdb, "metadata.name"))
	for _, n := range e.api.Names(world.KindPod) {
		p := e.api.Get(world.KindPod, n)
		if !selector.Matches(labels.Set(stringMap(jsonobj.GetObj(p, "metadata.labels")))) {
			continue
		}
		matched++
		if controllerUID(p) == setUID {
			ours++
		} else {
			others++
		}
		if _, disrupted := spent[n]; !disrupted && jsonobj.Get(p, "metadata.deletionTimestamp") == nil && kube.PodReadyJSON(p) {
			healthy++
		}
	}
	if ours == 0 {
		return nil, false
	}
	expected := replicas + others
	desired := 0
	if v := jsonobj.Get(pdb, "spec.maxUnavailable"); v != nil {
		desired = expected - scaled(v, expected)
	} else if v := jsonobj.Get(pdb, "spec.minAvailable"); v != nil {
		if _, isPercent := v.(string); !isPercent {
			expected = matched
		}
		desired = scaled(v, expected)
	}
	desired = max(desired, 0)
	allowed := healthy - desired
	if expected <= 0 || allowed < 0 {
		allowed = 0
	}
	out := jsonobj.CloneObj(pdb)
	out["apiVersion"], out["kind"] = "policy/v1", kindPDB
	gen, _ := jsonobj.GetInt(out, "metadata.generation")
	if gen == 0 {
		gen = 1
		jsonobj.Ensure(out, "metadata")["generation"] = jsonobj.Num(1)
	}
	status := map[string]any{"observedGeneration": jsonobj.Num(gen), "disruptionsAllowed": jsonobj.Num(int64(allowed)),
		"currentHealthy": jsonobj.Num(int64(healthy)), "desiredHealthy": jsonobj.Num(int64(desired)), "expectedPods": jsonobj.Num(int64(expected))}
	if len(spent) > 0 {
		m := map[string]any{}
		for n, s := range spent {
			m[n] = s.at.UTC().Format(time.RFC3339)
		}
		status["disruptedPods"] = m
	}
	out["status"] = status
	b, err := json.Marshal(out)
	return b, err == nil
}

// scaled is an IntOrString of a budget against expected pods: a percentage rounds up, as the disruption
// controller's GetScaledValueFromIntOrPercent(..., true).
func scaled(v any, expected int) int {
	if s, ok := v.(string); ok {
		p, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
		if err != nil || !strings.HasSuffix(s, "%") {
			return 0
		}
		return int(math.Ceil(float64(p) * float64(expected) / 100))
	}
	i, _ := jsonobj.AsInt(v)
	return int(i)
}

func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// controllerUID is the uid of the pod's controller owner reference ("" when none).
func controllerUID(p Obj) string {
	for _, r := range jsonobj.GetArr(p, "metadata.ownerReferences") {
		if c, _ := jsonobj.Get(r, "controller").(bool); c {
			return jsonobj.GetStr(r, "uid")
		}
	}
	return ""
}

// validatePDB refuses a PodDisruptionBudget kube-apiserver would refuse (policy/v1 validation): both or
// an invalid minAvailable and maxUnavailable (an integer of at least 0, or a percentage from 0% to 100%),
// a selector that is not a label selector.
func validatePDB(o Obj) error {
	name := jsonobj.GetStr(o, "metadata.name")
	spec := jsonobj.GetObj(o, "spec")
	min, max := spec["minAvailable"], spec["maxUnavailable"]
	if min != nil && max != nil {
		return fmt.Errorf("PodDisruptionBudget %s: minAvailable and maxUnavailable cannot be both set", name)
	}
	for field, v := range map[string]any{"minAvailable": min, "maxUnavailable": max} {
		if v == nil {
			continue
		}
		if s, ok := v.(string); ok {
			p, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
			if !strings.HasSuffix(s, "%") || err != nil || p < 0 || p > 100 {
				return fmt.Errorf("PodDisruptionBudget %s: spec.%s %q: a percentage from 0%% to 100%%, or an integer", name, field, s)
			}
			continue
		}
		n, isNum := v.(json.Number)
		if _, err := n.Int64(); !isNum || err != nil || strings.HasPrefix(string(n), "-") {
			return fmt.Errorf("PodDisruptionBudget %s: spec.%s %v: an integer of at least 0, or a percentage", name, field, v)
		}
	}
	if _, err := pdbSelector(o); err != nil {
		return fmt.Errorf("PodDisruptionBudget %s: spec.selector: %v", name, err)
	}
	return nil
}

// pdbSelector is a budget's spec.selector as a label selector (nil: it has none).
func pdbSelector(pdb Obj) (labels.Selector, error) { return kube.SelectorJSON(pdb) }

// budgetWriter commits the disruptions a policy spends (policy.BudgetWriter) in the replay's world. Its
// disruption controller is instant — budgetStatus counts the world as it is at every sync — and a replay
// syncs one set, so no other writer can spend a budget between a policy's read and the write: the update is
// accepted as given (the sync's own ledger counts its earlier spends), its disruptedPods the budget's. The delete that follows a spend makes
// the pod terminating, which the next count sees; an in-place update (abi/POLICY.md section 2.1) leaves its
// pod Ready until the kubelet restarts it, so the pods a spend names are kept, as the budget's
// disruptedPods, and counted as disrupted as the disruption controller counts them (disruptedOf).
type budgetWriter struct{ e *engine }

func (w budgetWriter) UpdateBudgetStatus(_ context.Context, pdb *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error) {
	// A pod the update leaves out is given back (a spend returned: a held delete's, an in-place update's that
	// is over), as the disruption controller then counts it.
	for name := range w.e.disruptedPods[pdb.Name] {
		if _, ok := pdb.Status.DisruptedPods[name]; !ok {
			delete(w.e.disruptedPods[pdb.Name], name)
		}
	}
	for name, at := range pdb.Status.DisruptedPods {
		p := w.e.api.Get(world.KindPod, name)
		if p == nil {
			continue
		}
		if w.e.disruptedPods == nil {
			w.e.disruptedPods = map[string]map[string]spentPod{}
		}
		if w.e.disruptedPods[pdb.Name] == nil {
			w.e.disruptedPods[pdb.Name] = map[string]spentPod{}
		}
		if s, ok := w.e.disruptedPods[pdb.Name][name]; !ok || s.at.Before(at.Time) {
			w.e.disruptedPods[pdb.Name][name] = spentPod{uid: jsonobj.GetStr(p, "metadata.uid"), at: at.Time}
		}
	}
	return pdb, nil
}

// spentPod is a pod a policy spent a budget's disruption for: which pod (a pod recreated under its name is
// another), and when.
type spentPod struct {
	uid string
	at  time.Time
}

// deletionTimeout is the disruption controller's DeletionTimeout: a pod a disruption was spent for counts as
// disrupted until it is deleted, or for this long.
const deletionTimeout = 2 * time.Minute

// disruptedOf is the budget's disruptedPods as its controller keeps them now (buildDisruptedPodMap): the
// pods spent for that are still the pod spent for, not being deleted (a terminating pod is not healthy
// anyway) and spent less than deletionTimeout ago. The others are dropped.
func (e *engine) disruptedOf(budget string) map[string]spentPod {
	spent := e.disruptedPods[budget]
	now := e.clock.Now()
	for name, s := range spent {
		p := e.api.Get(world.KindPod, name)
		if p == nil || jsonobj.GetStr(p, "metadata.uid") != s.uid || jsonobj.Get(p, "metadata.deletionTimestamp") != nil ||
			!now.Before(s.at.Add(deletionTimeout)) {
			delete(spent, name)
		}
	}
	return spent
}

// Budget is never asked: an update here is never refused as changed.
func (budgetWriter) Budget(_ context.Context, namespace, name string) (*policyv1.PodDisruptionBudget, error) {
	return nil, fmt.Errorf("the replay keeps no PodDisruptionBudget %s/%s to read again", namespace, name)
}

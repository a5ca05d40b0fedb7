// Package firewall checks a reconcile module's plan against the snapshot it was made from, before the
// host applies anything. The module is not trusted: a buggy or hostile module must not be able to
// touch what the StatefulSet does not own. Check refuses the whole plan if any action is out of
// bounds; the host then applies none of it.
//
// The rules (abi/README.md §10 is the normative list) allow exactly what the upstream v1.37 StatefulSet
// controller does in one sync, scoped to the set the snapshot is about:
//
//   - kinds and verbs (kinds.go): Pod create/update/patch/delete, PersistentVolumeClaim create/update,
//     ControllerRevision create/update/patch/delete, updateStatus of the set. Nothing else: no PVC
//     deletes (claims go through owner references), no writes to the set's spec;
//   - namespace (scope.go): the set's namespace only, in the action and in the object;
//   - names (names.go): pods <set>-<ordinal>, claims <template>-<set>-<ordinal> for one of the set's
//     volumeClaimTemplates, revisions <set>-<hash>; creates only for ordinals the set's spec covers;
//   - ownership (owners.go): updates, deletes and release patches only of objects the snapshot shows
//     controlled by this set (uid-checked); adoption patches only of orphans the snapshot shows the set
//     may adopt; creates carry a controller reference to this set;
//   - content (patch.go, claims.go): a patch is an adoption or a release (strategic merge of one owner
//     reference, with the object's uid as precondition) and nothing else; a claim update changes
//     only the claim's owner references, and only those that point at this set or its pods;
//   - created pods and revisions (created_pods.go, revisions.go): a pod is a template the set has with its
//     identity and claims; a revision holds the set's template;
//   - pod updates (pod_update.go, in_place.go): only what upstream's identity and storage repair change,
//     and, on a set that opted in to extension in-place-update, what an in-place update changes;
//   - status (status.go): updateStatus only of this set.
//
// Check is a pure function of the snapshot and the plan, and every path runs it: the controller before
// it writes, the replay engine (and so `ordinal replay`, `ordinal preview` and the admission webhook)
// before it carries a plan out in its world, where a refusal stops the replay as a failed module.
package firewall

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/abi"
)

// Rule names a firewall rule (the `rule` label of the controller's refusal metric).
type Rule string

// The rules, one per concept.
const (
	RuleKindVerb  Rule = "kind-verb" // a kind or verb the StatefulSet controller does not use
	RuleNamespace Rule = "namespace" // another namespace
	RuleName      Rule = "name"      // a name the set does not own, or an ordinal its spec does not cover
	RuleOwner     Rule = "owner"     // an object the set does not own (or may not adopt), a create without its controller reference
	RulePatch     Rule = "patch"     // a patch that is not an adoption or release
	RuleObject    Rule = "object"    // a malformed object, or a change the controller never makes
	RuleStatus    Rule = "status"    // a status update of another object
)

// Violation is one action out of bounds.
type Violation struct {
	Index  int        // position of the action in the plan
	Action abi.Action // the action (object and patch included)
	Rule   Rule
	Reason string
}

func (v Violation) String() string {
	ns := v.Action.Namespace
	if ns != "" {
		ns += "/"
	}
	return fmt.Sprintf("action %d (%s %s %s%s): %s: %s", v.Index, v.Action.Verb, v.Action.Kind, ns, v.Action.Name, v.Rule, v.Reason)
}

// RefusedError is returned by Check when at least one action is out of bounds. The whole plan is
// refused: a host applies none of its actions.
type RefusedError struct {
	Set        string // namespace/name of the set the snapshot is about
	Violations []Violation
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan refused by the action firewall (%d of its actions out of bounds for StatefulSet %s)", len(e.Violations), e.Set)
	for i, v := range e.Violations {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Violations)-3)
			break
		}
		b.WriteString("; ")
		b.WriteString(v.String())
	}
	return b.String()
}

// Rules returns the distinct rules violated, in order of first violation.
func (e *RefusedError) Rules() []Rule {
	var out []Rule
	seen := map[Rule]bool{}
	for _, v := range e.Violations {
		if !seen[v.Rule] {
			seen[v.Rule] = true
			out = append(out, v.Rule)
		}
	}
	return out
}

// Check returns nil when every action of the plan is within the set's bounds, else a *RefusedError
// listing every action that is not. Actions the plan marks with an expected error are checked like
// any other: the host issues them.
func Check(s *Scope, plan *abi.Plan) error {
	st := newPlanState(s)
	var vs []Violation
	for i := range plan.Actions {
		a := &plan.Actions[i]
		rule, reason := st.check(a)
		if rule == "" && a.Verb == abi.VerbResize {
			rule, reason = st.resizeThenUpdate(plan, i)
		}
		if rule != "" {
			vs = append(vs, Violation{Index: i, Action: *a, Rule: rule, Reason: reason})
		}
	}
	if len(vs) > 0 {
		return &RefusedError{Set: s.Namespace + "/" + s.Name, Violations: vs}
	}
	return nil
}

// planState follows, action by action, what the plan has done so far that changes what later actions
// may do: an adoption makes an orphan the set's own, a release makes it an orphan again (upstream
// adopts, then may update or delete the adopted object in the same sync).
type planState struct {
	s       *Scope
	adopted map[objKey]bool // true: adopted in this plan; false: released
	// createdRevisions: the data of the revisions the plan created so far, by name (revision_chain.go)
	createdRevisions map[string][]byte
	// templates: the revisions' templates a created pod may come from (created_pods.go), once read
	templates []namedTemplate
	// wire: the pod last decoded from an action's object (wirePod), so that the update after a resize is
	// decoded once for both the resize's rule and its own
	wire struct {
		a   *abi.Action
		pod *corev1.Pod
		err error
	}
}

type objKey struct{ kind, name string }

func newPlanState(s *Scope) *planState {
	return &planState{s: s, adopted: map[objKey]bool{}, createdRevisions: map[string][]byte{}}
}

// check returns the rule the action violates and why, or "".
func (st *planState) check(a *abi.Action) (Rule, string) {
	if rule, reason := checkKindVerb(st.s, a); rule != "" {
		return rule, reason
	}
	if a.Namespace != "" && a.Namespace != st.s.Namespace {
		return RuleNamespace, fmt.Sprintf("namespace %q is not the set's namespace %q", a.Namespace, st.s.Namespace)
	}
	switch a.Kind {
	case st.s.Kind:
		if a.Verb == abi.VerbPatch {
			return checkSetRollback(st.s, a)
		}
		return st.checkStatus(a)
	case abi.KindPod:
		return st.checkPod(a)
	case abi.KindPersistentVolumeClaim:
		return st.checkClaim(a)
	case abi.KindControllerRevision:
		return st.checkRevision(a)
	}
	return RuleKindVerb, fmt.Sprintf("kind %q", a.Kind)
}

// owned reports whether the object (kind, name) is controlled by the set at this point of the plan:
// controlled in the snapshot (uid-checked), or adopted earlier in the plan, and not released since.
func (st *planState) owned(kind string, o *Object) bool {
	if v, ok := st.adopted[objKey{kind, o.Name}]; ok {
		return v
	}
	return st.s.controls(o)
}

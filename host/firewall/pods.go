package firewall

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/abi"
)

// checkPod: pods named <set>-<ordinal> are created with the set as controller; only pods the set
// controls are updated, released or deleted; only orphans the set may adopt are adopted.
func (st *planState) checkPod(a *abi.Action) (Rule, string) {
	s := st.s
	if a.Verb == abi.VerbCreate {
		p, m, rule, reason := st.decodePod(a)
		if rule != "" {
			return rule, reason
		}
		if !s.isCreatableName(a.Name, s.Name) {
			return RuleName, fmt.Sprintf("a pod the set creates is named %s-<ordinal> for an ordinal in %s", s.Name, s.members())
		}
		if rule, reason := s.checkCreateOwner(m); rule != "" {
			return rule, reason
		}
		return st.checkCreatedPod(a.Name, p)
	}
	target := s.Pods[a.Name]
	if target == nil {
		return RuleOwner, "the pod is not in the snapshot: the set cannot be shown to own it"
	}
	switch a.Verb {
	case abi.VerbPatch:
		return st.checkOwnerPatch(abi.KindPod, a, target, func() bool { return s.isMember(a.Name) })
	case abi.VerbUpdate:
		p, rule, reason := st.checkPodReplace(a, target)
		if rule != "" {
			return rule, reason
		}
		return st.checkPodUpdate(target, p)
	case abi.VerbResize:
		return st.checkResize(a, target)
	case abi.VerbDelete:
		if !st.owned(abi.KindPod, target) {
			return RuleOwner, "the pod is not controlled by this set"
		}
	}
	return "", ""
}

// checkPodReplace is what an update and a resize of a pod share: the pod is the set's, and the object, decoded
// whole once for the rules of both, is the snapshot's pod (its name, namespace, uid and owner references).
func (st *planState) checkPodReplace(a *abi.Action, target *Object) (*corev1.Pod, Rule, string) {
	if !st.owned(abi.KindPod, target) {
		return nil, RuleOwner, "the pod is not controlled by this set"
	}
	p, m, rule, reason := st.decodePod(a)
	if rule != "" {
		return nil, rule, reason
	}
	if rule, reason := checkUpdateIdentity(target, m); rule != "" {
		return nil, rule, reason
	}
	return p, "", ""
}

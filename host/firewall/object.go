package firewall

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/abi"
)

// apiVersionOf is the apiVersion of the kinds the controller writes.
var apiVersionOf = map[string]string{
	abi.KindPod:                   "v1",
	abi.KindPersistentVolumeClaim: "v1",
	abi.KindControllerRevision:    "apps/v1",
}

// decodeObject decodes the metadata of a create's or update's object and checks that it is the object
// the action names: same kind and apiVersion (when present), same non-empty name (which takes precedence over a generateName, as upstream's pods carry one), and the
// set's namespace (or none). The API server takes the name from the object on create, so an action
// named web-0 whose object is named db-0 would create db-0.
func (s *Scope) decodeObject(a *abi.Action) (*objectMeta, Rule, string) {
	if len(a.Object) == 0 {
		return nil, RuleObject, "no object"
	}
	var m objectMeta
	if err := decodeWire(a.Object, &m); err != nil {
		return nil, RuleObject, "object does not decode: " + err.Error()
	}
	if rule, reason := s.checkObjectMeta(a, &m); rule != "" {
		return nil, rule, reason
	}
	return &m, "", ""
}

// checkObjectMeta is decodeObject's judgement of the decoded metadata.
func (s *Scope) checkObjectMeta(a *abi.Action, m *objectMeta) (Rule, string) {
	if m.Kind != "" && m.Kind != a.Kind {
		return RuleObject, fmt.Sprintf("object kind %q in a %s action", m.Kind, a.Kind)
	}
	if m.APIVersion != "" && m.APIVersion != apiVersionOf[a.Kind] {
		return RuleObject, fmt.Sprintf("object apiVersion %q, want %q", m.APIVersion, apiVersionOf[a.Kind])
	}
	if m.Metadata.Namespace != "" && m.Metadata.Namespace != s.Namespace {
		return RuleNamespace, fmt.Sprintf("object namespace %q is not the set's namespace %q", m.Metadata.Namespace, s.Namespace)
	}
	if a.Name == "" || m.Metadata.Name != a.Name {
		return RuleObject, fmt.Sprintf("object name %q differs from the action's %q", m.Metadata.Name, a.Name)
	}
	return "", ""
}

// decodePod is decodeObject for a pod a plan creates, updates or resizes, decoded whole once: its metadata
// judged as any object's, its content then by the rules of its verb (a created pod's two decodes were most
// of a Parallel rollout's firewall time).
func (st *planState) decodePod(a *abi.Action) (*corev1.Pod, *objectMeta, Rule, string) {
	if len(a.Object) == 0 {
		return nil, nil, RuleObject, "no object"
	}
	p, err := st.wirePod(a)
	if err != nil {
		return nil, nil, RuleObject, "object does not decode: " + err.Error()
	}
	m := &objectMeta{APIVersion: p.APIVersion, Kind: p.Kind}
	md := &m.Metadata
	md.Name, md.GenerateName, md.Namespace, md.UID = p.Name, p.GenerateName, p.Namespace, p.UID
	md.Labels, md.OwnerReferences, md.DeletionTimestamp = p.Labels, p.OwnerReferences, p.DeletionTimestamp
	if rule, reason := st.s.checkObjectMeta(a, m); rule != "" {
		return nil, nil, rule, reason
	}
	return p, m, "", ""
}

// wirePod is action a's object decoded as a pod (decodeWire), the last such decode kept: a resize's rule
// reads the update after it (resizeThenUpdate) before that update's own rule does. The rules only read
// the pod.
func (st *planState) wirePod(a *abi.Action) (*corev1.Pod, error) {
	if st.wire.a != a {
		var p corev1.Pod
		err := decodeWire(a.Object, &p)
		st.wire.a, st.wire.pod, st.wire.err = a, &p, err
	}
	if st.wire.err != nil {
		return nil, st.wire.err
	}
	return st.wire.pod, nil
}

// isSetControllerRef reports whether ref is a controller reference to this set.
func (s *Scope) isSetControllerRef(ref *metav1.OwnerReference) bool {
	return ref != nil && ref.Controller != nil && *ref.Controller && ref.UID == s.UID && ref.Kind == s.Kind &&
		ref.Name == s.Name && ref.APIVersion == s.APIVersion
}

// checkCreateOwner: a created pod or revision carries exactly one controller reference, to this set.
func (s *Scope) checkCreateOwner(m *objectMeta) (Rule, string) {
	ref := controllerOf(m.Metadata.OwnerReferences)
	if !s.isSetControllerRef(ref) {
		return RuleOwner, "a created object must carry a controller reference to this set (" + s.Kind + " " + s.Name + ", uid " + string(s.UID) + ")"
	}
	return "", ""
}

// checkUpdateIdentity: an update replaces the object the snapshot has (same uid) and leaves its owner
// references as they are (upstream's pod and revision updates never change them).
func checkUpdateIdentity(target *Object, m *objectMeta) (Rule, string) {
	if m.Metadata.UID != "" && m.Metadata.UID != target.UID {
		return RuleObject, fmt.Sprintf("object uid %s is not the snapshot's %s", m.Metadata.UID, target.UID)
	}
	if !sameRefs(target.OwnerReferences, m.Metadata.OwnerReferences) {
		return RuleOwner, "an update may not change the object's owner references"
	}
	return "", ""
}

func sameRefs(a, b []metav1.OwnerReference) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

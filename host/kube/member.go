package kube

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// The rule upstream's StatefulSet controller uses to tell the set's pods from the others
// (getPodsForStatefulSet: ClaimPods with isMemberOf, then the ordinal updateStatefulSet reads), for the
// typed pods of the webhook and the generic-JSON pods of the replay: a pod is the set's when its name is
// <set>-<ordinal> with an ordinal upstream parses (internal/ordinal), its labels match the set's selector,
// and the set controls it (a controller reference with the set's uid) or it is an orphan the set adopts
// (neither it nor the set being deleted). A pod that merely carries the set's labels (db-0, web--1,
// another controller's pod) is never the set's, whatever the ordinal its name seems to have.

// Members tells a set's pods from other pods.
type Members struct {
	name, namespace, uid string
	selector             labels.Selector // nil: the set's selector selects nothing
	deleting             bool
}

// MembersOf is Members for a typed set.
func MembersOf(set *appsv1.StatefulSet) Members {
	m := Members{name: set.Name, namespace: set.Namespace, uid: string(set.UID), deleting: set.DeletionTimestamp != nil}
	if sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector); err == nil && !sel.Empty() {
		m.selector = sel
	}
	return m
}

// MembersOfJSON is Members for a set held as generic JSON (nil: no set, no members).
func MembersOfJSON(set jsonobj.Obj) Members {
	m := Members{name: jsonobj.GetStr(set, "metadata.name"), namespace: jsonobj.GetStr(set, "metadata.namespace"),
		uid: jsonobj.GetStr(set, "metadata.uid"), deleting: jsonobj.Get(set, "metadata.deletionTimestamp") != nil}
	if sel, err := SelectorJSON(set); err == nil && sel != nil && !sel.Empty() {
		m.selector = sel
	}
	return m
}

// Key says what the rule depends on: two Members with one key tell the same pods apart.
func (m Members) Key() string {
	sel := "<none>"
	if m.selector != nil {
		sel = m.selector.String()
	}
	return fmt.Sprintf("%q %q %q %t %q", m.name, m.namespace, m.uid, m.deleting, sel)
}

// Pod is the pod's ordinal when it is one of the set's pods; ok is false otherwise.
func (m Members) Pod(p *corev1.Pod) (int, bool) {
	ref := metav1.GetControllerOfNoCopy(p)
	return m.member(p.Name, p.Namespace, labels.Set(p.Labels), ref != nil, ref != nil && string(ref.UID) == m.uid, p.DeletionTimestamp != nil)
}

// PodJSON is Pod for a pod held as generic JSON.
func (m Members) PodJSON(p jsonobj.Obj) (int, bool) {
	controlled, ours := false, false
	for _, r := range jsonobj.GetArr(p, "metadata.ownerReferences") {
		if c, _ := jsonobj.Get(r, "controller").(bool); c {
			controlled, ours = true, jsonobj.GetStr(r, "uid") == m.uid
			break
		}
	}
	lbls := labels.Set{}
	for k, v := range jsonobj.GetObj(p, "metadata.labels") {
		lbls[k], _ = v.(string)
	}
	return m.member(jsonobj.GetStr(p, "metadata.name"), jsonobj.GetStr(p, "metadata.namespace"), lbls,
		controlled, ours, jsonobj.Get(p, "metadata.deletionTimestamp") != nil)
}

// member: ClaimObject keeps a controlled pod that matches (selector and isMemberOf) and adopts a matching
// orphan; the sync then ignores a member whose ordinal does not parse.
func (m Members) member(name, namespace string, lbls labels.Set, controlled, ours, deleting bool) (int, bool) {
	if m.name == "" || m.selector == nil || namespace != "" && m.namespace != "" && namespace != m.namespace {
		return -1, false
	}
	o, ok := ordinal.Of(name, m.name)
	if !ok || !m.selector.Matches(lbls) {
		return -1, false
	}
	if controlled {
		return o, ours
	}
	return o, !m.deleting && !deleting
}

// SelectorJSON is an object's spec.selector (a StatefulSet's, a PodDisruptionBudget's) as a label
// selector; nil when it has none.
func SelectorJSON(o jsonobj.Obj) (labels.Selector, error) {
	raw, ok := jsonobj.Get(o, "spec.selector").(map[string]any)
	if !ok {
		return nil, nil
	}
	b, _ := json.Marshal(raw)
	var sel metav1.LabelSelector
	if err := json.Unmarshal(b, &sel); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&sel)
}

package firewall

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	sigsjson "sigs.k8s.io/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/abi"
)

// checkClaim: the set's claims are named <template>-<set>-<ordinal>. A claim is created for an ordinal
// the spec asks for; an update (the PVC retention policy) changes only the claim's owner references,
// and only those that point at this set or at one of its pods. Claims are never deleted (kinds.go): the
// garbage collector deletes them through those references. The one claim patch is extension
// resize-claims' (claim_resize.go), on a claim of a member ordinal.
func (st *planState) checkClaim(a *abi.Action) (Rule, string) {
	s := st.s
	if a.Verb == abi.VerbPatch {
		parent, ok := s.claimParent(a.Name)
		if !ok || !s.isCreatableName(a.Name, parent) {
			return RuleName, "a claim is resized only for an ordinal in " + s.members() + ", named <template>-" + s.Name + "-<ordinal>"
		}
		return st.checkClaimResize(a, strings.TrimSuffix(parent, "-"+s.Name))
	}
	m, rule, reason := s.decodeObject(a)
	if rule != "" {
		return rule, reason
	}
	parent, ok := s.claimParent(a.Name)
	if !ok {
		return RuleName, fmt.Sprintf("a claim of this set is named <template>-%s-<ordinal> for one of its volumeClaimTemplates %v", s.Name, s.ClaimTemplates)
	}
	if a.Verb == abi.VerbCreate {
		if !s.isCreatableName(a.Name, parent) {
			return RuleName, "claims are created only for ordinals in " + s.members()
		}
		for i := range m.Metadata.OwnerReferences {
			if !s.isSetOrPodRef(&m.Metadata.OwnerReferences[i]) {
				return RuleOwner, "a created claim may only reference this set or its pods"
			}
		}
		return "", ""
	}
	// update
	target := s.Claims[a.Name]
	if target == nil {
		return RuleOwner, "the claim is not in the snapshot"
	}
	if m.Metadata.UID != "" && m.Metadata.UID != target.UID {
		return RuleObject, fmt.Sprintf("object uid %s is not the snapshot's %s", m.Metadata.UID, target.UID)
	}
	if diff := claimChangeBeyondOwners(target.Raw, a.Object); diff != "" {
		return RuleObject, "a claim update may change only metadata.ownerReferences; it changes " + diff
	}
	for _, r := range m.Metadata.OwnerReferences { // added or kept
		if !s.isSetOrPodRef(&r) && !hasRef(target.OwnerReferences, &r) {
			return RuleOwner, fmt.Sprintf("adds an owner reference to %s %s, which is neither this set nor one of its pods", r.Kind, r.Name)
		}
	}
	for _, r := range target.OwnerReferences { // removed
		if !hasRef(m.Metadata.OwnerReferences, &r) && !s.isSetOrPodRef(&r) && !s.isStaleSetOrPodRef(&r) {
			return RuleOwner, fmt.Sprintf("removes the owner reference to %s %s, which is neither this set nor one of its pods", r.Kind, r.Name)
		}
	}
	return "", ""
}

// isSetOrPodRef: a reference to this set (uid-checked), or to a pod of this set as the snapshot has it
// (name <set>-<ordinal>, uid-checked).
func (s *Scope) isSetOrPodRef(r *metav1.OwnerReference) bool {
	if r.UID == s.UID && r.Kind == s.Kind && r.Name == s.Name {
		return true
	}
	if r.Kind != abi.KindPod || r.APIVersion != "v1" {
		return false
	}
	if !s.isMember(r.Name) {
		return false
	}
	p := s.Pods[r.Name]
	return p != nil && p.UID == r.UID
}

// isStaleSetOrPodRef: a reference to an earlier set or pod of the same name (a stale reference, which
// upstream removes when it fixes a claim's owners).
func (s *Scope) isStaleSetOrPodRef(r *metav1.OwnerReference) bool {
	if r.Kind == s.Kind && r.Name == s.Name {
		return true
	}
	return r.Kind == abi.KindPod && s.isMember(r.Name)
}

func hasRef(refs []metav1.OwnerReference, r *metav1.OwnerReference) bool {
	for i := range refs {
		if reflect.DeepEqual(refs[i], *r) {
			return true
		}
	}
	return false
}

// claimChangeBeyondOwners compares the snapshot's claim with the update's object as JSON values,
// ignoring metadata.ownerReferences, apiVersion and kind. It returns the first field that
// differs, or "".
func claimChangeBeyondOwners(before, after json.RawMessage) string {
	var b, a map[string]any
	// Both sides with the API server's decoder (decodeObject has checked the keys of after).
	if sigsjson.UnmarshalCaseSensitivePreserveInts(before, &b) != nil || sigsjson.UnmarshalCaseSensitivePreserveInts(after, &a) != nil {
		return "an undecodable object"
	}
	for _, k := range []string{"apiVersion", "kind"} { // checked by decodeObject; either side may omit them
		delete(a, k)
		delete(b, k)
	}
	bm, _ := b["metadata"].(map[string]any)
	am, _ := a["metadata"].(map[string]any)
	delete(bm, "ownerReferences")
	delete(am, "ownerReferences")
	for k := range union(a, b) {
		if k == "metadata" {
			for mk := range union(am, bm) {
				if !reflect.DeepEqual(am[mk], bm[mk]) {
					return "metadata." + mk
				}
			}
			continue
		}
		if !reflect.DeepEqual(a[k], b[k]) {
			return k
		}
	}
	return ""
}

func union(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

package firewall

import (
	"encoding/json"
	"errors"
	"fmt"

	sigsjson "sigs.k8s.io/json"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
)

// The only patches the controller sends are upstream's ControllerRefManager's, as strategic merge
// patches on metadata alone:
//
//	adopt:   {"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web",
//	          "uid":"<set uid>","controller":true,"blockOwnerDeletion":true}],"uid":"<object uid>"}}
//	release: {"metadata":{"ownerReferences":[{"$patch":"delete","uid":"<set uid>"}],"uid":"<object uid>"}}
//
// metadata.uid makes the API server apply the patch only to the object with that uid (the one the
// firewall checked in the snapshot). Anything else in a patch (labels, spec, other references) is
// refused.
type ownerPatch struct {
	Metadata struct {
		OwnerReferences []map[string]json.RawMessage `json:"ownerReferences"`
		UID             types.UID                    `json:"uid"`
	} `json:"metadata"`
}

const strategicMergePatch = "application/strategic-merge-patch+json"

// checkOwnerPatch checks an adoption or release patch of target, and records its effect on ownership
// for the rest of the plan. memberName reports whether upstream would count the object as a member of
// the set by its name (pods only).
func (st *planState) checkOwnerPatch(kind string, a *abi.Action, target *Object, memberName func() bool) (Rule, string) {
	s := st.s
	if a.PatchType != "" && a.PatchType != strategicMergePatch {
		return RulePatch, fmt.Sprintf("patch type %q: only strategic merge adoption/release patches are allowed", a.PatchType)
	}
	if err := checkKeys(a.Patch); err != nil {
		return RulePatch, "patch: " + err.Error()
	}
	if err := strictKeys(a.Patch, "metadata"); err != nil {
		return RulePatch, err.Error()
	}
	var p ownerPatch
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(a.Patch, &p); err != nil {
		return RulePatch, "patch does not decode: " + err.Error()
	}
	var meta map[string]json.RawMessage
	_ = sigsjson.UnmarshalCaseSensitivePreserveInts(a.Patch, &struct {
		M *map[string]json.RawMessage `json:"metadata"`
	}{&meta})
	for k := range meta {
		if k != "ownerReferences" && k != "uid" {
			return RulePatch, fmt.Sprintf("patch changes metadata.%s: only owner references may be patched", k)
		}
	}
	if p.Metadata.UID == "" || p.Metadata.UID != target.UID {
		return RulePatch, fmt.Sprintf("patch must carry the object's uid %s as metadata.uid (has %q)", target.UID, p.Metadata.UID)
	}
	if len(p.Metadata.OwnerReferences) != 1 {
		return RulePatch, "patch must adopt or release exactly one owner reference"
	}
	ref := p.Metadata.OwnerReferences[0]
	if _, del := ref["$patch"]; del { // release
		var r struct {
			Patch string    `json:"$patch"`
			UID   types.UID `json:"uid"`
		}
		if err := remarshal(ref, &r); err != nil || r.Patch != "delete" || r.UID != s.UID || len(ref) != 2 {
			return RulePatch, "a release patch removes this set's owner reference ({\"$patch\":\"delete\",\"uid\":\"" + string(s.UID) + "\"}) and nothing else"
		}
		if !st.owned(kind, target) {
			return RuleOwner, "release of an object this set does not control"
		}
		st.adopted[objKey{kind, target.Name}] = false
		return "", ""
	}
	var r ownerRef
	if err := remarshal(ref, &r); err != nil {
		return RulePatch, "owner reference does not decode: " + err.Error()
	}
	if !r.Controller || !r.BlockOwnerDeletion || r.UID != s.UID || r.Kind != s.Kind || r.Name != s.Name || r.APIVersion != s.APIVersion || len(ref) != 6 {
		return RulePatch, "an adoption patch adds exactly this set's controller reference"
	}
	if st.owned(kind, target) {
		return "", "" // already ours: a no-op adoption
	}
	if !s.adoptable(target) || !memberName() {
		return RuleOwner, "adoption of an object the snapshot does not show as an orphan this set may adopt (no controller, labels matching the set's selector" + map[bool]string{true: ", a name <set>-<ordinal>", false: ""}[kind == "Pod"] + ", set not being deleted)"
	}
	st.adopted[objKey{kind, target.Name}] = true
	return "", ""
}

type ownerRef struct {
	APIVersion         string    `json:"apiVersion"`
	Kind               string    `json:"kind"`
	Name               string    `json:"name"`
	UID                types.UID `json:"uid"`
	Controller         bool      `json:"controller"`
	BlockOwnerDeletion bool      `json:"blockOwnerDeletion"`
}

// remarshal decodes an owner reference as the API server would (case-sensitive) and fails on any field
// out does not have: no field of a reference the firewall does not read may reach the API server.
func remarshal(in any, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(b, out, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// strictKeys fails unless raw is a JSON object whose keys are all in allowed.
func strictKeys(raw json.RawMessage, allowed ...string) error {
	var m map[string]json.RawMessage
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &m); err != nil {
		return fmt.Errorf("patch is not a JSON object: %v", err)
	}
	for k := range m {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return fmt.Errorf("patch changes %q: only metadata.ownerReferences may be patched", k)
		}
	}
	return nil
}

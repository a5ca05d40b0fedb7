package firewall

import (
	"encoding/json"
	"fmt"

	sigsjson "sigs.k8s.io/json"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
)

// The one claim patch there is: extension resize-claims (abi.AnnotationResizeClaims), on a set that
// opted in, growing one of its claims to exactly its volumeClaimTemplate's storage request:
//
//	{"metadata":{"uid":"<claim uid>"},"spec":{"resources":{"requests":{"storage":"<template's request>"}}}}
//
// as a strategic merge patch, nothing else at any level. The quantity must equal the template's and be
// larger than the claim's request in the snapshot (never a shrink), both read as the API server reads them.
type resizePatch struct {
	Metadata struct {
		UID types.UID `json:"uid"`
	} `json:"metadata"`
	Spec struct {
		Resources struct {
			Requests struct {
				Storage string `json:"storage"`
			} `json:"requests"`
		} `json:"resources"`
	} `json:"spec"`
}

// claimSizes reads, for a set opting into resize-claims, each claim template's storage request.
func claimSizes(annotations map[string]string, templates map[string]resource.Quantity) map[string]resource.Quantity {
	if annotations[abi.AnnotationResizeClaims] != "true" {
		return nil
	}
	return templates
}

// checkClaimResize checks a claim patch against the rule above.
func (st *planState) checkClaimResize(a *abi.Action, template string) (Rule, string) {
	s := st.s
	want, ok := s.claimSizes[template]
	if !ok {
		return RuleKindVerb, fmt.Sprintf("a claim is patched only to resize it, on a set annotated %s: \"true\" whose template %q requests storage", abi.AnnotationResizeClaims, template)
	}
	target := s.Claims[a.Name]
	if target == nil {
		return RuleOwner, "the claim is not in the snapshot"
	}
	if a.PatchType != strategicMergePatch {
		return RulePatch, fmt.Sprintf("patch type %q: a claim resize is a strategic merge patch", a.PatchType)
	}
	if err := checkKeys(a.Patch); err != nil {
		return RulePatch, "patch: " + err.Error()
	}
	var p resizePatch
	strict, err := sigsjson.UnmarshalStrict(a.Patch, &p, sigsjson.DisallowUnknownFields)
	if err != nil || len(strict) > 0 || !exactShape(a.Patch) {
		return RulePatch, `a claim resize patch is {"metadata":{"uid":...},"spec":{"resources":{"requests":{"storage":...}}}} and nothing else`
	}
	if p.Metadata.UID == "" || p.Metadata.UID != target.UID {
		return RulePatch, fmt.Sprintf("patch must carry the claim's uid %s as metadata.uid (has %q)", target.UID, p.Metadata.UID)
	}
	q, err := resource.ParseQuantity(p.Spec.Resources.Requests.Storage)
	if err != nil || q.Cmp(want) != 0 {
		return RulePatch, fmt.Sprintf("a claim is resized to its template's storage request %s, not %q", want.String(), p.Spec.Resources.Requests.Storage)
	}
	var cur struct {
		Spec struct {
			Resources struct {
				Requests map[string]resource.Quantity `json:"requests"`
			} `json:"resources"`
		} `json:"spec"`
	}
	_ = sigsjson.UnmarshalCaseSensitivePreserveInts(target.Raw, &cur)
	if have, ok := cur.Spec.Resources.Requests["storage"]; !ok || q.Cmp(have) <= 0 {
		return RulePatch, fmt.Sprintf("a claim resize only grows the request: %s is not more than the claim's %s", q.String(), have.String())
	}
	return "", ""
}

// exactShape reports whether a patch has exactly the resize patch's members (no null, no extra key, each
// level an object): the strict decode above refuses unknown fields; this refuses missing levels.
func exactShape(raw json.RawMessage) bool {
	var m struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
		Spec     map[string]struct {
			Requests map[string]json.RawMessage `json:"requests"`
		} `json:"spec"`
	}
	var top map[string]json.RawMessage
	if sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &top) != nil || len(top) != 2 ||
		sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &m) != nil || len(m.Metadata) != 1 || len(m.Spec) != 1 {
		return false
	}
	r, ok := m.Spec["resources"]
	return ok && len(r.Requests) == 1
}

package firewall

import (
	"encoding/json"
	"fmt"

	sigsjson "sigs.k8s.io/json"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/quantity"
)

// The one claim patch there is: extension resize-claims (abi.AnnotationResizeClaims), on a set that
// opted in, growing one of its claims to exactly its volumeClaimTemplate's storage request:
//
//	{"metadata":{"uid":"<claim uid>"},"spec":{"resources":{"requests":{"storage":"<template's request>"}}}}
//
// as a strategic merge patch, nothing else at any level. The quantity is the template's string as the
// snapshot carries it (the module copies it), and it must be larger than the claim's request, both read
// with internal/quantity, the module's own reading, in bounded time (a module cannot make the firewall
// compare 1e2147483647 with anything).
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

// storageOf reads spec.resources.requests.storage as a string ("" when absent or not a string).
type storageOf struct {
	Spec struct {
		Resources struct {
			Requests map[string]json.RawMessage `json:"requests"`
		} `json:"resources"`
	} `json:"spec"`
}

func (o *storageOf) storage() string {
	var v string
	if raw, ok := o.Spec.Resources.Requests["storage"]; !ok || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v
}

// claimSizes reads, for a set opting into resize-claims, each claim template's storage request as the
// snapshot's set carries it (setJSON), by template name: the last of two templates with one name wins, as
// for the claims the module creates.
func claimSizes(annotations map[string]string, setJSON []byte) map[string]string {
	if annotations[abi.AnnotationResizeClaims] != "true" {
		return nil
	}
	var set struct {
		Spec struct {
			VolumeClaimTemplates []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
				storageOf
			} `json:"volumeClaimTemplates"`
		} `json:"spec"`
	}
	if sigsjson.UnmarshalCaseSensitivePreserveInts(setJSON, &set) != nil {
		return nil
	}
	sizes := map[string]string{}
	for _, t := range set.Spec.VolumeClaimTemplates {
		if v := t.storage(); v != "" {
			sizes[t.Metadata.Name] = v
		} else {
			delete(sizes, t.Metadata.Name)
		}
	}
	return sizes
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
	if p.Spec.Resources.Requests.Storage != want {
		return RulePatch, fmt.Sprintf("a claim is resized to its template's storage request %q, not %.64q", want, p.Spec.Resources.Requests.Storage)
	}
	var cur storageOf
	_ = sigsjson.UnmarshalCaseSensitivePreserveInts(target.Raw, &cur)
	have := cur.storage()
	n, ok1 := quantity.Value(want)
	h, ok2 := quantity.Value(have)
	if !ok1 || !ok2 || n <= h {
		return RulePatch, fmt.Sprintf("a claim resize only grows the request: %q is not more than the claim's %.64q", want, have)
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

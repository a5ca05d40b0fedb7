package firewall

import (
	"fmt"

	"github.com/ordinal-dev/ordinal/abi"
)

// verbsByKind are the writes the upstream StatefulSet controller makes, by kind. It never deletes a
// claim (the retention policy works through owner references and the garbage collector) and writes
// only the status of the set. A claim patch is extension resize-claims', allowed only as that
// (claim_resize.go); a pod resize extension in-place-update's (in_place.go).
var verbsByKind = map[string]map[string]bool{
	abi.KindPod:                   {abi.VerbCreate: true, abi.VerbUpdate: true, abi.VerbPatch: true, abi.VerbDelete: true, abi.VerbResize: true},
	abi.KindPersistentVolumeClaim: {abi.VerbCreate: true, abi.VerbUpdate: true, abi.VerbPatch: true},
	abi.KindControllerRevision:    {abi.VerbCreate: true, abi.VerbUpdate: true, abi.VerbPatch: true, abi.VerbDelete: true},
}

// checkKindVerb allows only the kinds and verbs above, and updateStatus of the set's kind.
func checkKindVerb(s *Scope, a *abi.Action) (Rule, string) {
	if a.Kind == s.Kind {
		if a.Verb != abi.VerbUpdateStatus && a.Verb != abi.VerbPatch {
			return RuleKindVerb, fmt.Sprintf("%s of a %s: the controller only writes the status of its set", a.Verb, a.Kind)
		}
		return "", "" // a patch is extension progress-deadline's rollback, allowed only as that (set_rollback.go)
	}
	verbs, ok := verbsByKind[a.Kind]
	if !ok {
		return RuleKindVerb, fmt.Sprintf("kind %q is not one the StatefulSet controller writes", a.Kind)
	}
	if !verbs[a.Verb] {
		return RuleKindVerb, fmt.Sprintf("%s of a %s is not a write the StatefulSet controller makes", a.Verb, a.Kind)
	}
	return "", ""
}

// Writes lists the verbs the controller writes each kind with (the set's own kind: updateStatus only), for
// the RBAC that grants exactly those (host/controller's least-privilege test).
func Writes() map[string][]string {
	out := map[string][]string{}
	for kind, verbs := range verbsByKind {
		for v := range verbs {
			out[kind] = append(out[kind], v)
		}
	}
	return out
}

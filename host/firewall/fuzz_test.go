package firewall_test

import (
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/internal/conformance"
	names "github.com/ordinal-dev/ordinal/internal/ordinal"
)

// FuzzFirewall feeds hostile plans (mutated upstream plans) against their snapshots through the host's
// pipeline: plan.Decode, then firewall.Check. Never a panic; and what the firewall lets through stays
// inside the set: its namespace, its kinds and verbs, and for pods only the set's members.
func FuzzFirewall(f *testing.F) {
	cases, err := conformance.All()
	if err != nil {
		f.Fatal(err)
	}
	for i, c := range cases {
		if i%10 == 0 {
			f.Add(c.Snapshot, c.Plan)
		}
	}
	f.Fuzz(func(t *testing.T, snapshot, raw []byte) {
		s, err := firewall.ScopeFromSnapshot(snapshot)
		if err != nil {
			return
		}
		p, err := plan.Decode(raw)
		if err != nil {
			return
		}
		if firewall.Check(s, p) != nil {
			return
		}
		for _, a := range p.Actions {
			if a.Namespace != "" && a.Namespace != s.Namespace {
				t.Fatalf("let through a write to namespace %q", a.Namespace)
			}
			switch {
			case a.Kind == s.Kind:
				if a.Verb != abi.VerbUpdateStatus || a.Name != s.Name {
					t.Fatalf("let through %s of %s %s", a.Verb, a.Kind, a.Name)
				}
			case a.Kind == abi.KindPod:
				if parent, _ := names.Parse(a.Name); parent != s.Name && !releasesOwnPod(s, &a) {
					t.Fatalf("let through %s of pod %s, not a member of %s", a.Verb, a.Name, s.Name)
				}
			case a.Kind == abi.KindPersistentVolumeClaim:
				if a.Verb != abi.VerbCreate && a.Verb != abi.VerbUpdate {
					t.Fatalf("let through %s of a claim", a.Verb)
				}
			case a.Kind == abi.KindControllerRevision:
			default:
				t.Fatalf("let through kind %s", a.Kind)
			}
		}
	})
}

// releasesOwnPod: a patch that releases a pod the set controls in the snapshot (upstream releases its pods
// whose names no longer parse as its members).
func releasesOwnPod(s *firewall.Scope, a *abi.Action) bool {
	o := s.Object(abi.KindPod, a.Name)
	if a.Verb != abi.VerbPatch || plan.IsAdoption(a.Patch) || o == nil {
		return false
	}
	for _, r := range o.OwnerReferences {
		if r.Controller != nil && *r.Controller && r.UID == s.UID {
			return true
		}
	}
	return false
}

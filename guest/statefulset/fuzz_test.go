package statefulset

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

type fzObj struct {
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		UID               string            `json:"uid"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
		OwnerReferences   []struct {
			UID        string `json:"uid"`
			Controller *bool  `json:"controller"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Status struct {
		Phase      string `json:"phase"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

func (o *fzObj) controllerUID() (string, bool) {
	for _, r := range o.Metadata.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			return r.UID, true
		}
	}
	return "", false
}

type fzSnap struct {
	StatefulSet struct {
		fzObj
		Spec struct {
			Replicas            int    `json:"replicas"`
			PodManagementPolicy string `json:"podManagementPolicy"`
			Ordinals            *struct {
				Start int `json:"start"`
			} `json:"ordinals"`
		} `json:"spec"`
	} `json:"statefulSet"`
	Pods      []fzObj `json:"pods"`
	Revisions []fzObj `json:"revisions"`
}

type fzPlan struct {
	Actions []struct {
		Verb, Kind, Namespace, Name, Error string
	} `json:"actions"`
	Error *struct{ Code, Message string } `json:"error"`
}

// FuzzReconcile checks invariants of Reconcile on random valid snapshots built from the fuzz
// input: no panic, determinism, never a second pod for an ordinal, never a delete of an object
// the set does not own, and under OrderedReady never a new pod while a lower ordinal is not
// Running and Ready.
func FuzzReconcile(f *testing.F) {
	for i := int64(0); i < 64; i++ {
		f.Add(i)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		in := genSnapshot(seed)
		out := Reconcile(in)
		if again := Reconcile(in); !bytes.Equal(out, again) {
			t.Fatalf("seed %d: not deterministic", seed)
		}
		checkInvariants(t, seed, in, out)
	})
}

func checkInvariants(t *testing.T, seed int64, in, out []byte) {
	var snap fzSnap
	if err := json.Unmarshal(in, &snap); err != nil {
		t.Fatal(err)
	}
	var plan fzPlan
	if err := json.Unmarshal(out, &plan); err != nil {
		t.Fatalf("seed %d: plan is not JSON: %v", seed, err)
	}
	if plan.Error != nil && strings.HasPrefix(plan.Error.Message, "internal error") {
		t.Fatalf("seed %d: panic: %s", seed, plan.Error.Message)
	}
	set := &snap.StatefulSet
	setUID, ns, name := set.Metadata.UID, set.Metadata.Namespace, set.Metadata.Name
	start := 0
	if set.Spec.Ordinals != nil {
		start = set.Spec.Ordinals.Start
	}
	adopted := map[string]bool{}
	for _, a := range plan.Actions {
		if a.Verb == "patch" {
			adopted[a.Kind+"/"+a.Name] = true
		}
	}
	owned := func(o *fzObj, kind string) bool {
		uid, ok := o.controllerUID()
		return (ok && uid == setUID) || (!ok && adopted[kind+"/"+o.Metadata.Name])
	}
	// claimed pods by ordinal
	claimedOrd := map[int64][]*fzObj{}
	podByName := map[string]*fzObj{}
	for i := range snap.Pods {
		p := &snap.Pods[i]
		if p.Metadata.Namespace != ns {
			continue
		}
		podByName[p.Metadata.Name] = p
		parent, ord := parentAndOrdinal(p.Metadata.Name)
		_, hasController := p.controllerUID()
		released := hasController && adopted["Pod/"+p.Metadata.Name] // a patch of an owned pod releases it
		if parent == name && ord >= 0 && owned(p, "Pod") && !released {
			claimedOrd[ord] = append(claimedOrd[ord], p)
		}
	}
	revByName := map[string]*fzObj{}
	for i := range snap.Revisions {
		revByName[snap.Revisions[i].Metadata.Name] = &snap.Revisions[i]
	}
	created := 0
	createdNames := map[string]bool{}
	for _, a := range plan.Actions {
		switch {
		case a.Verb == "create" && a.Kind == "Pod" && a.Error == "":
			created++
			createdNames[a.Name] = true
			_, ord := parentAndOrdinal(a.Name)
			if len(claimedOrd[ord]) > 0 {
				t.Fatalf("seed %d: created %s although pod %s has ordinal %d", seed, a.Name, claimedOrd[ord][0].Metadata.Name, ord)
			}
			if set.Spec.PodManagementPolicy != "Parallel" {
				for o := int64(start); o < ord; o++ {
					ready := false
					for _, p := range claimedOrd[o] {
						for _, c := range p.Status.Conditions {
							if c.Type == "Ready" && c.Status == "True" && p.Status.Phase == "Running" && p.Metadata.DeletionTimestamp == nil {
								ready = true
							}
						}
					}
					if !ready {
						t.Fatalf("seed %d: OrderedReady created %s while ordinal %d is not Running and Ready", seed, a.Name, o)
					}
				}
			}
		case a.Verb == "delete" && a.Kind == "Pod" && a.Error != "":
			// NotFound: upstream deletes a slot's pod that was never created (e.g. held back by
			// a stale claim) during a Parallel rolling update; nothing is removed.
			if podByName[a.Name] != nil && !strings.Contains(a.Error, "not found") {
				t.Fatalf("seed %d: delete of %s failed: %s", seed, a.Name, a.Error)
			}
		case a.Verb == "delete" && a.Kind == "Pod":
			p := podByName[a.Name]
			if createdNames[a.Name] {
				break // created by this very sync (upstream may replace it at once in Parallel)
			}
			if p == nil || !owned(p, "Pod") {
				t.Fatalf("seed %d: deleted pod %s the set does not own", seed, a.Name)
			}
		case a.Verb == "delete" && a.Kind == "ControllerRevision":
			r := revByName[a.Name]
			if r == nil || !owned(r, "ControllerRevision") {
				t.Fatalf("seed %d: deleted revision %s the set does not own", seed, a.Name)
			}
		case a.Verb == "delete":
			t.Fatalf("seed %d: unexpected delete of %s %s", seed, a.Kind, a.Name)
		}
	}
	if set.Spec.PodManagementPolicy != "Parallel" && created > 1 {
		t.Fatalf("seed %d: OrderedReady created %d pods in one sync", seed, created)
	}
}

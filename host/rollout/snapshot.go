package rollout

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// world is a snapshot decoded into the API types, pods in ordinal order, revisions oldest first.
type world struct {
	now       time.Time
	set       *appsv1.StatefulSet
	pods      []*corev1.Pod
	revisions []*appsv1.ControllerRevision
	features  map[string]bool // the snapshot's overrides of the gates' defaults
}

func decode(snapshot []byte) (*world, error) {
	var s struct {
		Now         string                       `json:"now"`
		StatefulSet *appsv1.StatefulSet          `json:"statefulSet"`
		Pods        []*corev1.Pod                `json:"pods"`
		Revisions   []*appsv1.ControllerRevision `json:"revisions"`
		Features    map[string]bool              `json:"features"`
	}
	if err := json.Unmarshal(snapshot, &s); err != nil {
		return nil, fmt.Errorf("decoding the snapshot: %w", err)
	}
	if s.StatefulSet == nil {
		return nil, fmt.Errorf("the snapshot has no statefulSet")
	}
	w := &world{set: s.StatefulSet, pods: s.Pods, revisions: s.Revisions, features: s.Features}
	if s.Now != "" {
		t, err := time.Parse(time.RFC3339Nano, s.Now)
		if err != nil {
			return nil, fmt.Errorf("the snapshot's now: %w", err)
		}
		w.now = t
	}
	sort.SliceStable(w.pods, func(i, j int) bool { return ordinal.Less(w.pods[i].Name, w.pods[j].Name) })
	sort.SliceStable(w.revisions, func(i, j int) bool { return w.revisions[i].Revision < w.revisions[j].Revision })
	return w, nil
}

// history is the set's own revisions, oldest first: those whose controller is the set (metav1.IsControlledBy:
// a controller ownerReference with the set's uid), the ones `kubectl rollout history` and `undo` count
// (k8s.io/kubectl polymorphichelpers.controlledHistoryV1). The snapshot also carries the orphans the
// selector matches, for the module to adopt; until it has, they are no part of the history, and a forged
// one is no revision to roll back to.
func (w *world) history() []*appsv1.ControllerRevision {
	var own []*appsv1.ControllerRevision
	for _, r := range w.revisions {
		if metav1.IsControlledBy(r, w.set) {
			own = append(own, r)
		}
	}
	return own
}

// labels names each revision by its number's letter (RevisionLetter), as every output names it: a name that
// stays the same while older revisions are pruned and from one watch frame to the next.
func (w *world) labels() map[string]string {
	var letters Letters
	l := map[string]string{}
	for _, r := range w.revisions {
		l[r.Name] = letters.Of(r.Name, r.Revision)
	}
	return l
}

// revisionData is the data of the set's revisions, as kube.OtherTagWait reads them.
func (w *world) revisionData() [][]byte {
	out := make([][]byte, len(w.revisions))
	for i, r := range w.revisions {
		out[i] = r.Data.Raw
	}
	return out
}

package rollout

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// world is a snapshot decoded into the API types, pods in ordinal order, revisions oldest first.
type world struct {
	now       time.Time
	set       *appsv1.StatefulSet
	pods      []*corev1.Pod
	revisions []*appsv1.ControllerRevision
}

func decode(snapshot []byte) (*world, error) {
	var s struct {
		Now         string                       `json:"now"`
		StatefulSet *appsv1.StatefulSet          `json:"statefulSet"`
		Pods        []*corev1.Pod                `json:"pods"`
		Revisions   []*appsv1.ControllerRevision `json:"revisions"`
	}
	if err := json.Unmarshal(snapshot, &s); err != nil {
		return nil, fmt.Errorf("decoding the snapshot: %w", err)
	}
	if s.StatefulSet == nil {
		return nil, fmt.Errorf("the snapshot has no statefulSet")
	}
	w := &world{set: s.StatefulSet, pods: s.Pods, revisions: s.Revisions}
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

// labels gives each revision a letter, oldest revision number first, as replay timelines do.
func (w *world) labels() map[string]string {
	l := map[string]string{}
	for i, r := range w.revisions {
		l[r.Name] = Letter(i)
	}
	return l
}

// Letter is the short name of the i-th revision (0-based, oldest first): A..Z, then A1..Z1, ...
func Letter(i int) string {
	l := string(rune('A' + i%26))
	if i >= 26 {
		l += fmt.Sprint(i / 26)
	}
	return l
}

package rollout

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// explain says what state the rollout is in and, when the next sync writes to no pod, why: which pod
// the controller waits for and by which of the set's rules (upstream's updateStatefulSet and
// processReplica: OrderedReady acts on one pod at a time and waits for it to be Running and Ready,
// terminating pods are waited for, minReadySeconds delays availability, maxUnavailable caps the pods
// being replaced, the partition holds lower ordinals back, OnDelete replaces nothing).
func explain(w *world, st *Status, labels map[string]string, update string) (string, []string) {
	if st.Next.Error != "" {
		return StateFailed, []string{"the module reports " + st.Next.Error}
	}
	var podWrites []string
	for _, wr := range st.Next.Writes {
		if (wr.Kind == abi.KindPod || wr.Kind == abi.KindPersistentVolumeClaim) && wr.Error == "" {
			podWrites = append(podWrites, wr.Verb+" "+wr.Name)
		}
	}
	var reasons []string
	if set := w.set; set.Status.ObservedGeneration < set.Generation {
		reasons = append(reasons, fmt.Sprintf("the set's status is of generation %d, the set is at %d: no controller has synced the latest edit yet (is one running for this set?)",
			set.Status.ObservedGeneration, set.Generation))
	}
	requeue := func() {
		if st.Next.RequeueAfterSeconds > 0 {
			d := hostplan.RequeueAfter(st.Next.RequeueAfterSeconds).Round(time.Second)
			reasons = append(reasons, fmt.Sprintf("the controller syncs again in %s (requeue)", max(d, time.Second)))
		}
	}
	if len(podWrites) > 0 {
		reasons = append(reasons, "the next sync will "+strings.Join(podWrites, ", "))
		requeue()
		return StateProgressing, reasons
	}
	set := w.set
	first, n := start(set), replicas(set)
	ordered := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	rolling := set.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
	desc := func(p Pod) string {
		if p.InPlace != nil {
			return fmt.Sprintf("%s (%s, %s, %s)", p.Name, p.Revision, p.State, p.InPlace)
		}
		return fmt.Sprintf("%s (%s, %s)", p.Name, p.Revision, p.State)
	}
	var terminating, notReady, notAvailable, old, oldAbove []string
	unavailable := 0
	present := map[int]bool{}
	for _, p := range st.Pods {
		present[p.Ordinal] = true
		in := int32(p.Ordinal) >= first && int32(p.Ordinal) < first+n
		switch {
		case p.Terminating:
			terminating = append(terminating, p.Name)
		case p.State != "Ready" && p.State != "Available":
			notReady = append(notReady, desc(p))
		case set.Spec.MinReadySeconds > 0 && p.State != "Available":
			notAvailable = append(notAvailable, p.Name)
		}
		if p.Terminating || (p.State != "Ready" && p.State != "Available") || (set.Spec.MinReadySeconds > 0 && p.State != "Available") {
			unavailable++
		}
		if in && !p.Terminating && (p.Revision == UnknownRevision || labels[update] != p.Revision) {
			old = append(old, fmt.Sprintf("%s (%s)", p.Name, p.Revision))
			if int32(p.Ordinal) >= first+partition(set) {
				oldAbove = append(oldAbove, p.Name)
			}
		}
	}
	var missing []string
	for o := first; o < first+n; o++ {
		if !present[int(o)] {
			missing = append(missing, ordinal.Name(set.Name, int64(o)))
		}
	}
	state := StateWaiting
	switch {
	case len(terminating) > 0:
		reasons = append(reasons, "waiting for "+list(terminating)+" to finish terminating (the kubelet's turn)")
	case len(notReady) > 0 && ordered:
		r := "OrderedReady: waiting for " + list(notReady) + " to be Running and Ready"
		if len(missing) > 0 {
			r += " before the controller creates " + missing[0]
		} else {
			r += "; until then no other pod is created, deleted or updated"
		}
		reasons = append(reasons, r)
	case len(notReady) > 0 && len(oldAbove) > 0 && rolling && unavailable >= maxUnavailable(set, w):
		// Parallel: the pods being replaced are the kubelet's, and maxUnavailable holds the rest back.
		reasons = append(reasons, fmt.Sprintf("maxUnavailable %d reached: %d pod%s unavailable (%s); %s wait%s for %s",
			maxUnavailable(set, w), unavailable, plural(unavailable), list(notReady), list(oldAbove), verbS(len(oldAbove)), pronoun(len(notReady))))
	case len(notReady) > 0:
		reasons = append(reasons, "waiting for "+list(notReady)+" to be Running and Ready (the kubelet's turn)")
	case len(notAvailable) > 0:
		reasons = append(reasons, fmt.Sprintf("waiting for %s to be Ready for minReadySeconds (%ds) before counting %s available",
			list(notAvailable), set.Spec.MinReadySeconds, pronoun(len(notAvailable))))
	case len(missing) > 0:
		reasons = append(reasons, "missing "+list(missing)+", yet the next sync creates nothing")
	case len(old) == 0:
		state = StateComplete
		if n == 0 {
			reasons = append(reasons, "0 replicas: no pods")
		} else {
			reasons = append(reasons, fmt.Sprintf("%d pod%s Ready at revision %s", n, plural(int(n)), labels[update]))
		}
	case set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
		reasons = append(reasons, "OnDelete: "+list(old)+map[bool]string{true: " keeps its", false: " keep their"}[len(old) == 1]+
			" revision until deleted; the controller replaces no pod")
	case len(oldAbove) == 0:
		state = StatePartitioned
		reasons = append(reasons, fmt.Sprintf("partition %d holds back %s; ordinals from %d are at revision %s",
			partition(set), list(old), first+partition(set), labels[update]))
	case unavailable >= maxUnavailable(set, w):
		reasons = append(reasons, fmt.Sprintf("maxUnavailable %d reached: %d pod%s unavailable; %s wait%s",
			maxUnavailable(set, w), unavailable, plural(unavailable), list(oldAbove), verbS(len(oldAbove))))
	default:
		reasons = append(reasons, list(oldAbove)+" still to be updated, yet the next sync deletes no pod")
	}
	requeue()
	return state, reasons
}

// list joins names, eliding the middle of long lists: a 1000-pod set's reasons stay one line.
func list(names []string) string {
	const max = 8
	if len(names) > max {
		return strings.Join(names[:max-2], ", ") + fmt.Sprintf(", ... (%d more), ", len(names)-max+1) + names[len(names)-1]
	}
	return strings.Join(names, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func verbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

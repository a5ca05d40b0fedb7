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
// being replaced, the partition holds lower ordinals back, OnDelete replaces nothing), and the extension
// in-place-update's InPlaceOnly hold (blocked: its condition's message).
func explain(w *world, st *Status, labels map[string]string, update, blocked, paused string) (string, []string) {
	if st.Next.Error != "" {
		return StateFailed, []string{"the module reports " + st.Next.Error}
	}
	var reasons []string
	if set := w.set; set.Status.ObservedGeneration < set.Generation {
		reasons = append(reasons, fmt.Sprintf("the set's status is of generation %d, the set is at %d: no controller has synced the latest edit yet (is one running for this set?)",
			set.Status.ObservedGeneration, set.Generation))
	}
	state := StateProgressing
	if writes := podWrites(st.Next); len(writes) > 0 {
		reasons = append(reasons, "the next sync will "+strings.Join(writes, ", "))
	} else {
		var why string
		state, why = waitingFor(w, groupPods(w.set, st.Pods, labels[update]), labels[update], blocked)
		switch {
		case paused == "" || state == StateComplete:
		case state == StatePartitioned && w.set.Annotations[PausedPartitionAnnotation] != "", strings.HasSuffix(why, stillToUpdate):
			why = "" // the partition is the pause's; the pods still to be updated are what it holds
			state = StateWaiting
		default:
			state = StateWaiting
		}
		if paused != "" && state != StateComplete {
			reasons = append(reasons, paused)
		}
		if why != "" {
			reasons = append(reasons, why)
		}
	}
	if state == StateComplete && rolledBack(st.Conditions) {
		reasons = append(reasons, rolledBackAdvice)
	}
	if st.Next.RequeueAfterSeconds > 0 {
		d := hostplan.RequeueAfter(st.Next.RequeueAfterSeconds).Round(time.Second)
		reasons = append(reasons, fmt.Sprintf("the controller syncs again in %s (requeue)", max(d, time.Second)))
	}
	return state, reasons
}

// pausedBy says what pauses the set's rollout, with the way to let it go on, or "": kubectl ordinal pause
// (the pause extension's annotation, when the module's plan says it holds pods back: its Paused event; on
// apps/v1, the partition it raised), or extension progress-deadline's on-progress-deadline Pause once the
// rollout to the update revision passed its deadline (the module's progressDeadlinePaused: its
// Progressing=False condition names that revision). Such a set's status said only that pods were "still to
// be updated, yet the next sync deletes no pod", or that a partition of 2147483647 held them.
func pausedBy(set *appsv1.StatefulSet, plan *abi.Plan, conds []appsv1.StatefulSetCondition, update string) string {
	ref := "statefulset/" + set.Name
	if set.APIVersion != "" && set.APIVersion != "apps/v1" {
		ref = "osts/" + set.Name
	}
	if plan != nil {
		for _, e := range plan.Events {
			if e.Reason == "Paused" {
				return fmt.Sprintf("paused (%s: \"true\"): no pod is created, deleted or updated until kubectl ordinal resume %s", abi.AnnotationPaused, ref)
			}
		}
	}
	if saved, ok := PausePartitionHolds(set.Annotations, int64(partition(set))); ok {
		return fmt.Sprintf("paused by kubectl ordinal pause: partition %d holds every pod back (the partition was %s); kubectl ordinal resume %s lets the rollout go on",
			pausedPartition, saved, ref)
	}
	if set.Annotations[abi.AnnotationOnProgressDeadline] == "Pause" && set.Annotations[abi.AnnotationProgressDeadlineSeconds] != "" && update != "" {
		for _, c := range conds {
			if abi.ProgressDeadlineExceeded(string(c.Type), string(c.Status), c.Reason) && strings.Contains(c.Message, "revision "+update+".") {
				return fmt.Sprintf("%s: Pause holds the rollout: it made no progress to revision %s for its deadline; no pod is created, deleted or updated "+
					"until the template changes (a fix, or kubectl ordinal undo %s) or the annotation is removed", abi.AnnotationOnProgressDeadline, update, ref)
			}
		}
	}
	return ""
}

// podWrites are the next sync's writes to pods and claims that it expects to succeed, as "verb name".
func podWrites(next Next) []string {
	var out []string
	for _, wr := range next.Writes {
		if (wr.Kind == abi.KindPod || wr.Kind == abi.KindPersistentVolumeClaim) && wr.Error == "" {
			out = append(out, wr.Verb+" "+wr.Name)
		}
	}
	return out
}

// podGroups are a set's pods by what a sync that writes to none of them may be waiting for.
type podGroups struct {
	terminating, notReady, notAvailable []string
	notReadyOld                         []string // of notReady, the names of those at another revision than the update revision
	old                                 []string // in the set's range, at another revision than the update revision
	oldAbove                            []string // of those, at or above the partition
	missing                             []string // ordinals in the range with no pod
	unavailable                         int
}

func groupPods(set *appsv1.StatefulSet, pods []Pod, update string) podGroups {
	var g podGroups
	first, n := start(set), replicas(set)
	present := map[int]bool{}
	for _, p := range pods {
		present[p.Ordinal] = true
		in := int32(p.Ordinal) >= first && int32(p.Ordinal) < first+n
		switch {
		case p.Terminating:
			g.terminating = append(g.terminating, p.Name)
		case p.State != "Ready" && p.State != "Available":
			g.notReady = append(g.notReady, describeWaiting(p))
			if in && (p.Revision == UnknownRevision || update != p.Revision) {
				g.notReadyOld = append(g.notReadyOld, p.Name)
			}
		case set.Spec.MinReadySeconds > 0 && p.State != "Available":
			g.notAvailable = append(g.notAvailable, p.Name)
		}
		if p.Terminating || (p.State != "Ready" && p.State != "Available") || (set.Spec.MinReadySeconds > 0 && p.State != "Available") {
			g.unavailable++
		}
		if in && !p.Terminating && (p.Revision == UnknownRevision || update != p.Revision) {
			g.old = append(g.old, fmt.Sprintf("%s (%s)", p.Name, p.Revision))
			if int32(p.Ordinal) >= first+partition(set) {
				g.oldAbove = append(g.oldAbove, p.Name)
			}
		}
	}
	for o := first; o < first+n; o++ {
		if !present[int(o)] {
			g.missing = append(g.missing, ordinal.Name(set.Name, int64(o)))
		}
	}
	return g
}

// describeWaiting names a pod not Ready with its revision and state (and an in-place update under way).
func describeWaiting(p Pod) string {
	state := p.State
	if p.Reason != "" {
		state += ": " + p.Reason
	}
	if p.InPlace != nil {
		return fmt.Sprintf("%s (%s, %s, %s)", p.Name, p.Revision, state, p.InPlace)
	}
	return fmt.Sprintf("%s (%s, %s)", p.Name, p.Revision, state)
}

// waitingFor is the state of a rollout whose next sync writes to no pod, and the rule it waits by (blocked:
// the InPlaceOnly hold's message, if any).
func waitingFor(w *world, g podGroups, update, blocked string) (string, string) {
	set := w.set
	first, n := start(set), replicas(set)
	ordered := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	rolling := set.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
	switch {
	case len(g.terminating) > 0:
		return StateWaiting, "waiting for " + list(g.terminating) + " to finish terminating (the kubelet's turn)"
	case len(g.notReady) > 0 && ordered:
		r := "OrderedReady: waiting for " + list(g.notReady) + " to be Running and Ready"
		if len(g.missing) > 0 {
			r += " before the controller creates " + g.missing[0]
		} else {
			r += "; until then no other pod is created, deleted or updated"
		}
		if len(g.notReadyOld) > 0 && rolling {
			r += forcedRollback(set, g.notReadyOld, update)
		}
		return StateWaiting, r
	case len(g.notReady) > 0 && len(g.oldAbove) > 0 && rolling && g.unavailable >= maxUnavailable(set, w):
		// Parallel: the pods being replaced are the kubelet's, and maxUnavailable holds the rest back.
		return StateWaiting, fmt.Sprintf("maxUnavailable %d reached: %d pod%s unavailable (%s); %s wait%s for %s",
			maxUnavailable(set, w), g.unavailable, plural(g.unavailable), list(g.notReady), list(g.oldAbove), verbS(len(g.oldAbove)), pronoun(len(g.notReady)))
	case len(g.notReady) > 0:
		return StateWaiting, "waiting for " + list(g.notReady) + " to be Running and Ready (the kubelet's turn)"
	case len(g.notAvailable) > 0:
		return StateWaiting, fmt.Sprintf("waiting for %s to be Ready for minReadySeconds (%ds) before counting %s available",
			list(g.notAvailable), set.Spec.MinReadySeconds, pronoun(len(g.notAvailable)))
	case len(g.missing) > 0:
		return StateWaiting, "missing " + list(g.missing) + ", yet the next sync creates nothing"
	case len(g.old) == 0:
		if n == 0 {
			return StateComplete, "0 replicas: no pods"
		}
		return StateComplete, fmt.Sprintf("%d pod%s Ready at revision %s", n, plural(int(n)), update)
	case !rolling:
		return StateWaiting, "OnDelete: " + list(g.old) + map[bool]string{true: " keeps its", false: " keep their"}[len(g.old) == 1] +
			" revision until deleted; the controller replaces no pod"
	case len(g.oldAbove) == 0:
		return StatePartitioned, fmt.Sprintf("partition %d holds back %s; ordinals from %d are at revision %s",
			partition(set), list(g.old), first+partition(set), update)
	case blocked != "":
		// The extension in-place-update's hold (InPlaceOnly): nothing but an edit or a delete moves it on.
		return StateWaiting, fmt.Sprintf("%s To go on: change the template back to what pods can take in place, "+
			"set %s: %s (such pods are recreated), or delete the held pod (recreated at the update revision)",
			strings.TrimSpace(blocked), abi.AnnotationPodUpdatePolicy, abi.PodUpdateInPlaceIfPossible)
	case g.unavailable >= maxUnavailable(set, w):
		return StateWaiting, fmt.Sprintf("maxUnavailable %d reached: %d pod%s unavailable; %s wait%s",
			maxUnavailable(set, w), g.unavailable, plural(g.unavailable), list(g.oldAbove), verbS(len(g.oldAbove)))
	}
	return StateWaiting, list(g.oldAbove) + stillToUpdate
}

// forcedRollback says the way out of upstream's forced-rollback trap (kubernetes/kubernetes#67250) for an
// OrderedReady set waiting on pods not Ready at a revision the rollout left (a broken release reverted, or
// rolled forward): the controller replaces such a pod only once it is Ready, so one that cannot become Ready
// holds the set for good, whatever the template says, unless it is deleted or recover-stuck deletes it.
func forcedRollback(set *appsv1.StatefulSet, pods []string, update string) string {
	s := fmt.Sprintf(". %s %s at a revision other than the update revision %s: the controller replaces %s only once %s Ready, "+
		"so if %s cannot become Ready (an image that cannot be pulled, a crash), the rollout stays here whatever the template says (the forced-rollback trap)",
		list(pods), map[bool]string{true: "is", false: "are"}[len(pods) == 1], update, pronoun(len(pods)),
		map[bool]string{true: "it is", false: "they are"}[len(pods) == 1], pronoun(len(pods)))
	if after := set.Annotations[abi.AnnotationRecoverStuckAfter]; after != "" {
		return s + fmt.Sprintf("; %s: %s deletes such a pod once it has not been Ready that long (on the extended module), and it is recreated at %s", abi.AnnotationRecoverStuckAfter, after, update)
	}
	return s + fmt.Sprintf("; to get out: kubectl delete pod %s -n %s, and the controller recreates %s at %s", strings.Join(pods, " "), set.Namespace, pronoun(len(pods)), update)
}

// stillToUpdate ends the reason of a rollout whose next sync writes nothing and no rule of the set's explains it.
const stillToUpdate = " still to be updated, yet the next sync deletes no pod"

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

// rolledBackAdvice is what a rollout complete after on-progress-deadline: Rollback says: the set is whole
// again, but its template is the one it was rolled back to, not the one it was last given, and wherever that
// came from still holds the edit that failed (docs/extensions.md, "Rollback under GitOps").
const rolledBackAdvice = "complete at the revision the set was rolled back to (condition RolledBack): a GitOps tool or pipeline " +
	"that applies the set from its source applies the template that failed again, and the set rolls back again after the deadline; " +
	"revert the change there"

// rolledBack: extension progress-deadline rolled the set back (its RolledBack condition is True).
func rolledBack(conds []Condition) bool {
	for _, c := range conds {
		if c.Type == abi.ConditionRolledBack && c.Status == "True" {
			return true
		}
	}
	return false
}

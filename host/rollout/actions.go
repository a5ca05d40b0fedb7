package rollout

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// kubectl rollout's verbs for a StatefulSet, as patches of the live set: restart and undo as kubectl does
// them, pause and resume (which kubectl refuses for StatefulSets) by the pause extension on an ordinal.dev
// set or by the partition on apps/v1. Each patch carries the set's resourceVersion, so an edit made
// between reading the set and patching it makes the API server refuse the patch (409) instead of being
// overwritten.

// RestartedAtAnnotation is the pod-template annotation `kubectl rollout restart` sets: a new template, so
// a new revision and every pod replaced as the update strategy says.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// PausedPartitionAnnotation keeps an apps/v1 set's partition while `kubectl ordinal pause` holds it at the
// largest partition (no pod updated); resume puts it back.
const PausedPartitionAnnotation = "ordinal.dev/paused-partition"

// pausedPartition is the partition a paused apps/v1 set has: above any ordinal, so no pod is updated
// however the set is scaled.
const pausedPartition = math.MaxInt32

// PausePartitionHolds reports whether an apps/v1 set with these annotations and partition is held by kubectl
// ordinal pause's partition (pausedPartition, with the partition it replaced saved in PausedPartitionAnnotation),
// and returns that saved partition: the one reading of it for status, previews and replays.
func PausePartitionHolds(annotations map[string]string, partition int64) (saved string, ok bool) {
	saved, ok = annotations[PausedPartitionAnnotation]
	return saved, ok && partition == pausedPartition
}

// Patch is a JSON merge patch (RFC 7386) or a JSON patch (RFC 6902) of a set, and what it does in words.
type Patch struct {
	JSONPatch bool   // Data is a JSON patch; else a merge patch
	Data      []byte // the patch
	Done      string // what kubectl would print after the verb's name: "restarted", "rolled back", ...
	Note      string // something the user should know (the pause needs the extension), or ""
}

// merge is a merge patch that also sets metadata.resourceVersion: the API server applies it only to that
// version of the set.
func merge(set *appsv1.StatefulSet, m map[string]any) []byte {
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	md["resourceVersion"] = set.ResourceVersion
	b, _ := json.Marshal(m)
	return b
}

// Restart is `kubectl rollout restart`: the restartedAt annotation of the pod template set to now.
func Restart(set *appsv1.StatefulSet, now time.Time) Patch {
	p := Patch{Done: "restarted", Data: merge(set, map[string]any{"spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{RestartedAtAnnotation: now.Format(time.RFC3339)}}}}})}
	if paused(set) {
		p.Note = "the set is paused: the restart rolls out once it is resumed (kubectl ordinal resume)"
	}
	return p
}

// paused reports whether pause holds the set: the partition it saved, or the pause extension's annotation
// with any value but "false" or "" (the extension holds pod writes on an invalid value too; an empty one is
// no annotation, abi.EnumAnnotation).
func paused(set *appsv1.StatefulSet) bool {
	_, byPartition := set.Annotations[PausedPartitionAnnotation]
	v, byAnnotation := abi.EnumAnnotation(set.Annotations, abi.AnnotationPaused)
	return byPartition || byAnnotation && v != "false"
}

// Pause holds the set's rollout: on an ordinal.dev set (custom) the pause extension's annotation, on an
// apps/v1 set the partition raised above every ordinal, the partition it had kept in an annotation.
func Pause(set *appsv1.StatefulSet, resource string, custom bool) (Patch, error) {
	if custom {
		if set.Annotations[abi.AnnotationPaused] == "true" {
			return Patch{}, fmt.Errorf("%s %q is already paused", resource, set.Name)
		}
		p := Patch{Done: "paused", Data: merge(set, map[string]any{"metadata": map[string]any{"annotations": map[string]any{abi.AnnotationPaused: "true"}}})}
		if set.Annotations[abi.AnnotationModule] != "extended" {
			p.Note = fmt.Sprintf("the pause is the extended module's: it holds the set where the controller runs that module for it (%s: extended, or a controller whose active module is the extended one)", abi.AnnotationModule)
		}
		return p, nil
	}
	if _, paused := set.Annotations[PausedPartitionAnnotation]; paused {
		return Patch{}, fmt.Errorf("%s %q is already paused", resource, set.Name)
	}
	if set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return Patch{}, fmt.Errorf("%s %q has updateStrategy OnDelete: the controller updates no pod by itself, so there is no rollout to pause", resource, set.Name)
	}
	partition := int32(0)
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		partition = *ru.Partition
	}
	return Patch{Done: "paused", Data: merge(set, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{PausedPartitionAnnotation: strconv.Itoa(int(partition))}},
		"spec":     map[string]any{"updateStrategy": map[string]any{"rollingUpdate": map[string]any{"partition": pausedPartition}}},
	})}, nil
}

// Resume undoes Pause: the annotation removed, an apps/v1 set's partition put back (unless someone set
// another partition while it was paused: theirs is kept).
func Resume(set *appsv1.StatefulSet, resource string, custom bool) (Patch, error) {
	if custom {
		if v, ok := abi.EnumAnnotation(set.Annotations, abi.AnnotationPaused); !ok || v == "false" {
			return Patch{}, fmt.Errorf("%s %q is not paused", resource, set.Name)
		}
		return Patch{Done: "resumed", Data: merge(set, map[string]any{"metadata": map[string]any{"annotations": map[string]any{abi.AnnotationPaused: nil}}})}, nil
	}
	saved, ok := set.Annotations[PausedPartitionAnnotation]
	if !ok {
		return Patch{}, fmt.Errorf("%s %q is not paused (no %s annotation)", resource, set.Name, PausedPartitionAnnotation)
	}
	m := map[string]any{"metadata": map[string]any{"annotations": map[string]any{PausedPartitionAnnotation: nil}}}
	p := Patch{Done: "resumed"}
	ru := set.Spec.UpdateStrategy.RollingUpdate
	switch n, err := strconv.ParseInt(saved, 10, 32); {
	case err != nil || n < 0 || strconv.Itoa(int(n)) != saved:
		return Patch{}, fmt.Errorf("%s %q: annotation %s=%q is not a partition pause saved: set spec.updateStrategy.rollingUpdate.partition yourself and remove the annotation (kubectl annotate statefulset %s %s-)",
			resource, set.Name, PausedPartitionAnnotation, saved, set.Name, PausedPartitionAnnotation)
	case set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
		p.Note = "the update strategy was changed to OnDelete while the set was paused: kept (no partition to restore)"
	case ru == nil || ru.Partition == nil || *ru.Partition != pausedPartition:
		p.Note = "the partition was changed while the set was paused: that partition is kept"
	default:
		m["spec"] = map[string]any{"updateStrategy": map[string]any{"rollingUpdate": map[string]any{"partition": n}}}
	}
	p.Data = merge(set, m)
	return p, nil
}

// Undo is `kubectl rollout undo [--to-revision N]`: the set's pod template replaced by the one revision N
// of the set's history recorded (0: the revision before the newest, as kubectl picks it); Done says "skipped rollback" when the
// template is that revision's already.
func Undo(snapshot []byte, resource string, toRevision int64) (Patch, error) {
	w, err := decode(snapshot)
	if err != nil {
		return Patch{}, err
	}
	var to *appsv1.ControllerRevision
	history := w.history()
	switch {
	case toRevision < 0:
		return Patch{}, fmt.Errorf("--to-revision must be 0 (the previous revision) or a revision number, got %d", toRevision)
	case toRevision == 0 && len(history) <= 1:
		return Patch{}, fmt.Errorf("no last revision to roll back to")
	case toRevision == 0:
		to = history[len(history)-2] // sorted by number
	default:
		for _, r := range history {
			if r.Revision == toRevision {
				to = r
			}
		}
		if to == nil {
			return Patch{}, fmt.Errorf("unable to find specified revision %d in history", toRevision)
		}
	}
	tmpl, err := template(to)
	if err != nil {
		return Patch{}, err
	}
	current := map[string]any{}
	if b, err := json.Marshal(w.set.Spec.Template); err == nil {
		_ = json.Unmarshal(b, &current)
	}
	if len(Diff(current, tmpl)) == 0 {
		return Patch{Done: fmt.Sprintf("skipped rollback (current template already matches revision %d)", to.Revision)}, nil
	}
	data, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": w.set.ResourceVersion},
		{"op": "replace", "path": "/spec/template", "value": tmpl},
	})
	if err != nil {
		return Patch{}, err
	}
	return Patch{JSONPatch: true, Data: data, Done: "rolled back", Note: undoNote(w, to)}, nil
}

// undoNote is what a user rolling back should know: a paused set rolls back only once resumed; and under
// OrderedReady a pod not Ready at a revision other than the one rolled back to holds the rollback (the
// controller waits for it, and replaces it only once it is Ready: upstream's forced-rollback trap), so a
// broken release's pod has to be deleted unless recover-stuck replaces it.
func undoNote(w *world, to *appsv1.ControllerRevision) string {
	var notes []string
	if paused(w.set) {
		notes = append(notes, "the set is paused: the rollback rolls out once it is resumed (kubectl ordinal resume)")
	}
	if n := heldByNotReady(w, to.Name, fmt.Sprintf("not at revision %d", to.Revision), "rolls back"); n != "" {
		notes = append(notes, n)
	}
	return strings.Join(notes, "; ")
}

// heldByNotReady says, for an OrderedReady RollingUpdate set, which pods not Ready at a revision other than
// target ("": a new revision) hold the template change a verb makes, and the way out: the controller waits
// for them before it acts ("rolls back", "restarts") on any other pod, and replaces them only once Ready.
func heldByNotReady(w *world, target, where, acts string) string {
	set := w.set
	if set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement || set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return ""
	}
	var stuck []string
	first, n := start(set), replicas(set)
	for _, p := range w.pods {
		o, ok := ordinal.Ordinal(p.Name)
		if ok && int32(o) >= first && int32(o) < first+n && p.DeletionTimestamp == nil &&
			(target == "" || p.Labels[appsv1.ControllerRevisionHashLabelKey] != target) && (!kube.PodRunningAndReady(p) || inPlacePending(set, p)) {
			stuck = append(stuck, p.Name)
		}
	}
	if len(stuck) == 0 {
		return ""
	}
	note := fmt.Sprintf("%s not Ready and %s: under OrderedReady the controller waits for %s before it %s any other pod, "+
		"and replaces %s only once Ready (the forced-rollback trap)", list(stuck), where, pronoun(len(stuck)), acts, pronoun(len(stuck)))
	if after := set.Annotations[abi.AnnotationRecoverStuckAfter]; after != "" {
		return note + fmt.Sprintf("; %s: %s deletes such a pod once it has not been Ready that long (on the extended module)", abi.AnnotationRecoverStuckAfter, after)
	}
	return note + fmt.Sprintf("; if it cannot become Ready, delete it: kubectl delete pod %s -n %s", strings.Join(stuck, " "), set.Namespace)
}

// inPlacePending: the set updates pods in place (extension in-place-update) and p, updated so, does not run its
// update yet: the module reads it as not Ready, whatever its Ready condition says (kube.InPlace).
func inPlacePending(set *appsv1.StatefulSet, p *corev1.Pod) bool {
	if _, ok := set.Annotations[abi.AnnotationPodUpdatePolicy]; !ok {
		return false
	}
	v, ok := kube.InPlace(p)
	return ok && v.Pending
}

// RestartOf is Restart of the snapshot's set, with a note when a pod not Ready holds the restart (OrderedReady:
// heldByNotReady), as a restart meant to get a stuck rollout going does not replace the pod that stalls it.
func RestartOf(snapshot []byte, now time.Time) (Patch, error) {
	w, err := decode(snapshot)
	if err != nil {
		return Patch{}, err
	}
	p := Restart(w.set, now)
	if n := heldByNotReady(w, "", "not at the restart's new revision", "restarts"); n != "" {
		if p.Note != "" {
			p.Note += "; "
		}
		p.Note += n
	}
	return p, nil
}

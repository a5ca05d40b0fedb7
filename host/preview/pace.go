package preview

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/internal/inplaceready"
)

// learnPace sets the delays model's pace from the set's own pods, as they came up: the typical time from a
// pod's creation to its first container running (its kubelet start) and from there to its Ready condition
// turning True. A live set's pods are what its next pods will be like (their image pulls, their readiness
// probes), where the defaults (2 s and 3 s) are anyone's. Pods without both times (not Ready, not started,
// a Ready condition older than their start) do not count; with none, the model keeps its delays. How long a
// pod takes to go no live pod shows; the set's events do (terminationPace), else it stays the model's. How
// long an in-place update keeps a pod's containers down its pods updated in place show (restartPace), else
// it is the start delay.
func learnPace(kc *replay.KubeletConfig, pods []*corev1.Pod, events []corev1.Event) {
	if kc.Model == replay.ModelTick || kc.StartDelay != nil || kc.ReadyDelay != nil || kc.TerminationDelay != nil || kc.RestartDelay != nil {
		return // the harness's model, or delays someone chose
	}
	var starts, readies []time.Duration
	for _, p := range pods {
		start, ready, hasStart, ok := podPace(p)
		if hasStart {
			starts = append(starts, start)
		}
		if ok {
			readies = append(readies, ready)
		}
	}
	terms := terminationPace(pods, events)
	restarts := restartPace(pods)
	learned := replay.LearnedPace{StartPods: len(starts), ReadyPods: len(readies), Replacements: len(terms), InPlaceUpdates: len(restarts)}
	if !learned.Any() {
		return
	}
	kc.StartDelay = typicalOf(starts)
	kc.ReadyDelay = typicalOf(readies)
	kc.TerminationDelay = typicalOf(terms)
	kc.RestartDelay = typicalOf(restarts)
	kc.Learned = &learned // the pace says what from (replay.Pace)
}

// LearnPaceFromSnapshot is learnPace for a preview from a recorded world (`ordinal preview --from`): the pods
// of a live set's snapshot show how its pods came up as the live set's pods do, so a CI job's preview of an edit
// takes as long as `kubectl ordinal preview` of the same edit says (how long a pod takes to go needs the set's
// events, which a snapshot does not carry: it stays the model's). Only the set's own pods count, as they
// would live; a snapshot that is not one (no set, a bad selector) teaches nothing.
func LearnPaceFromSnapshot(kc *replay.KubeletConfig, snap []byte) {
	var s struct {
		StatefulSet *appsv1.StatefulSet `json:"statefulSet"`
		Pods        []*corev1.Pod       `json:"pods"`
	}
	if json.Unmarshal(snap, &s) != nil || s.StatefulSet == nil {
		return
	}
	sel, err := snapshot.NewSelection(s.StatefulSet)
	if err != nil {
		return
	}
	var own []*corev1.Pod
	for _, p := range s.Pods {
		if p != nil && sel.Pod(&p.ObjectMeta) {
			own = append(own, p)
		}
	}
	learnPace(kc, own, nil)
}

// typicalOf is the typical of ds (nil for none: the delay stays the model's).
func typicalOf(ds []time.Duration) *replay.Duration {
	if len(ds) == 0 {
		return nil
	}
	d := replay.Duration(typical(ds))
	return &d
}

// terminationPace is how long the set's pods took to go, from its events: a pod the controller deleted
// (SuccessfulDelete, upstream's "Delete Pod NAME in StatefulSet SET successful", kube-controller-manager's and
// Ordinal's alike) and created again (the live pod of that name, created after the delete) was gone that long
// before its successor came, the controller acting at once on a pod gone. A gap longer than the pod's grace
// period (plus a kubelet's slack) is not a replacement (a scale down, and a scale up later) and does not count.
// Events are kept an hour by default and at a second's precision: the pace of the set's last rollouts.
func terminationPace(pods []*corev1.Pod, events []corev1.Event) []time.Duration {
	deleted := map[string]time.Time{} // pod name -> the last time the controller deleted it
	for i := range events {
		e := &events[i]
		if e.Reason != "SuccessfulDelete" {
			continue
		}
		w := strings.Fields(strings.TrimPrefix(e.Message, "(combined from similar events): "))
		if len(w) != 7 || !strings.EqualFold(w[0], "delete") || w[1] != "Pod" || w[3] != "in" || w[6] != "successful" {
			continue
		}
		if at := kube.EventTime(e); at.After(deleted[w[2]]) {
			deleted[w[2]] = at
		}
	}
	var out []time.Duration
	for _, p := range pods {
		del, ok := deleted[p.Name]
		created := p.CreationTimestamp.Time
		if !ok || p.CreationTimestamp.IsZero() || created.Before(del) {
			continue
		}
		grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
		if g := p.Spec.TerminationGracePeriodSeconds; g != nil {
			grace = *g
		}
		if gap := created.Sub(del); gap <= time.Duration(grace)*time.Second+terminationSlack {
			out = append(out, gap)
		}
	}
	return out
}

// restartPace is how long the set's pods updated in place (the in-place record naming their revision) had
// their containers down: for each pod, the longest of its restarted containers' gaps from the old
// container's end (lastState.terminated.finishedAt) to the new one running (state.running.startedAt) — the
// image pulled and started, as the model's restart delay is. The old container's stop after the update is
// not in the pod's status and counts as instant; a container restarted for another reason since (its last
// end not the update's) reads as a restart too, which the interquartile mean leaves out when it is rare.
func restartPace(pods []*corev1.Pod) []time.Duration {
	var out []time.Duration
	for _, p := range pods {
		rev := p.Labels[appsv1.ControllerRevisionHashLabelKey]
		if p.DeletionTimestamp != nil || !inplaceready.Applies(rev, p.Annotations[abi.AnnotationInPlaceUpdate]) {
			continue
		}
		var down time.Duration
		seen := false
		for _, c := range p.Status.ContainerStatuses {
			run, end := c.State.Running, c.LastTerminationState.Terminated
			if c.RestartCount == 0 || run == nil || end == nil || run.StartedAt.IsZero() || end.FinishedAt.IsZero() || run.StartedAt.Before(&end.FinishedAt) {
				continue
			}
			down, seen = max(down, run.StartedAt.Sub(end.FinishedAt.Time)), true
		}
		if seen {
			out = append(out, down)
		}
	}
	return out
}

// SetEvents lists the events of set (by its uid), from which the delays model learns how long the set's pods
// take to go. Nil for a set not yet created, and when they cannot be read (no permission to list events, say):
// the termination delay then stays the model's, and the preview's pace says so.
func SetEvents(ctx context.Context, c kubernetes.Interface, set *appsv1.StatefulSet) []corev1.Event {
	if set == nil || set.UID == "" || c == nil {
		return nil
	}
	sel := fields.OneTermEqualSelector("involvedObject.uid", string(set.UID)).String()
	l, err := c.CoreV1().Events(set.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil
	}
	return l.Items
}

// terminationSlack is how much past its grace period a pod may take to go and still count as replaced: the
// kubelet's kill and report, the controller's next sync.
const terminationSlack = 5 * time.Second

// podPace is how long p took from creation to running (hasStart) and from running to Ready (ok false: it does
// not say). A pod whose containers restarted (in place, or after a crash) no longer shows its first start:
// its running containers started at the restart, and only their time to Ready counts.
func podPace(p *corev1.Pod) (start, ready time.Duration, hasStart, ok bool) {
	if p.DeletionTimestamp != nil || p.CreationTimestamp.IsZero() {
		return 0, 0, false, false
	}
	var running time.Time
	restarted := false
	for _, c := range p.Status.ContainerStatuses {
		if r := c.State.Running; r != nil && (running.IsZero() || r.StartedAt.Time.Before(running)) {
			running = r.StartedAt.Time
		}
		restarted = restarted || c.RestartCount > 0
	}
	if running.IsZero() && p.Status.StartTime != nil {
		running = p.Status.StartTime.Time
	}
	var readyAt time.Time
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status == corev1.ConditionTrue {
				readyAt = c.LastTransitionTime.Time
			}
			break
		}
	}
	created := p.CreationTimestamp.Time
	if running.IsZero() || readyAt.IsZero() || running.Before(created) || readyAt.Before(running) {
		return 0, 0, false, false
	}
	return running.Sub(created), readyAt.Sub(running), !restarted, true
}

// typical is the interquartile mean of ds: the mean of its middle half (all of it below four). The times it
// is learned from are whole seconds (creation, container start, conditions, events): each difference is the
// true one rounded up or down by the fractions cut off, which a mean evens out and a median keeps (of 1.2 s
// delays, most differences read 1 s); the extremes left out are a pod that hung once, or a restart.
func typical(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	q := len(s) / 4
	var sum time.Duration
	for _, d := range s[q : len(s)-q] {
		sum += d
	}
	return sum / time.Duration(len(s)-2*q)
}

package preview

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/host/replay"
)

// learnPace sets the delays model's pace from the set's own pods, as they came up: the median time from a
// pod's creation to its first container running (its kubelet start) and from there to its Ready condition
// turning True. A live set's pods are what its next pods will be like (their image pulls, their readiness
// probes), where the defaults (2 s and 3 s) are anyone's. Pods without both times (not Ready, not started,
// a Ready condition older than their start) do not count; with none, the model keeps its delays. How long a
// pod takes to go is not shown by live pods: the termination delay stays the model's (at most the pod's
// grace period).
func learnPace(kc *replay.KubeletConfig, pods []*corev1.Pod) {
	if kc.Model == replay.ModelTick || kc.StartDelay != nil || kc.ReadyDelay != nil {
		return // the harness's model, or delays someone chose
	}
	var starts, readies []time.Duration
	for _, p := range pods {
		start, ready, ok := podPace(p)
		if ok {
			starts, readies = append(starts, start), append(readies, ready)
		}
	}
	if len(starts) == 0 {
		return
	}
	start, ready := replay.Duration(median(starts)), replay.Duration(median(readies))
	kc.StartDelay, kc.ReadyDelay = &start, &ready
	kc.Source = fmt.Sprintf("learned from %d of the set's pods: the median of each one's creation to its first container running, and of that to Ready; "+
		"the termination delay is the model's", len(starts))
}

// podPace is how long p took from creation to running and from running to Ready (ok false: it does not say).
func podPace(p *corev1.Pod) (start, ready time.Duration, ok bool) {
	if p.DeletionTimestamp != nil || p.CreationTimestamp.IsZero() {
		return 0, 0, false
	}
	var running time.Time
	for _, c := range p.Status.ContainerStatuses {
		if r := c.State.Running; r != nil && (running.IsZero() || r.StartedAt.Time.Before(running)) {
			running = r.StartedAt.Time
		}
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
		return 0, 0, false
	}
	return running.Sub(created), readyAt.Sub(running), true
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EventTime is when an Event last happened, whichever API wrote it: its series' last observation (events.k8s.io),
// its last timestamp (core/v1 recorders) or its time.
func EventTime(e *corev1.Event) time.Time {
	t := e.LastTimestamp.Time
	if e.EventTime.After(t) {
		t = e.EventTime.Time
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}

package statefulset

import "time"

// isCreated: the API server has the pod (it has a phase).
func (p *pod) isCreated() bool { return p.Phase != "" }

func (p *pod) isPending() bool { return p.Phase == phasePending }

// isTerminal: Failed or Succeeded pods are replaced.
func (p *pod) isTerminal() bool { return p.Phase == phaseFailed || p.Phase == phaseSucceeded }

// isTerminating: the pod has a deletionTimestamp.
func (p *pod) isTerminating() bool { return p.Meta.Deleting }

func (p *pod) isRunningAndReady() bool { return p.Phase == phaseRunning && p.Ready }

// isAvailable is podutil.IsPodAvailable: Ready for at least minReadySeconds at now.
func (p *pod) isAvailable(minReadySeconds int32, now time.Time) bool {
	if !p.Ready {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	if p.ReadySince.IsZero() {
		return false
	}
	return !p.ReadySince.Add(time.Duration(minReadySeconds) * time.Second).After(now)
}

// isRunningAndAvailable is upstream's helper of that name (which, like IsPodAvailable, does not
// look at the phase).
func (p *pod) isRunningAndAvailable(minReadySeconds int32, now time.Time) bool {
	return p.isAvailable(minReadySeconds, now)
}

// isUnavailable: not available, or terminating.
func (p *pod) isUnavailable(minReadySeconds int32, now time.Time) bool {
	return !p.isAvailable(minReadySeconds, now) || p.isTerminating()
}

// revisionLabel is the pod's controller-revision-hash label, read once when the pod is decoded or built (no
// sync changes it: identity repairs set only the pod-name and pod-index labels).
func (p *pod) revisionLabel() string { return p.rev }

// nextAvailabilityCheck is how long until a ready pod becomes available (nil if not pending).
func (p *pod) nextAvailabilityCheck(minReadySeconds int32, now time.Time) *time.Duration {
	if !p.Ready || minReadySeconds <= 0 || p.ReadySince.IsZero() {
		return nil
	}
	d := p.ReadySince.Add(time.Duration(minReadySeconds) * time.Second).Sub(now)
	if d > 0 {
		return &d
	}
	return nil
}

// requeueAfter mirrors syncStatefulSet's AddAfter: when minReadySeconds > 0 and some ready pods
// are not yet available, requeue at the earliest availability (or after minReadySeconds).
func requeueAfter(minReadySeconds int32, ready, available int32, pods []*pod, now time.Time) float64 {
	if minReadySeconds <= 0 || ready == available {
		return 0
	}
	next := time.Duration(minReadySeconds) * time.Second
	var min *time.Duration
	for _, p := range pods {
		if d := p.nextAvailabilityCheck(minReadySeconds, now); d != nil && (min == nil || *d < *min) {
			min = d
		}
	}
	if min != nil {
		next = *min
	}
	return next.Seconds()
}

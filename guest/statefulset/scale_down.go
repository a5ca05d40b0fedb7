package statefulset

// processCondemned deletes one condemned pod (descending ordinals). Monotonic mode waits for
// terminating pods and for the target to be Running, Ready and available unless it is the
// first unavailable pod; it deletes one pod per pass.
func (s *syncer) processCondemned(firstUnavailable *pod, monotonic bool, condemned []*pod, i int) (bool, error) {
	p := condemned[i]
	if p.isTerminating() {
		return monotonic, nil
	}
	if monotonic && p != firstUnavailable {
		if !p.isRunningAndReady() || !p.isRunningAndAvailable(s.set.MinReadySeconds, s.now) {
			return true, nil
		}
	}
	return true, s.deletePod(p)
}

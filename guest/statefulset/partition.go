package statefulset

// useCurrentRevisionForNewPod is newVersionedStatefulSetPod's choice: a new pod gets the
// current revision when below the partition (or, for RollingUpdate without rollingUpdate,
// below start+status.currentReplicas); otherwise the update revision. As upstream's operator
// precedence has it, the partition clause applies whatever the strategy type.
func (s *syncer) useCurrentRevisionForNewPod(ordinal int) bool {
	set := s.set
	start := set.startOrdinal()
	return (set.StrategyType == strategyRolling && !set.HasRollingUpdate && ordinal < start+int(set.Status.CurrentReplicas)) ||
		(set.HasRollingUpdate && ordinal < start+int(set.Partition))
}

// rollingUpdateClassic is the RollingUpdate pass without MaxUnavailableStatefulSet: from the
// highest index down to the partition, delete the first old-revision pod that is not
// terminating, or wait on the first unavailable one.
func (s *syncer) rollingUpdateClassic(replicas []*pod, update *revision, status *setStatus) (*setStatus, error) {
	updateMin := 0
	if s.set.HasRollingUpdate {
		updateMin = int(s.set.Partition)
	}
	for target := len(replicas) - 1; target >= updateMin; target-- {
		p := replicas[target]
		if p.revisionLabel() != update.Meta.Name && !p.isTerminating() {
			if err := s.deletePod(p); err != nil {
				return status, err
			}
			status.CurrentReplicas--
			return status, nil
		}
		if p.isUnavailable(s.set.MinReadySeconds, s.now) {
			return status, nil
		}
	}
	return status, nil
}

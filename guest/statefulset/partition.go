package statefulset

// useCurrentRevisionForNewPod is newVersionedStatefulSetPod's choice: a new pod gets the
// current revision when below the partition (or, for RollingUpdate without rollingUpdate,
// below start+status.currentReplicas); otherwise the update revision. As upstream's operator
// precedence has it, the partition clause applies whatever the strategy type.
func (s *syncer) useCurrentRevisionForNewPod(ordinal int64) bool {
	set := s.set
	start := set.startOrdinal()
	return (set.StrategyType == strategyRolling && !set.HasRollingUpdate && ordinal < start+int64(set.Status.CurrentReplicas)) ||
		(set.HasRollingUpdate && ordinal < start+int64(set.Partition))
}

// rollingUpdateClassic is the RollingUpdate pass without MaxUnavailableStatefulSet: from the
// highest index down to the partition, delete the first old-revision pod that is not
// terminating, or wait on the first unavailable one.
func (s *syncer) rollingUpdateClassic(replicas *replicaSlots, update *revision, status *setStatus) (*setStatus, error) {
	updateMin := 0
	if s.set.HasRollingUpdate {
		updateMin = int(s.set.Partition)
	}
	for target := replicas.len() - 1; target >= updateMin; target-- {
		if replicas.revision(target) != update.Meta.Name && !replicas.terminating(target) {
			if err := s.deletePod(replicas.at(target)); err != nil {
				return status, err
			}
			status.CurrentReplicas--
			return status, nil
		}
		if replicas.unavailable(target) {
			return status, nil
		}
	}
	return status, nil
}

package statefulset

// useCurrentRevisionForNewPod is newVersionedStatefulSetPod's choice for the pod of slot i: a new
// pod gets the current revision when below the partition (or, for RollingUpdate without
// rollingUpdate, below start+status.currentReplicas); otherwise the update revision. As upstream's
// operator precedence has it, the partition clause applies whatever the strategy type. Upstream
// compares the ordinal; the slot is the same comparison (ordinal - start) but for reserved ordinals,
// where the partition stays an ordinal (partitionSlot) and currentReplicas a count of pods.
func (s *syncer) useCurrentRevisionForNewPod(i int) bool {
	set := s.set
	return (set.StrategyType == strategyRolling && !set.HasRollingUpdate && i < int(set.Status.CurrentReplicas)) ||
		(set.HasRollingUpdate && i < s.partitionSlot())
}

// partitionSlot is the lowest slot the rolling update replaces: the partition (upstream's updateMin),
// or with reserved ordinals the first slot at or above ordinal start+partition (the partition is an
// ordinal, as for a new pod's revision above).
func (s *syncer) partitionSlot() int {
	return s.slots.Below(s.set.startOrdinal() + int64(s.set.Partition))
}

// rollingUpdateClassic is the RollingUpdate pass without MaxUnavailableStatefulSet: from the
// highest index down to the partition, delete the first old-revision pod that is not
// terminating, or wait on the first unavailable one.
func (s *syncer) rollingUpdateClassic(replicas *replicaSlots, update *revision, status *setStatus) (*setStatus, error) {
	updateMin := 0
	if s.set.HasRollingUpdate {
		updateMin = s.partitionSlot()
	}
	for target := replicas.len() - 1; target >= updateMin; target-- {
		if replicas.revision(target) != update.Meta.Name && !replicas.terminating(target) {
			// upstream deletes the pod; extension in-place-update may update it in place, or hold it
			if held, err := s.replaceOldPod(replicas, target, update); held || err != nil {
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

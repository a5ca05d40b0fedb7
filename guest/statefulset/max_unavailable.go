package statefulset

import (
	"math"
	"strconv"
	"strings"
)

// maxUnavailable is getStatefulSetMaxUnavailable: the int or percentage (rounded down) of
// spec.replicas, at least 1; 1 when unset.
func (s *syncer) maxUnavailable() (int, error) {
	mu := s.set.MaxUnavailable
	value := 1
	if mu != nil {
		if !mu.IsString {
			value = int(mu.Int)
		} else {
			str := mu.Str
			if !strings.HasSuffix(str, "%") {
				return 0, simpleError("invalid value for IntOrString: invalid type: string is not a percentage")
			}
			v, err := strconv.Atoi(strings.TrimSuffix(str, "%"))
			if err != nil {
				return 0, simpleError("invalid value for IntOrString: invalid value " + strconv.Quote(str) + ": " + atoiError(strings.TrimSuffix(str, "%"), err))
			}
			value = int(math.Floor(float64(v) * float64(s.set.Replicas) / 100))
		}
	}
	if value < 1 {
		value = 1
	}
	return value, nil
}

// atoiError renders a strconv.Atoi error as Go prints it.
func atoiError(input string, err error) string {
	if ne, ok := err.(*strconv.NumError); ok {
		return "strconv.Atoi: parsing " + strconv.Quote(input) + ": " + ne.Err.Error()
	}
	return err.Error()
}

// rollingUpdateWithMaxUnavailable is updateStatefulSetAfterInvariantEstablished (gate on):
// delete up to maxUnavailable-unavailable old-revision pods from the top down to the
// partition; for Parallel, first the old pods that are already unavailable (two phases).
func (s *syncer) rollingUpdateWithMaxUnavailable(replicas *replicaSlots, update *revision, status *setStatus) (*setStatus, error) {
	set := s.set
	updateMin := 0
	maxUnavailable := 1
	if set.HasRollingUpdate {
		updateMin = s.partitionSlot()
		var err error
		if maxUnavailable, err = s.maxUnavailable(); err != nil {
			return status, err
		}
	}
	parallel := set.PodManagementPolicy == managementParallel
	unavailable, unavailableNeedingUpdate := s.unavailableReplicas(replicas, update.Meta.Name, parallel)
	if unavailable >= maxUnavailable && unavailableNeedingUpdate == 0 {
		return status, nil
	}
	// replace replaces the old pod of slot target: false when the pass stops there (err, held, or both nil)
	var err error
	replace := func(target int) bool {
		var held bool
		held, err = s.replaceOldPod(replicas, target, update)
		if held || err != nil {
			return false
		}
		status.CurrentReplicas--
		return true
	}
	stopped := false
	// the slots from the top down to the partition (oldTargets: those an indexed pass has at an old revision)
	if parallel {
		s.oldTargets(replicas, update.Meta.Name, updateMin, func(target int) bool {
			// (an empty slot is never available: it is "deleted" too, which the API answers NotFound)
			if replicas.revision(target) != update.Meta.Name && replicas.unavailableStrict(target) && !replicas.terminating(target) {
				stopped = !replace(target)
			}
			return !stopped
		})
		if stopped {
			return status, err
		}
		budget := maxUnavailable - unavailable
		s.oldTargets(replicas, update.Meta.Name, updateMin, func(target int) bool {
			if budget <= 0 {
				return false
			}
			if replicas.revision(target) != update.Meta.Name && !replicas.unavailable(target) {
				if stopped = !replace(target); stopped {
					return false
				}
				budget--
			}
			return true
		})
		return status, err
	}
	toDelete := maxUnavailable - unavailable
	deleted := 0
	s.oldTargets(replicas, update.Meta.Name, updateMin, func(target int) bool {
		if deleted >= toDelete {
			return false
		}
		if replicas.revision(target) != update.Meta.Name && !replicas.terminating(target) {
			if !replace(target) {
				return false
			}
			deleted++
		}
		return true
	})
	return status, err
}

// unavailableStrict is !isRunningAndAvailable for slot i (without the terminating clause).
func (r *replicaSlots) unavailableStrict(i int) bool {
	p := r.pods[i]
	return p == nil || !p.isRunningAndAvailable(r.s.set.MinReadySeconds, r.s.now)
}

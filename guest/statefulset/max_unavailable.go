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
	unavailable, unavailableNeedingUpdate := 0, 0
	for target := replicas.len() - 1; target >= 0; target-- {
		if replicas.unavailable(target) {
			unavailable++
			if parallel && replicas.revision(target) != update.Meta.Name && !replicas.terminating(target) {
				unavailableNeedingUpdate++
			}
		}
	}
	if unavailable >= maxUnavailable && unavailableNeedingUpdate == 0 {
		return status, nil
	}
	if parallel {
		for target := replicas.len() - 1; target >= updateMin; target-- {
			// (an empty slot is never available: it is "deleted" too, which the API answers NotFound)
			if replicas.revision(target) != update.Meta.Name && replicas.unavailableStrict(target) && !replicas.terminating(target) {
				if held, err := s.replaceOldPod(replicas, target, update); held || err != nil {
					return status, err
				}
				status.CurrentReplicas--
			}
		}
		budget := maxUnavailable - unavailable
		for target := replicas.len() - 1; target >= updateMin && budget > 0; target-- {
			if replicas.revision(target) != update.Meta.Name && !replicas.unavailable(target) {
				if held, err := s.replaceOldPod(replicas, target, update); held || err != nil {
					return status, err
				}
				budget--
				status.CurrentReplicas--
			}
		}
		return status, nil
	}
	toDelete := maxUnavailable - unavailable
	deleted := 0
	for target := replicas.len() - 1; target >= updateMin && deleted < toDelete; target-- {
		if replicas.revision(target) != update.Meta.Name && !replicas.terminating(target) {
			if held, err := s.replaceOldPod(replicas, target, update); held || err != nil {
				return status, err
			}
			deleted++
			status.CurrentReplicas--
		}
	}
	return status, nil
}

// unavailableStrict is !isRunningAndAvailable for slot i (without the terminating clause).
func (r *replicaSlots) unavailableStrict(i int) bool {
	p := r.pods[i]
	return p == nil || !p.isRunningAndAvailable(r.s.set.MinReadySeconds, r.s.now)
}

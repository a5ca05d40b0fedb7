package statefulset

import (
	"sort"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// maxBatchSize caps slow-start batches (upstream MaxBatchSize).
const maxBatchSize = 500

// updateStatefulSet mirrors UpdateStatefulSet + performUpdate: revisions, one update pass,
// the status write, and history truncation. It returns the status (nil on error).
func (s *syncer) updateStatefulSet(pods []*pod) (*setStatus, error) {
	revisions := s.listRevisions()
	sortRevisions(revisions)

	current, update, collisionCount, err := s.getRevisions(revisions)
	var status *setStatus
	if err == nil {
		status, err = s.updatePass(current, update, collisionCount, pods)
		if !(err != nil && status == nil) {
			// performUpdate: "make sure to update the latest status even if there is an error"
			statusErr := s.writeStatus(status)
			if err == nil {
				err = statusErr
			}
		}
		if err == nil {
			// extension resize-claims (extended module only): after the status, so a resize the API server
			// refuses (a storage class without allowVolumeExpansion) holds back neither pods nor status
			err = s.resizeClaims()
		}
		if err == nil {
			// extension progress-deadline's rollback (extended module only): after the status, whose write
			// is guarded by the set's resourceVersion the rollback changes
			err = s.rollbackOnDeadline()
		}
	}
	truncErr := s.truncateHistory(pods, revisions, current, update)
	if err != nil {
		return nil, newAggregate(append(errorsOf(err), truncErr))
	}
	if truncErr != nil {
		return nil, truncErr
	}
	return status, nil
}

// updatePass is updateStatefulSet: create, repair and delete pods and claims for one pass.
func (s *syncer) updatePass(current, update *revision, collisionCount int32, pods []*pod) (*setStatus, error) {
	set := s.set
	currentTemplate, err := s.revisionTemplate(current)
	if err != nil {
		return nil, err
	}
	updateTemplate, err := s.revisionTemplate(update)
	if err != nil {
		return nil, err
	}
	if set.StrategyType == strategyRecreate && !s.features.RecreateStrategy {
		msg := "statefulset " + set.Meta.Namespace + "/" + set.Meta.Name + " uses Recreate strategy but feature gate " +
			GateStatefulSetRecreateStrategy + " is disabled"
		s.event(eventWarning, "UnknownStrategy", msg)
		return nil, simpleError(msg)
	}

	status := &setStatus{
		ObservedGeneration: set.Meta.Generation,
		CurrentRevision:    current.Meta.Name,
		UpdateRevision:     update.Meta.Name,
		CollisionCount:     collisionCount,
		HasCollisionCount:  true,
	}
	status.Conditions = append(status.Conditions, set.Status.Conditions...)
	s.countClaimed(status, current, update, pods)
	counted := countsOf(status)

	slots := podList(&s.maps.replicas, int(set.Replicas))[:set.Replicas]
	clear(slots) // an empty slot is nil
	replicas := &replicaSlots{s: s, pods: slots, current: current, update: update,
		currentTemplate: currentTemplate, updateTemplate: updateTemplate}
	// loud: the replicas processReplica does not pass over in silence, when the index has them (pod_index.go)
	loud, condemned, indexed := s.indexedSlots(slots, podList(&s.maps.condemned, len(pods)))
	s.indexedPass, s.loudSlots = indexed, loud
	if !indexed {
		for _, p := range pods {
			if i, ok := s.slots.Index(p.Ordinal); ok {
				replicas.pods[i] = p
			} else if p.Ordinal >= 0 {
				condemned = append(condemned, p)
			}
		}
		sort.SliceStable(condemned, func(i, j int) bool { return condemned[i].Ordinal > condemned[j].Ordinal })
	}

	var firstUnavailable *pod
	if indexed { // every slot has a pod, and an unavailable one is loud
		for _, p := range loud {
			if p.isUnavailable(set.MinReadySeconds, s.now) {
				firstUnavailable = p
				break
			}
		}
	} else {
		for i, p := range replicas.pods {
			if p == nil || p.isUnavailable(set.MinReadySeconds, s.now) {
				// an empty slot holds a pod that is not yet created: unavailable
				firstUnavailable = replicas.at(i)
				break
			}
		}
	}
	for i := len(condemned) - 1; i >= 0; i-- {
		if condemned[i].isUnavailable(set.MinReadySeconds, s.now) && firstUnavailable == nil {
			firstUnavailable = condemned[i]
		}
	}

	s.inPlaceCondition(status, replicas, update) // extension in-place-update, InPlaceOnly (extended module only)

	if set.Meta.Deleting {
		return status, nil
	}
	if s.paused() { // extension pause (extended module only): the status as the pods are, no pod written
		s.pauseEvent(status)
		return status, nil
	}
	if s.podsHeld { // an extension's annotation is invalid (extended module only): as paused, warned of
		return status, nil
	}
	if s.progressDeadlinePaused() { // extension progress-deadline, on-progress-deadline Pause (extended module only)
		return status, nil
	}
	monotonic := set.PodManagementPolicy != managementParallel
	recount := func() {
		if s.claimedExact {
			// the index's pods have ordinals, one pod each: each is in one replica slot or condemned, and the
			// slots' new pods are not created (they count for nothing), so the count is the first one
			counted.into(status)
			return
		}
		s.countStatus(status, current, update, replicas.pods, condemned)
	}

	if set.StrategyType == strategyRecreate {
		done, err := s.recreateDeleteAndWait(update, replicas, condemned, status)
		if err != nil || !done {
			recount()
			return status, err
		}
		if current.Meta.Name != update.Meta.Name {
			s.setProgressingCondition(status, "True", reasonRecreateInProgress, "Waiting for new-revision pods to be created")
		}
	}

	if s.recoverStuck(replicas, update) { // extension recover-stuck (extended module only)
		recount()
		return status, nil
	}
	if indexed && monotonic { // processReplica of the loud slots, in order: the others return false, writing nothing
		for _, p := range loud {
			i, _ := s.slots.Index(p.Ordinal)
			if exit, err := s.processReplica(replicas, i, monotonic); exit || err != nil {
				recount()
				return status, err
			}
		}
	} else if exit, err := s.runForAll(replicas.len(), func(i int) (bool, error) {
		return s.processReplica(replicas, i, monotonic)
	}, monotonic); exit || err != nil {
		recount()
		return status, err
	}

	if exit, err := s.runForAll(len(condemned), func(i int) (bool, error) {
		if !s.claimsMatchRetentionPolicy(condemned[i]) {
			if err := s.updatePodClaimForRetentionPolicy(condemned[i]); err != nil {
				return true, err
			}
		}
		return false, nil
	}, monotonic); exit || err != nil {
		recount()
		return status, err
	}

	if exit, err := s.runForAll(len(condemned), func(i int) (bool, error) {
		return s.processCondemned(firstUnavailable, monotonic, condemned, i)
	}, monotonic); exit || err != nil {
		recount()
		return status, err
	}

	recount()

	if set.StrategyType == strategyOnDelete || set.StrategyType == strategyRecreate {
		return status, nil
	}
	if s.features.MaxUnavailable {
		return s.rollingUpdateWithMaxUnavailable(replicas, update, status)
	}
	return s.rollingUpdateClassic(replicas, update, status)
}

// runForAll runs fn over n items: in order, stopping at the first exit or error (monotonic),
// or in slow-start batches (1, 2, 4, ...) that stop after a batch with errors (burst). Burst
// items run as if each in its own goroutine, in start order; a batch's errors are reported in
// the order a single-P Go scheduler completes them (the last started first).
func (s *syncer) runForAll(n int, fn func(i int) (bool, error), monotonic bool) (bool, error) {
	if monotonic {
		for i := 0; i < n; i++ {
			if exit, err := fn(i); exit || err != nil {
				return true, err
			}
		}
		return false, nil
	}
	remaining, j := n, 0
	for batch := min(remaining, 1); batch > 0; batch = min(min(2*batch, remaining), maxBatchSize) {
		errs := make([]error, batch)
		failed := 0
		for k := 0; k < batch; k++ {
			s.gid = s.nextGid
			s.nextGid++
			if _, err := fn(j); err != nil {
				errs[k] = err
				failed++
			}
			j++
		}
		s.gid = 0
		if failed > 0 {
			ordered := make([]error, 0, failed)
			if errs[batch-1] != nil {
				ordered = append(ordered, errs[batch-1])
			}
			for k := 0; k < batch-1; k++ {
				if errs[k] != nil {
					ordered = append(ordered, errs[k])
				}
			}
			return true, aggregate(ordered)
		}
		remaining -= batch
	}
	return false, nil
}

// replicaSlots are the replica pods by slot (s.slots: ordinal - start, as upstream, but for reserved
// ordinals). A slot without a pod holds
// the pod the controller would create (newVersionedStatefulSetPod), built on first access so
// that a set with many replicas costs memory only for the slots a pass touches.
type replicaSlots struct {
	s                               *syncer
	pods                            []*pod
	current, update                 *revision
	currentTemplate, updateTemplate jsonv.Value
}

func (r *replicaSlots) len() int { return len(r.pods) }

// at returns the pod of slot i, building the not-yet-created pod of an empty slot.
func (r *replicaSlots) at(i int) *pod {
	if r.pods[i] == nil {
		ord := r.s.slots.At(i)
		if r.s.useCurrentRevisionForNewPod(i) {
			r.pods[i] = r.s.newPod(r.currentTemplate, ord, r.current.Meta.Name)
		} else {
			r.pods[i] = r.s.newPod(r.updateTemplate, ord, r.update.Meta.Name)
		}
	}
	return r.pods[i]
}

// revision is the revision label of slot i without building an empty slot's pod.
func (r *replicaSlots) revision(i int) string {
	if p := r.pods[i]; p != nil {
		return p.revisionLabel()
	}
	if r.s.useCurrentRevisionForNewPod(i) {
		return r.current.Meta.Name
	}
	return r.update.Meta.Name
}

// unavailable reports whether slot i's pod is unavailable (an empty slot always is).
func (r *replicaSlots) unavailable(i int) bool {
	p := r.pods[i]
	return p == nil || p.isUnavailable(r.s.set.MinReadySeconds, r.s.now)
}

// terminating reports whether slot i's pod is terminating (an empty slot never is).
func (r *replicaSlots) terminating(i int) bool {
	p := r.pods[i]
	return p != nil && p.isTerminating()
}

// processReplica handles one replica slot; true means "stop here" (monotonic only).
func (s *syncer) processReplica(replicas *replicaSlots, i int, monotonic bool) (bool, error) {
	p := replicas.at(i)
	set := s.set
	if p.isTerminal() {
		if !p.Meta.Deleting {
			if err := s.deletePod(p); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if !p.isCreated() {
		if s.podClaimIsStale(p) {
			return true, nil
		}
		if err := s.createPod(p); err != nil {
			return true, err
		}
		if monotonic {
			return true, nil
		}
	}
	if p.isPending() { // createMissingPersistentVolumeClaims
		if err := s.createClaims(p); err != nil {
			return true, err
		}
		if err := s.updatePodClaimForRetentionPolicy(p); err != nil {
			s.claimRefusedEvent("update", p.Meta.Name, err)
			return true, err
		}
	}
	if monotonic {
		if p.isTerminating() || !p.isRunningAndReady() || !p.isRunningAndAvailable(set.MinReadySeconds, s.now) {
			return true, nil
		}
	}
	retentionMatch := s.claimsMatchRetentionPolicy(p)
	if s.identityMatches(p) && s.storageMatches(p) && retentionMatch {
		return false, nil
	}
	if err := s.updatePod(p); err != nil {
		return true, err
	}
	return false, nil
}

// createPod is CreateStatefulPod: claims first, then the pod, then claim owner references (even after a
// refused create, except AlreadyExists: "Set PVC policy as much as is possible at this point").
func (s *syncer) createPod(p *pod) error {
	if err := s.createClaims(p); err != nil {
		s.podEvent("create", p.Meta.Name, err)
		return err
	}
	k := key(p.Meta.Namespace, p.Meta.Name)
	obj := *p.obj()
	if !p.synthetic {
		// a pod of the snapshot without a phase: upstream sends the object it has
		obj = withTypeMeta(*p.obj(), "v1", kindPod, p.Meta.Namespace)
	}
	var predicted error
	if s.podExistsAt(k) {
		predicted = errAlreadyExists(resPods, p.Meta.Name)
	}
	err := s.issue(action{Verb: verbCreate, Kind: kindPod, Namespace: p.Meta.Namespace, Name: p.Meta.Name, Object: &obj}, predicted)
	if isAlreadyExists(err) {
		return err // "sink already exists errors": no event
	}
	if err == nil {
		s.setPodExists(k, true)
	}
	if uerr := s.updatePodClaimForRetentionPolicy(p); uerr != nil {
		s.claimRefusedEvent("update", p.Meta.Name, uerr)
		return uerr
	}
	s.podEvent("create", p.Meta.Name, err)
	return err
}

// updatePod is UpdateStatefulPod: repair identity and storage (creating claims), fix claim owner
// references, and update the pod if anything changed. p is the lister's pod, never changed: each attempt
// works on a copy, and a Conflict is retried from the lister's pod again (retry.RetryOnConflict with
// DefaultBackoff); the update event follows the last attempt.
func (s *syncer) updatePod(p *pod) error {
	attempted := false
	var err error
	for attempt := 0; attempt < retryBackoffSteps; attempt++ {
		if err = s.updatePodOnce(copyPod(p), &attempted); err == nil || !isConflict(err) {
			break
		}
	}
	if attempted {
		s.podEvent("update", p.Meta.Name, err)
	}
	return err
}

// updatePodOnce is one attempt of UpdateStatefulPod's retried function.
func (s *syncer) updatePodOnce(p *pod, attempted *bool) error {
	consistent := true
	if !s.identityMatches(p) {
		s.updateIdentity(p)
		consistent = false
	}
	if !s.storageMatches(p) {
		s.updateStorage(p)
		consistent = false
		if err := s.createClaims(p); err != nil {
			s.podEvent("update", p.Meta.Name, err)
			return err
		}
	}
	if !s.claimsMatchRetentionPolicy(p) {
		if err := s.updatePodClaimForRetentionPolicy(p); err != nil {
			s.claimRefusedEvent("update", p.Meta.Name, err)
			return err
		}
		consistent = false
	}
	if consistent {
		return nil
	}
	*attempted = true
	obj := withTypeMeta(*p.obj(), "v1", kindPod, p.Meta.Namespace)
	var predicted error
	if !s.podExistsAt(key(p.Meta.Namespace, p.Meta.Name)) {
		predicted = errNotFound(resPods, p.Meta.Name)
	}
	err := s.issue(action{Verb: verbUpdate, Kind: kindPod, Namespace: p.Meta.Namespace, Name: p.Meta.Name, Object: &obj}, predicted)
	if isNotFound(err) {
		s.setPodExists(key(p.Meta.Namespace, p.Meta.Name), false)
	}
	return err
}

// deletePod is DeleteStatefulPod: NotFound counts as success; another refusal is recorded as a failed
// delete and returned.
func (s *syncer) deletePod(p *pod) error {
	k := key(p.Meta.Namespace, p.Meta.Name)
	var predicted error
	if !s.podExistsAt(k) {
		predicted = errNotFound(resPods, p.Meta.Name)
	}
	err := s.issue(action{Verb: verbDelete, Kind: kindPod, Namespace: p.Meta.Namespace, Name: p.Meta.Name}, predicted)
	if err != nil && !isNotFound(err) {
		s.podEvent("delete", p.Meta.Name, err)
		return err
	}
	s.setPodExists(k, false)
	s.podEvent("delete", p.Meta.Name, nil)
	return nil
}

// recreateDeleteAndWait: the alpha Recreate strategy deletes every old-revision pod and waits
// until all are gone before creating new ones.
func (s *syncer) recreateDeleteAndWait(update *revision, replicas *replicaSlots, condemned []*pod, status *setStatus) (bool, error) {
	all := make([]*pod, 0, replicas.len()+len(condemned))
	all = append(all, replicas.pods...)
	all = append(all, condemned...)
	inProgress := false
	if _, err := s.runForAll(len(all), func(i int) (bool, error) {
		p := all[i]
		if p == nil || !p.isCreated() {
			return false, nil
		}
		if p.revisionLabel() != update.Meta.Name {
			inProgress = true
			if p.isTerminating() {
				return false, nil
			}
			if err := s.deletePod(p); err != nil && !isNotFound(err) {
				return false, err
			}
		}
		return true, nil
	}, false); err != nil {
		return false, err
	}
	if inProgress {
		s.setProgressingCondition(status, "True", reasonRecreateInProgress, "Deleting old revision pods")
		return false, nil
	}
	return true, nil
}

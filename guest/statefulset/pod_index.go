package statefulset

import (
	"sort"
	"strings"
	"time"
)

// The set's claimed pods and their status counts, kept by an instance from one delta sync to the next
// (syncMaps.podIndex). claimPods (getPodsForStatefulSet) lists, sorts and checks every pod, and countStatus
// (updateStatus's counts) reads every pod twice: on a delta that changed one pod of a settled set, that was
// most of what the sync did. The index is what a whole claimPods found, and it is brought up to date from
// the delta's dropped and sent pods alone; anything it cannot resolve that way (a pod the set would adopt or
// release, an ordinal it cannot place, another set identity, a whole snapshot, a replan with write
// failures) drops it and the sync runs upstream's loops again, which build it anew. It is kept only while
// claimPods has nothing to write: every listed pod is controlled by the set and matches it, so the claimed
// pods are exactly the listed ones and a pod's place in them depends on the pod alone.

// claimedIndex is the held pods claimPods returns, in its order (sortPodsByName's), with their counts.
type claimedIndex struct {
	valid bool
	gen   uint64 // the set identity's generation it holds for (pod_memo.go)
	pods  []*pod // held objects of the instance (a delta sync's own pointers), each one with an ordinal
	// inPlace: the pods with an in-place record, which the extended module's inPlaceAvailability may read
	// otherwise than as they are
	inPlace int
	// counts are countStatus's counts of pods for the revisions countsFor (current, update), as at a
	// minReadySeconds of 0 (availability then is readiness, whatever the time); countsValid: they are
	counts      podCounts
	countsFor   [2]string
	countsValid bool
	// loud: the pods processReplica would not pass over in silence (quietReplica), in the same order, for
	// the sync of loudFor; loudValid: they are
	loud      []*pod
	loudFor   loudKey
	loudValid bool
	// old: the pods whose revision label is not oldFor (the update revision of the sync that found them), in
	// the same order; oldValid: they are
	old      []*pod
	oldFor   string
	oldValid bool
}

// loudKey is what quietReplica reads besides the pod: the memos' generations and the replica slots.
type loudKey struct {
	identity, retention uint64
	start, replicas     int64
}

// podCounts are the counts of updateStatus.
type podCounts struct {
	replicas, ready, available, current, updated int32
}

// add counts pod p n times (n = -1 takes it out): the body of upstream's loop in updateStatus.
func (c *podCounts) add(p *pod, minReadySeconds int32, now time.Time, current, update string, n int32) {
	if p.isCreated() {
		c.replicas += n
	}
	if p.isRunningAndReady() {
		c.ready += n
		if p.isRunningAndAvailable(minReadySeconds, now) {
			c.available += n
		}
	}
	if p.isCreated() && !p.isTerminating() {
		rev := p.revisionLabel()
		if rev == current {
			c.current += n
		}
		if rev == update {
			c.updated += n
		}
	}
}

func countsOf(st *setStatus) podCounts {
	return podCounts{st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas}
}

func (c podCounts) into(st *setStatus) {
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas = c.replicas, c.ready, c.available, c.current, c.updated
}

// podKeyLess is sortPodsByName's order of pods that all have an ordinal.
func podKeyLess(a, b *pod) bool {
	if a.Parent != b.Parent {
		return a.Parent < b.Parent
	}
	if a.Ordinal != b.Ordinal {
		return a.Ordinal < b.Ordinal
	}
	return a.Meta.Name < b.Meta.Name
}

// claimedFromIndex is claimPods' result from the index and this sync's delta (ok false: run upstream's loops).
func (s *syncer) claimedFromIndex() ([]*pod, bool) {
	x := &s.maps.podIndex
	if !s.indexKept || !x.valid || x.gen != s.identityGen || s.snap.delta == nil || !x.apply(s, &s.snap.delta.pods) {
		x.valid = false
		return nil, false
	}
	// the sync's own list: the extended module may put other pods in it (inPlaceAvailability)
	return append(podList(&s.maps.claimed, len(x.pods)), x.pods...), true
}

// apply brings the index up to date with one delta's pods (false: it cannot; the index is then unusable).
func (x *claimedIndex) apply(s *syncer, k *kindDelta[pod]) bool {
	for _, c := range k.dropped {
		if !x.remove(&c.v) {
			return false
		}
	}
	for _, c := range k.sent {
		p := &c.v
		f := s.factsOf(p)
		switch {
		case f == nil:
			return false
		case !f.candidate:
			continue // not listed for the set: claimPods never sees it
		case !indexable(p, f):
			return false // a pod to adopt or release, or one without an ordinal
		}
		if !x.insert(s, p) {
			return false
		}
	}
	return true
}

// indexable: a listed pod claimPods keeps without writing (controlled by the set, selected by it) and places
// by its ordinal.
func indexable(p *pod, f *podFacts) bool {
	return f != nil && f.match && p.Meta.controllerRef() != nil && p.Ordinal >= 0
}

// search is where p belongs in pods, a list in podKeyLess's order.
func search(pods []*pod, p *pod) int {
	return sort.Search(len(pods), func(i int) bool { return !podKeyLess(pods[i], p) })
}

// removed is pods without pod p, the object of its name it has (ok false: it has another object of that name).
func removed(pods []*pod, p *pod) (out []*pod, found, ok bool) {
	i := search(pods, p)
	if i == len(pods) || pods[i].Meta.Name != p.Meta.Name || pods[i].Parent != p.Parent {
		return pods, false, true
	}
	if pods[i] != p {
		return pods, false, false
	}
	out = append(pods[:i], pods[i+1:]...)
	out[:cap(out)][len(out)] = nil // no dropped pod kept alive by the storage
	return out, true, true
}

// inserted is pods with p in its place (ok false: another pod has its ordinal, which upstream's slots resolve
// by order; the index leaves that to upstream's loops).
func inserted(pods []*pod, p *pod) ([]*pod, bool) {
	i := search(pods, p)
	if i > 0 && pods[i-1].Ordinal == p.Ordinal || i < len(pods) && pods[i].Ordinal == p.Ordinal {
		return pods, false
	}
	pods = append(pods, nil)
	copy(pods[i+1:], pods[i:])
	pods[i] = p
	return pods, true
}

// remove takes out a pod the delta dropped, if the index has it (false: it has another object of its name).
func (x *claimedIndex) remove(p *pod) bool {
	pods, found, ok := removed(x.pods, p)
	if found {
		x.pods = pods
		x.count(p, -1)
		if x.loudValid {
			x.loud, _, _ = removed(x.loud, p)
		}
		if x.oldValid {
			x.old, _, _ = removed(x.old, p)
		}
	}
	return ok
}

// insert adds a pod the delta sent (false: the index cannot have it).
func (x *claimedIndex) insert(s *syncer, p *pod) bool {
	pods, ok := inserted(x.pods, p)
	if !ok {
		return false
	}
	x.pods = pods
	x.count(p, 1)
	switch {
	case !x.loudValid:
	case x.loudFor != s.loudKey():
		x.loudValid = false // found again for this sync's key when the pass asks
	case !s.quietReplica(p):
		x.loud, _ = inserted(x.loud, p)
	}
	if x.oldValid && p.revisionLabel() != x.oldFor {
		x.old, _ = inserted(x.old, p)
	}
	return true
}

// count adds p's part (n = 1) or takes it out (n = -1) of what the index counts.
func (x *claimedIndex) count(p *pod, n int32) {
	if p.inPlaceRev != "" {
		x.inPlace += int(n)
	}
	if x.countsValid {
		x.counts.add(p, 0, time.Time{}, x.countsFor[0], x.countsFor[1], n)
	}
}

// build makes the index claimPods' result claimed, when claimPods wrote nothing (clean) and the pods are a
// delta sync's held objects; otherwise it drops it.
func (x *claimedIndex) build(s *syncer, claimed []*pod, clean bool) {
	*x = claimedIndex{pods: x.pods[:0]}
	clear(x.pods[:cap(x.pods)])
	if !s.indexKept || !clean || s.snap.delta == nil {
		return
	}
	for i, p := range claimed {
		if i > 0 && claimed[i-1].Ordinal == p.Ordinal {
			return
		}
	}
	x.pods = append(x.pods, claimed...)
	for _, p := range claimed {
		x.count(p, 1)
	}
	x.valid, x.gen = true, s.identityGen
}

// countClaimed is updateStatus's counts of the claimed pods: the index's when it has them for these
// revisions, else counted (and kept by the index when it can).
func (s *syncer) countClaimed(st *setStatus, current, update *revision, pods []*pod) {
	x := &s.maps.podIndex
	exact := s.claimedExact && s.set.MinReadySeconds == 0
	if exact && x.countsValid && x.countsFor[0] == current.Meta.Name && x.countsFor[1] == update.Meta.Name {
		x.counts.into(st)
		return
	}
	s.countStatus(st, current, update, pods)
	if exact {
		x.counts, x.countsValid = countsOf(st), true
		x.countsFor = [2]string{strings.Clone(current.Meta.Name), strings.Clone(update.Meta.Name)}
	}
}

// The update pass (updateStatefulSet) places every pod in its replica slot or among the condemned, finds the
// first unavailable replica and runs processReplica on every slot: on a settled set of 1000 pods, a thousand
// pods that need nothing. With the index, a monotonic pass whose slots are all filled places the pods by
// their range in the index, and visits only its loud pods: those processReplica does not pass over in silence
// (an unavailable pod is loud, so the first unavailable replica is one of them).

// quietReplica: processReplica of a monotonic pass returns false for pod p without a write (its checks, in its
// order), whatever the time (minReadySeconds is 0).
func (s *syncer) quietReplica(p *pod) bool {
	return !p.isTerminal() && p.isCreated() && !p.isPending() && !p.isTerminating() && p.isRunningAndReady() &&
		s.set.MinReadySeconds == 0 && p.isRunningAndAvailable(0, s.now) &&
		s.claimsMatchRetentionPolicy(p) && s.identityMatches(p) && s.storageMatches(p)
}

// loudKey is this sync's key of the loud pods.
func (s *syncer) loudKey() loudKey {
	return loudKey{identity: s.identityGen, retention: s.retentionGen, start: s.slots.Start, replicas: s.slots.Replicas}
}

// indexedSlots is the update pass's replica slots and condemned pods from the index, and the loud pods of the
// slots in slot order (ok false: the pass reads the pods). Each replica slot's pod is the index's pod of its
// ordinal: the slots are ordinals start.. without a reserved one, and the index has each of them.
func (s *syncer) indexedSlots(slots, condemned []*pod) (loud []*pod, _ []*pod, ok bool) {
	x := &s.maps.podIndex
	n := s.slots.Replicas
	if !s.claimedExact || s.set.MinReadySeconds != 0 || n > 0 && s.slots.At(int(n-1)) != s.slots.Start+n-1 {
		return nil, condemned, false
	}
	if k := s.loudKey(); !x.loudValid || x.loudFor != k {
		x.loud = x.loud[:0]
		clear(x.loud[:cap(x.loud)])
		for _, p := range x.pods {
			if !s.quietReplica(p) {
				x.loud = append(x.loud, p)
			}
		}
		x.loudFor, x.loudValid = k, true
	}
	lo, hi := ordinalAt(x.pods, s.slots.Start), ordinalAt(x.pods, s.slots.Start+n)
	if int64(hi-lo) != n {
		return nil, condemned, false // a slot without a pod: upstream's loops build it
	}
	copy(slots, x.pods[lo:hi])
	for i := len(x.pods) - 1; i >= hi; i-- { // descending ordinals, as updatePass sorts them
		condemned = append(condemned, x.pods[i])
	}
	for i := lo - 1; i >= 0; i-- {
		condemned = append(condemned, x.pods[i])
	}
	return x.loud[ordinalAt(x.loud, s.slots.Start):ordinalAt(x.loud, s.slots.Start+n)], condemned, true
}

// ordinalAt is the first place in pods (by ordinal) of a pod whose ordinal is n or more.
func ordinalAt(pods []*pod, n int64) int {
	return sort.Search(len(pods), func(i int) bool { return pods[i].Ordinal >= n })
}

// The rolling update (updateStatefulSetAfterInvariantEstablished) counts the unavailable replicas and looks
// for old-revision pods from the top slot down: on a settled set, every slot. An indexed pass counts its loud
// pods (an unavailable pod is loud) and visits the pods the index has at another revision than the update's.

// oldTargets calls fn with the replica slots from the top down to updateMin, until it returns false: every
// slot, or, in an indexed pass, those whose pod is not at revision update (fn passes over the others anyway).
func (s *syncer) oldTargets(replicas *replicaSlots, update string, updateMin int, fn func(target int) bool) {
	if !s.indexedPass {
		for target := replicas.len() - 1; target >= updateMin; target-- {
			if !fn(target) {
				return
			}
		}
		return
	}
	x := &s.maps.podIndex
	if !x.oldValid || x.oldFor != update {
		x.old = x.old[:0]
		clear(x.old[:cap(x.old)])
		for _, p := range x.pods {
			if p.revisionLabel() != update {
				x.old = append(x.old, p)
			}
		}
		x.oldFor, x.oldValid = strings.Clone(update), true
	}
	old := x.old[ordinalAt(x.old, s.slots.Start):ordinalAt(x.old, s.slots.Start+s.slots.Replicas)]
	for j := len(old) - 1; j >= 0; j-- {
		target, _ := s.slots.Index(old[j].Ordinal)
		if target < updateMin || !fn(target) {
			return
		}
	}
}

// unavailableReplicas is the rolling update's count of unavailable replicas, and of those (parallel only)
// that are not terminating and not at revision update.
func (s *syncer) unavailableReplicas(replicas *replicaSlots, update string, parallel bool) (unavailable, needingUpdate int) {
	count := func(target int) {
		if replicas.unavailable(target) {
			unavailable++
			if parallel && replicas.revision(target) != update && !replicas.terminating(target) {
				needingUpdate++
			}
		}
	}
	if s.indexedPass {
		for _, p := range s.loudSlots {
			target, _ := s.slots.Index(p.Ordinal)
			count(target)
		}
		return unavailable, needingUpdate
	}
	for target := replicas.len() - 1; target >= 0; target-- {
		count(target)
	}
	return unavailable, needingUpdate
}

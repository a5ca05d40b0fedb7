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
		if !x.insert(p) {
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

// search is where p belongs in the index.
func (x *claimedIndex) search(p *pod) int {
	return sort.Search(len(x.pods), func(i int) bool { return !podKeyLess(x.pods[i], p) })
}

// remove takes out a pod the delta dropped, if the index has it (false: it has another object of its name).
func (x *claimedIndex) remove(p *pod) bool {
	i := x.search(p)
	if i == len(x.pods) || x.pods[i].Meta.Name != p.Meta.Name || x.pods[i].Parent != p.Parent {
		return true // not listed for the set
	}
	if x.pods[i] != p {
		return false
	}
	x.pods = append(x.pods[:i], x.pods[i+1:]...)
	x.pods[:cap(x.pods)][len(x.pods)] = nil // no dropped pod kept alive by the storage
	x.count(p, -1)
	return true
}

// insert adds a pod the delta sent (false: its ordinal is another indexed pod's, which upstream's slots
// resolve by order; the index leaves that to upstream's loops).
func (x *claimedIndex) insert(p *pod) bool {
	i := x.search(p)
	if i > 0 && x.pods[i-1].Ordinal == p.Ordinal || i < len(x.pods) && x.pods[i].Ordinal == p.Ordinal {
		return false
	}
	x.pods = append(x.pods, nil)
	copy(x.pods[i+1:], x.pods[i:])
	x.pods[i] = p
	x.count(p, 1)
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

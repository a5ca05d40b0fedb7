package statefulset

import (
	"fmt"
	"sort"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Reconcile runs one sync of the upstream StatefulSet controller (Kubernetes v1.37.2) over
// an ABI v1 snapshot and returns the plan JSON. It never panics: every failure is an error
// inside the plan.
func Reconcile(input []byte) (out []byte) {
	return ReconcileCached(nil, input)
}

// ReconcileCached is Reconcile for a module instance that keeps what it decoded between calls: the
// snapshot's objects may be references to the previous snapshot's (object_cache.go), and cache is left
// holding this snapshot's objects (emptied when the snapshot is refused). A nil cache is Reconcile.
func ReconcileCached(cache *ObjectCache, input []byte) []byte {
	return ReconcileInto(cache, input, make([]byte, 0, 4096))
}

// ReconcileInto is ReconcileCached writing the plan over buf's storage (buf[:0], grown when short), for an
// export whose host copies the plan out before the instance's next call: a plan in memory of its own per call
// was the largest single allocation of a held sync, and under TinyGo's leaking collector what a call allocates
// is what gets an instance recycled.
func ReconcileInto(cache *ObjectCache, input, buf []byte) (out []byte) {
	buf = buf[:0]
	defer func() {
		if r := recover(); r != nil {
			if cache != nil {
				*cache = ObjectCache{}
			}
			out = appendPlan(buf[:0], planOfError(&PlanError{Code: CodeSyncFailed, Message: fmt.Sprint("internal error: ", r)}))
		}
	}()
	var prev, next *objectMaps
	var seen *objectKeys
	var slab *objectSlab
	var maps *syncMaps
	var set *setMemo
	if cache != nil {
		prev, next, slab, maps, set = cache.held, cache.spare, cache.slab, cache.maps, cache.set
		if prev == nil {
			prev, next, slab, maps, set = &objectMaps{}, &objectMaps{}, &objectSlab{}, &syncMaps{}, &setMemo{}
		}
		if seen = cache.seen; seen == nil {
			seen = &objectKeys{}
		}
		*cache = ObjectCache{} // what this call decodes replaces it, or nothing does
		slab.reset()
	}
	root, err := jsonv.Validate(input)
	if err != nil {
		return appendPlan(buf, planOfError(&PlanError{Code: CodeInvalidJSON, Message: err.Error()}))
	}
	snap, perr := decodeSnapshotCached(root, prev, next, seen, slab, set)
	if perr != nil {
		return appendPlan(buf, planOfError(perr))
	}
	snap.maps = maps
	var p *plan
	if len(snap.WriteFailures) > 0 {
		if p, perr = runWithFailures(root, snap, prev); perr != nil {
			return appendPlan(buf, planOfError(perr))
		}
	} else {
		p = run(snap, nil)
	}
	if seen != nil && seen.len() > maxKeptScratch { // a whole snapshot's: emptying it would cost every delta after it
		seen = nil
	}
	switch { // the snapshot's decoded objects, for the instance's next call; the maps before, to refill
	case cache == nil:
	case snap.delta != nil:
		snap.delta.commit(prev, next)
		*cache = ObjectCache{held: prev, spare: next, seen: seen, slab: slab, maps: maps, set: set}
	default:
		next.decodes = prev.decodes
		*cache = ObjectCache{held: next, spare: prev, seen: seen, slab: slab, maps: maps, set: set, input: true}
	}
	return appendPlan(buf, p)
}

// maxKeptScratch is the most entries of the decode's scratch map an instance keeps for its next call.
const maxKeptScratch = 64

// syncer is the state of one sync: the snapshot as informers and API server see it, and the
// plan being recorded.
type syncer struct {
	snap     *snapshot
	set      *statefulSet
	features Features
	now      time.Time
	sel      compiledSelector
	plan     *plan

	// API server contents (by namespace/name) used to answer writes: the snapshot's pods and claims (maps), and
	// what this sync's writes did to them (podExists, claimExists; sync_lookups.go)
	maps        *syncMaps
	podExists   map[nsName]bool
	claimExists map[string]bool
	revByKey    map[nsName]*revision

	gid, nextGid int // simulated goroutine of the current write (0 = main)

	requeueExt time.Duration // a sync an extension needs by then (0: none; extended module only)

	identityGen  uint64 // the generation of the set's identity, for podFacts (0: none kept)
	retentionGen uint64 // the generation of what claimsMatchRetentionPolicy reads besides the pod (pod_memo.go)

	// indexKept: the sync may read and keep the instance's index of claimed pods (pod_index.go);
	// claimedExact: the sync's claimed pods are the index's, as they are
	indexKept, claimedExact bool
	// indexedPass: the update pass reads its slots from the index, loudSlots its replicas that need something
	indexedPass bool
	loudSlots   []*pod

	slots    ordinal.Slots // the set's ordinals by replica slot (upstream's, or reserve-ordinals')
	podsHeld bool          // an extension's annotation is invalid: no pod is written until it is fixed

	// rollbackTo, rollbackFrom: the revisions of the rollback extension progress-deadline writes after the
	// status (rollbackOnDeadline; "": none)
	rollbackTo, rollbackFrom string

	// inPlaceVerdicts: extension in-place-update's verdicts by the revision a pod moves from (in_place_update.go)
	inPlaceVerdicts map[string]*inPlaceVerdict

	failAt map[int]error // the host's refusals by the seq of the write they answer (write_failures.go)
}

// syncMaps are the lookup maps a sync builds from its snapshot's pods and claims, kept by an instance
// (ObjectCache) and emptied for its next sync: made anew, they were half of what a held 1000-pod sync
// allocated, and under TinyGo's leaking collector what a call allocates is what gets an instance recycled.
type syncMaps struct {
	// podNames, claimIndex: the snapshot's pods by namespace and name, its claims in the set's namespace by
	// name (their place in snapshot.Claims), for the claims of retention generation claimsIndexed
	// (sync_lookups.go)
	podNames      nameSet
	claimIndex    map[string]int
	claimsIndexed uint64
	// candidates, claimed, replicas, condemned: the sync's lists of pods, storage an instance reuses (under
	// TinyGo's leaking collector what a call allocates is what gets an instance recycled)
	candidates, claimed, replicas, condemned []*pod
	// identity is the set's identity of the instance's last sync, gen its generation (pod_memo.go): held pods'
	// facts are found again only when it changes
	identity setIdentity
	gen      uint64
	// retention, retentionGen: the same for what claimsMatchRetentionPolicy reads besides the pod
	retention    retentionContext
	retentionGen uint64
	// podIndex: the claimed pods and their counts, kept from one delta sync to the next (pod_index.go)
	podIndex claimedIndex
	// patch: the revision patch of a set's template whose text was patchText (setPatch; nothing changes it),
	// patchMemo the memo of the revisions proposed with it
	patchText string
	patch     []byte
	patchMemo *revisionMemo
}

// reused is *m emptied, or a new map for n entries when there is none.
func reused[K comparable, V any](m *map[K]V, n int) map[K]V {
	if *m == nil {
		*m = make(map[K]V, n)
	} else {
		clear(*m)
	}
	return *m
}

// nsName is how the API server names an object of a kind: a map key made without building a string (one per
// pod per sync was the sync's largest count of allocations).
type nsName struct{ namespace, name string }

func key(ns, name string) nsName { return nsName{ns, name} }

// run performs the sync shell: mirrors StatefulSetController.sync + syncStatefulSet.
func run(snap *snapshot, failAt map[int]error) *plan {
	s := &syncer{snap: snap, set: snap.Set, features: snap.Features, now: snap.Now, plan: &plan{eventActions: snap.EventActions},
		failAt: failAt}
	m, kept := snap.maps, snap.maps != nil
	if !kept {
		m = &syncMaps{}
	}
	s.maps = m
	s.revByKey = make(map[nsName]*revision, len(snap.Revisions))
	for _, r := range snap.Revisions {
		s.revByKey[key(r.Meta.Namespace, r.Meta.Name)] = r
	}
	s.nextGid = 1
	if kept { // memos are found under an instance's generations only (pod_memo.go): none to share otherwise
		s.identityGen = m.identityGeneration(s.set)
		s.retentionGen = m.retentionGeneration(s.set, s.identityGen, snap.delta == nil || snap.delta.claims.changes())
	}
	// a replan with write failures decodes afresh and may run on other maps: the index waits for a plain sync
	s.indexKept = kept && failAt == nil && s.identityGen != 0
	if !s.indexKept {
		m.podIndex.valid = false
	}
	m.index(snap, s.set.Meta.Namespace, s.retentionGen)
	s.slots = s.ordinalSlots()
	s.checkPaused()
	s.checkPodUpdatePolicy()

	defer canonicalOrder(s.plan)
	sel, ok := compileSelector(s.set.Selector)
	if !ok {
		// upstream logs the conversion error and does not retry: nothing happens.
		return s.plan
	}
	s.sel = sel

	if err := s.adoptOrphanRevisions(); err != nil {
		return s.fail(err)
	}
	pods, err := s.claimPods()
	if err != nil {
		return s.fail(err)
	}
	x := &m.podIndex
	s.claimedExact = x.valid
	if extendedBuild && !(x.valid && x.inPlace == 0) { // no pod of the index has an in-place record to read
		s.claimedExact = false
		for i, p := range pods {
			pods[i] = inPlaceAvailability(p) // extension in-place-update: Ready only once restarted
		}
	}
	status, err := s.updateStatefulSet(pods)
	if err != nil {
		return s.fail(err)
	}
	if status != nil {
		s.plan.RequeueAfter = requeueAfter(s.set.MinReadySeconds, status.ReadyReplicas, status.AvailableReplicas, pods, s.now)
	}
	if r := s.requeueExt.Seconds(); s.requeueExt > 0 && (s.plan.RequeueAfter == 0 || r < s.plan.RequeueAfter) {
		s.plan.RequeueAfter = r
	}
	return s.plan
}

func (s *syncer) fail(err error) *plan {
	s.plan.Err = &PlanError{Code: CodeSyncFailed, Message: err.Error()}
	return s.plan
}

// record appends a write to the plan.
func (s *syncer) record(a action) {
	a.gid = s.gid
	a.seq = len(s.plan.Actions)
	s.plan.Actions = append(s.plan.Actions, a)
}

// listRevisions returns the revisions of the set: same namespace, labels match the selector,
// controlled by the set or by nobody.
func (s *syncer) listRevisions() []*revision {
	var out []*revision
	for _, r := range s.snap.Revisions {
		if !s.listedFor(&r.Meta) {
			continue
		}
		if !s.sel.matches(r.Meta.Labels) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// sortRevisions is history.SortControllerRevisions: stable by revision number, then creation
// time, then name.
func sortRevisions(revs []*revision) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if a.Revision == b.Revision {
			if a.Meta.Created.Equal(b.Meta.Created) {
				return a.Meta.Name < b.Meta.Name
			}
			return a.Meta.Created.Before(b.Meta.Created)
		}
		return a.Revision < b.Revision
	})
}

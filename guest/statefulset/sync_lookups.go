package statefulset

// The sync's lookups of what the API server has: the pods and claims by name. A held 1000-pod sync filled
// three maps of every pod and claim, a third of its time under TinyGo; now the names are indexed in maps the
// instance keeps (syncMaps), made again only when the snapshot's names may have changed (a whole snapshot, a
// delta that adds, removes or renames, another set identity), and a sync's own writes go to a map of their
// own.

// podExistsAt reports whether the API server has the pod k: as this sync's writes left it, or the snapshot's.
func (s *syncer) podExistsAt(k nsName) bool {
	if e, ok := s.podExists[k]; ok {
		return e
	}
	return s.maps.podNames.has(k)
}

// setPodExists records what a write of this sync did to pod k.
func (s *syncer) setPodExists(k nsName, exists bool) {
	if s.podExists == nil {
		s.podExists = map[nsName]bool{}
	}
	s.podExists[k] = exists
}

// claimNamed is the claim of that name in the set's namespace as the informer's lister has it (no write of
// the sync changes it).
func (s *syncer) claimNamed(name string) (*claim, bool) {
	i, ok := s.maps.claimIndex[name]
	if !ok {
		return nil, false
	}
	return s.snap.Claims[i], true
}

// claimExistsAt reports whether the API server has the claim: as this sync's writes left it, or the lister's.
func (s *syncer) claimExistsAt(name string) bool {
	if e, ok := s.claimExists[name]; ok {
		return e
	}
	_, ok := s.maps.claimIndex[name]
	return ok
}

// setClaimExists records what a write of this sync did to a claim.
func (s *syncer) setClaimExists(name string, exists bool) {
	if s.claimExists == nil {
		s.claimExists = map[string]bool{}
	}
	s.claimExists[name] = exists
}

// index makes the instance's name indexes fit this sync's snapshot: the pods' names again for a whole snapshot,
// brought up to date from a delta's dropped and sent pods when it adds, removes or renames (an index of 1000 names
// made again on every sync of a rollout that creates or deletes a pod was most of what such a sync allocated
// under TinyGo), the claims' positions when the claims or the set's identity did (claimsGen, the retention
// generation, changes with either).
func (m *syncMaps) index(snap *snapshot, namespace string, claimsGen uint64) {
	switch d := snap.delta; {
	case d == nil || !m.podNames.valid:
		m.podNames.rebuild(snap.Pods)
	case renames(&d.pods):
		m.podNames.apply(&d.pods)
	}
	if claimsGen != m.claimsIndexed || m.claimIndex == nil {
		m.claimIndex = reused(&m.claimIndex, len(snap.Claims))
		for i, c := range snap.Claims {
			if c.Meta.Namespace == namespace {
				m.claimIndex[c.Meta.Name] = i
			}
		}
		m.claimsIndexed = claimsGen
	}
}

// nameSet is the names of a snapshot's pods, by namespace and name. Two maps of strings rather than one of
// nsName: TinyGo hashes a struct key by reflection, boxing it (and each of its strings) on every lookup.
type nameSet struct {
	byNS  map[string]map[string]bool
	valid bool // the names are those of the pods of the instance's last sync (a delta may build on them)
}

func (n *nameSet) has(k nsName) bool { return n.byNS[k.namespace][k.name] }

func (n *nameSet) add(ns, name string) {
	names := n.byNS[ns]
	if names == nil {
		names = map[string]bool{}
		n.byNS[ns] = names
	}
	names[name] = true
}

// rebuild makes the set the names of pods (the maps emptied, not made again: an instance keeps them).
func (n *nameSet) rebuild(pods []*pod) {
	if n.byNS == nil {
		n.byNS = map[string]map[string]bool{}
	}
	for _, names := range n.byNS {
		clear(names)
	}
	for _, p := range pods {
		n.add(p.Meta.Namespace, p.Meta.Name)
	}
	n.valid = true
}

// apply brings the set from the held pods to the delta's: the names of those it drops (removed or sent again)
// go, those of the pods it sends come. Names are unique in either snapshot (decode refuses a name twice), so
// a name dropped and sent again stays.
func (n *nameSet) apply(k *kindDelta[pod]) {
	for _, c := range k.dropped {
		delete(n.byNS[c.v.Meta.Namespace], c.v.Meta.Name)
	}
	for _, c := range k.sent {
		n.add(c.v.Meta.Namespace, c.v.Meta.Name)
	}
}

// renames reports whether the delta may change the set of names of its kind: it adds or removes an object,
// or sends one again under another name.
func renames[T any, PT objectPtr[T]](k *kindDelta[T]) bool {
	replaced := 0
	for _, c := range k.dropped {
		if c.next == nil {
			return true
		}
		a, b := PT(&c.v).meta(), PT(&c.next.v).meta()
		if a.Name != b.Name || a.Namespace != b.Namespace {
			return true
		}
		replaced++
	}
	return len(k.sent) != replaced
}

// podList is an empty list of pods with room for n, in the storage *buf an instance keeps (grown when short).
func podList(buf *[]*pod, n int) []*pod {
	if cap(*buf) < n {
		*buf = make([]*pod, 0, n)
	}
	return (*buf)[:0]
}

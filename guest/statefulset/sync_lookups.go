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
	return s.maps.podNames[k]
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

// index makes the instance's name indexes fit this sync's snapshot: the pods' keys again when the pods' names
// may have changed (podsRenamed), the claims' positions when the claims or the set's identity did (claimsGen,
// the retention generation, changes with either).
func (m *syncMaps) index(snap *snapshot, namespace string, podsRenamed bool, claimsGen uint64) {
	if podsRenamed || m.podNames == nil {
		m.podNames = reused(&m.podNames, len(snap.Pods))
		for _, p := range snap.Pods {
			m.podNames[key(p.Meta.Namespace, p.Meta.Name)] = true
		}
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

package world

// Watch is what one reader of the in-memory API server learns of its writes, as a controller learns of a
// real one's through an informer: the names of one kind created, changed or removed since it last took
// them. A reader that keeps what it made of each object (the engine's world view, the kubelet's binder)
// then looks again at what changed only, not at every object after every sync. Every write goes through
// put, remove or bump, or calls changed itself (the collector's deletionTimestamp in the tick model, which
// keeps the resourceVersion as the reference harness's does).
type Watch struct {
	kind  string
	names map[string]struct{}
}

// Watch starts a watch of kind; it begins with every stored name, as an informer begins with a list.
func (s *APIServer) Watch(kind string) *Watch {
	w := &Watch{kind: kind, names: make(map[string]struct{}, len(s.objs[kind]))}
	for _, n := range s.order[kind] {
		w.names[n] = struct{}{}
	}
	s.watches = append(s.watches, w)
	return w
}

// changed tells the watches of kind that the object named name was written.
func (s *APIServer) changed(kind, name string) {
	for _, w := range s.watches {
		if w.kind == kind {
			w.names[name] = struct{}{}
		}
	}
}

// take returns the names written since the last take, in natural order, and forgets them.
func (w *Watch) Take() []string {
	if len(w.names) == 0 {
		return nil
	}
	out := make([]string, 0, len(w.names))
	for n := range w.names {
		out = append(out, n)
	}
	clear(w.names)
	SortNatural(out)
	return out
}

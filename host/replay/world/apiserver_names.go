package world

import (
	"slices"
	"sort"
)

// The API server keeps each kind's names in natural order as objects come and go (a binary search and a
// copy per create or removal), rather than sorting them whenever they are listed: a replay lists the world
// at every sync, and sorting 1000 names per listing was a tenth of a 1000-pod preview's host time.

// put stores o under name: the one way an object enters the store or replaces the one stored, so that the
// name index and the watches (apiserver_watch.go) learn of every write.
func (s *APIServer) put(kind, name string, o Obj) {
	store := s.objs[kind]
	if _, ok := store[name]; !ok {
		s.order[kind] = insertName(s.order[kind], name)
	}
	store[name] = o
	s.changed(kind, name)
}

// remove takes the object named name out of the store (nothing when there is none).
func (s *APIServer) remove(kind, name string) {
	store := s.objs[kind]
	if _, ok := store[name]; !ok {
		return
	}
	delete(store, name)
	s.order[kind] = removeName(s.order[kind], name)
	s.changed(kind, name)
}

// NameIndex is the kind's names in natural order, the index itself: the caller must not change it, nor keep it
// across a write (Names is a copy for that).
func (s *APIServer) NameIndex(kind string) []string { return s.order[kind] }

// insertName adds name to names, which are in natural order and do not hold it.
func insertName(names []string, name string) []string {
	return slices.Insert(names, nameIndex(names, name), name)
}

// removeName deletes name from names, which are in natural order.
func removeName(names []string, name string) []string {
	if i := nameIndex(names, name); i < len(names) && names[i] == name {
		return slices.Delete(names, i, i+1)
	}
	return names
}

// nameIndex is where name is, or would be, in names (natural order).
func nameIndex(names []string, name string) int {
	return sort.Search(len(names), func(i int) bool { return !NaturalLess(names[i], name) })
}

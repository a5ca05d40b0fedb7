package world

import "github.com/ordinal-dev/ordinal/internal/jsonobj"

// ownerGraph is what the garbage collector knows of who owns whom, kept up to date from the API server's
// watches as kube-controller-manager's collector keeps its dependency graph from informers: a look after a
// removal visits the objects written since the last look and the dependents of the uids gone since, not every
// object of the world (a 1000-pod rollout removes a pod a few syncs apart, and looking at all 2000 pods and
// claims after each was a tenth of its host time).
type ownerGraph struct {
	watches    map[string]*Watch
	nodes      map[objKey]ownerNode
	uids       map[string]int                 // how many stored objects have each uid
	dependents map[string]map[objKey]struct{} // an owner's uid -> the objects whose references name it
	hasSet     bool                           // the set, and its uid, at the last look
	setUID     string
}

type objKey struct{ kind, name string }

// ownerNode is one object as the graph last read it: its uid and the uids its owner references name.
type ownerNode struct {
	uid    string
	owners []string
}

// collectedKinds are the kinds the collector looks at, in the order it collects them.
var collectedKinds = []string{KindClaim, KindRevision, KindPod}

// live reports whether an object of the world (or the set) had uid at the last update.
func (g *ownerGraph) live(uid string) bool {
	return g.uids[uid] > 0 || g.hasSet && uid == g.setUID
}

// orphan reports whether the graph's object k has owner references and none names a live uid: what the
// collector deletes (orphaned, read from the graph).
func (g *ownerGraph) orphan(k objKey) bool {
	n := g.nodes[k]
	for _, u := range n.owners {
		if g.live(u) {
			return false
		}
	}
	return len(n.owners) > 0
}

// update reads again what was written since the last update and returns, by kind in natural order, the
// objects whose owners may be gone since: those written, and the dependents of every uid no longer live.
// Any other object's owners are as they were at the last look, which collected the orphans it found (the
// first update reads every object: the watches begin with every name).
func (g *ownerGraph) update(s *APIServer) map[string][]string {
	if g.watches == nil {
		g.watches, g.nodes, g.uids, g.dependents = map[string]*Watch{}, map[objKey]ownerNode{}, map[string]int{}, map[string]map[objKey]struct{}{}
		for _, kind := range collectedKinds {
			g.watches[kind] = s.Watch(kind)
		}
	}
	suspects := map[objKey]struct{}{}
	var lost []string // uids that may be no longer live
	for _, kind := range collectedKinds {
		for _, n := range g.watches[kind].Take() {
			k := objKey{kind, n}
			suspects[k] = struct{}{}
			if old, ok := g.nodes[k]; ok {
				if g.uids[old.uid]--; g.uids[old.uid] == 0 {
					delete(g.uids, old.uid)
				}
				lost = append(lost, old.uid)
				for _, u := range old.owners {
					delete(g.dependents[u], k)
					if len(g.dependents[u]) == 0 {
						delete(g.dependents, u)
					}
				}
				delete(g.nodes, k)
			}
			o := s.objs[kind][n]
			if o == nil {
				continue
			}
			node := ownerNode{uid: jsonobj.GetStr(o, "metadata.uid")}
			for _, r := range jsonobj.GetArr(o, "metadata.ownerReferences") {
				node.owners = append(node.owners, jsonobj.GetStr(r, "uid"))
			}
			g.nodes[k] = node
			g.uids[node.uid]++
			for _, u := range node.owners {
				if g.dependents[u] == nil {
					g.dependents[u] = map[objKey]struct{}{}
				}
				g.dependents[u][k] = struct{}{}
			}
		}
	}
	if g.hasSet {
		lost = append(lost, g.setUID)
	}
	g.hasSet, g.setUID = s.set != nil, ""
	if s.set != nil {
		g.setUID = jsonobj.GetStr(s.set, "metadata.uid")
	}
	for _, u := range lost {
		if !g.live(u) {
			for k := range g.dependents[u] {
				suspects[k] = struct{}{}
			}
		}
	}
	out := map[string][]string{}
	for k := range suspects {
		out[k.kind] = append(out[k.kind], k.name)
	}
	for _, names := range out {
		SortNatural(names)
	}
	return out
}

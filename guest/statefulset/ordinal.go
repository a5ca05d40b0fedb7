package statefulset

import (
	"sort"

	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// podName is the name of the set's pod with the given ordinal.
func podName(setName string, n int64) string { return ordinal.Name(setName, n) }

// claimName is the name of the PVC of claim template tmpl for the pod with the given ordinal.
func claimName(tmpl, setName string, n int64) string { return ordinal.Name(tmpl+"-"+setName, n) }

func (s *statefulSet) startOrdinal() int64 { return int64(s.Start) }

// parentAndOrdinal is upstream's getParentNameAndOrdinal (internal/ordinal, shared with the host's firewall).
func parentAndOrdinal(name string) (string, int64) { return ordinal.Parse(name) }

// sortByName orders items by natural name, the same way whatever order they come in: by name first, so that
// names naturalLess cannot order (a tie such as "web-01" and "web-1", a cycle such as "web-10" < "web-3-x" <
// "web-4" < "web-10") keep an order of their own rather than the snapshot's. Plans must not depend on the order
// of the snapshot's lists (object deltas keep an instance's own order).
func sortByName[T any](items []T, name func(T) string) {
	sort.SliceStable(items, func(i, j int) bool { return name(items[i]) < name(items[j]) })
	sort.SliceStable(items, func(i, j int) bool { return naturalLess(name(items[i]), name(items[j])) })
}

// sortPodsByName is sortByName for the pods of the snapshot, without parsing names at every comparison: when
// every name has an ordinal, naturalLess is their parent and ordinal (as decoded, parentAndOrdinal), the name
// breaking ties; a host lists them in that order, so most syncs only check it.
func sortPodsByName(pods []*pod) {
	for _, p := range pods {
		if p.Ordinal < 0 {
			sortByName(pods, func(p *pod) string { return p.Meta.Name })
			return
		}
	}
	less := func(i, j int) bool {
		a, b := pods[i], pods[j]
		if a.Parent != b.Parent {
			return a.Parent < b.Parent
		}
		if a.Ordinal != b.Ordinal {
			return a.Ordinal < b.Ordinal
		}
		return a.Meta.Name < b.Meta.Name
	}
	if !sort.SliceIsSorted(pods, less) {
		sort.Slice(pods, less)
	}
}

// naturalLess orders names the way the oracle canonicalises map-ordered writes: "x-2" before "x-10".
func naturalLess(a, b string) bool { return ordinal.Less(a, b) }

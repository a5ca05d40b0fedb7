package statefulset

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Names naturalLess cannot order on its own — ties ("web-01", "web-1") and cycles ("web-10" < "web-3-x 1" <
// "web-4" < "web-10") — still get one order whatever order the snapshot lists them in (object deltas keep an
// instance's order, not the host's), and names it can order get naturalLess's.
func TestNameOrderDoesNotDependOnListOrder(t *testing.T) {
	for _, names := range [][]string{
		{"web-10", "web-3-x3 1", "web-4", "web-9", "web-0"},          // a cycle
		{"web-01", "web-1", "web-2", "web-10", "web-001", "web-0"},   // ties, every name with an ordinal
		{"web-01", "web-1", "x", "web-3-x", "db-0", "db-10", "db-9"}, // both
	} {
		r := rand.New(rand.NewPCG(1, uint64(len(names))))
		var want, wantPods []string
		for range 200 {
			r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			got := slices.Clone(names)
			sortByName(got, func(s string) string { return s })
			pods := make([]*pod, len(names))
			for i, n := range names {
				pods[i] = &pod{Meta: objectMeta{Name: n}}
				pods[i].Parent, pods[i].Ordinal = parentAndOrdinal(n)
			}
			sortPodsByName(pods)
			var gotPods []string
			for _, p := range pods {
				gotPods = append(gotPods, p.Meta.Name)
			}
			if want == nil {
				want, wantPods = got, gotPods
			}
			if !slices.Equal(got, want) || !slices.Equal(gotPods, wantPods) {
				t.Fatalf("%q: sorted %q and %q (pods %q and %q) from two orders of one list", names, want, got, wantPods, gotPods)
			}
		}
		if !slices.Equal(want, wantPods) {
			t.Errorf("pods sort as %q, names as %q", wantPods, want)
		}
	}
	// where naturalLess is an order, it is the order
	got := []string{"web-10", "web-2", "web-1", "db-3"}
	sortByName(got, func(s string) string { return s })
	if want := []string{"db-3", "web-1", "web-2", "web-10"}; !slices.Equal(got, want) {
		t.Errorf("sorted %q, want %q", got, want)
	}
}

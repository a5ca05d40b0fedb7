package world

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// The API server's name index stays the names sorted in natural order under any creates and removals, and
// a watch names every object written since it was last taken (world_view.go relies on both).
func TestNameIndexStaysSorted(t *testing.T) {
	api := NewAPIServer("default", NewClock(time.Unix(0, 0)))
	w := api.Watch(KindClaim)
	r := rand.New(rand.NewSource(1))
	// names that natural order puts apart from string order, and some only leading zeros tell apart
	name := func() string {
		switch r.Intn(4) {
		case 0:
			return fmt.Sprintf("web-%d", r.Intn(40))
		case 1:
			return fmt.Sprintf("web-0%d", r.Intn(5))
		case 2:
			return fmt.Sprintf("data-web-%d-%d", r.Intn(3), r.Intn(12))
		}
		return fmt.Sprintf("web-%db", r.Intn(12))
	}
	written := map[string]bool{}
	for i := 0; i < 3000; i++ {
		n := name()
		switch {
		case api.Get(KindClaim, n) == nil:
			if err := api.Create(KindClaim, Obj{"metadata": Obj{"name": n}}); err != nil {
				t.Fatal(err)
			}
		case r.Intn(2) == 0:
			if err := api.Delete(KindClaim, n, ""); err != nil {
				t.Fatal(err)
			}
		default:
			continue
		}
		written[n] = true
		got := api.Names(KindClaim)
		want := slices.Collect(maps.Keys(api.objs[KindClaim]))
		SortNatural(want)
		if !slices.Equal(got, want) {
			t.Fatalf("after %d writes the index is %v, want %v", i+1, got, want)
		}
		if !slices.IsSortedFunc(got, func(a, b string) int {
			if NaturalLess(a, b) {
				return -1
			}
			return 1
		}) {
			t.Fatalf("not in natural order: %v", got)
		}
		if r.Intn(10) == 0 {
			want := slices.Collect(maps.Keys(written))
			SortNatural(want)
			if got := w.Take(); !slices.Equal(got, want) {
				t.Fatalf("the watch took %v, want %v", got, want)
			}
			clear(written)
		}
	}
}

// NaturalLess is a total order: of two different names exactly one comes first.
func TestNaturalLessIsTotal(t *testing.T) {
	names := []string{"web-1", "web-01", "web-001", "web-1a", "web-01a", "web-10", "web-2", "web", "web-", "1", "01", "a1b02", "a01b2"}
	for _, a := range names {
		for _, b := range names {
			if ab, ba := NaturalLess(a, b), NaturalLess(b, a); a != b && ab == ba || a == b && ab {
				t.Errorf("NaturalLess(%q, %q) = %t, NaturalLess(%q, %q) = %t", a, b, ab, b, a, ba)
			}
		}
	}
}

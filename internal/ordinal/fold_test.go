package ordinal

import (
	"slices"
	"testing"
)

func TestFold(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"web-0"}, []string{"web-0"}},
		{[]string{"web-0", "web-1"}, []string{"web-0", "web-1"}}, // two stay two
		{[]string{"web-0", "web-1", "web-2"}, []string{"web-0..web-2"}},
		{[]string{"web-4", "web-3", "web-2", "web-1"}, []string{"web-4..web-1"}},
		// a gap, another parent, a name that is no member, a turn: each ends a run
		{[]string{"web-0", "web-1", "web-2", "web-4", "web-5", "web-6", "db-7", "x", "web-8", "web-9", "web-10", "web-9"},
			[]string{"web-0..web-2", "web-4..web-6", "db-7", "x", "web-8..web-10", "web-9"}},
		{[]string{"data-web-2", "data-web-3", "data-web-4"}, []string{"data-web-2..data-web-4"}},
	} {
		if got := Fold(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Fold(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRuns(t *testing.T) {
	type p struct {
		o int64
		s string
	}
	in := []p{{0, "a"}, {1, "a"}, {2, "b"}, {4, "b"}, {5, "b"}, {6, "b"}}
	got := Runs(in, func(x p) int64 { return x.o }, func(a, b p) bool { return a.s == b.s })
	want := [][2]int{{0, 2}, {2, 3}, {3, 6}} // a state change and a gap each end a run
	if !slices.Equal(got, want) {
		t.Errorf("Runs = %v, want %v", got, want)
	}
	if Runs([]p{}, func(x p) int64 { return x.o }, func(a, b p) bool { return true }) != nil {
		t.Error("no items, runs")
	}
}

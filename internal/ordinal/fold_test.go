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

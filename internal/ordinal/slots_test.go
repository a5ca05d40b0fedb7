package ordinal

import (
	"math/rand"
	"strings"
	"testing"
)

// TestSlotsAgreeWithEnumeration checks At, Index, Contains, Below, End and Reserved against the plain
// definition (walk the ordinals from Start, skip the reserved ones) on random sets and reservations.
func TestSlotsAgreeWithEnumeration(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 2000; iter++ {
		start, replicas := int64(rng.Intn(5)), int64(rng.Intn(8))
		var rs []Range
		for k := rng.Intn(4); k > 0; k-- {
			a := int64(rng.Intn(15))
			rs = append(rs, Range{a, a + int64(rng.Intn(3))})
		}
		reserved := func(n int64) bool {
			for _, r := range rs {
				if r.First <= n && n <= r.Last {
					return true
				}
			}
			return false
		}
		var want []int64
		for n := start; int64(len(want)) < replicas; n++ {
			if !reserved(n) {
				want = append(want, n)
			}
		}
		s := NewSlots(start, replicas, rs)
		for i, n := range want {
			if got := s.At(i); got != n {
				t.Fatalf("start %d replicas %d reserved %v: At(%d) = %d, want %d", start, replicas, rs, i, got, n)
			}
		}
		end := start
		if len(want) > 0 {
			end = want[len(want)-1] + 1
		}
		if s.End() != end {
			t.Fatalf("start %d replicas %d reserved %v: End = %d, want %d", start, replicas, rs, s.End(), end)
		}
		skips := false
		for n := start; n < end; n++ {
			skips = skips || reserved(n)
		}
		if s.Reserved() != skips {
			t.Fatalf("start %d replicas %d reserved %v: Reserved = %v, want %v", start, replicas, rs, s.Reserved(), skips)
		}
		for n := int64(-1); n < 30; n++ {
			wantIdx, below := -1, 0
			for i, m := range want {
				if m == n {
					wantIdx = i
				}
				if m < n {
					below++
				}
			}
			i, ok := s.Index(n)
			if ok != (wantIdx >= 0) || (ok && i != wantIdx) || s.Contains(n) != ok {
				t.Fatalf("start %d replicas %d reserved %v: Index(%d) = %d, %v; want %d", start, replicas, rs, n, i, ok, wantIdx)
			}
			if got := s.Below(n); got != below {
				t.Fatalf("start %d replicas %d reserved %v: Below(%d) = %d, want %d", start, replicas, rs, n, got, below)
			}
		}
	}
}

func TestParseReserved(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Range
		err  string
	}{
		{"", nil, ""},
		{" ", nil, ""},
		{"1", []Range{{1, 1}}, ""},
		{"1,4-6", []Range{{1, 1}, {4, 6}}, ""},
		{" 4-6 , 1 ", []Range{{4, 6}, {1, 1}}, ""},
		{"0-2147483647", []Range{{0, 2147483647}}, ""},
		{"2147483648", nil, `"2147483648" is not`},
		{"6-4", nil, `"6-4" is not`},
		{"-1", nil, `"-1" is not`},
		{"1,,2", nil, `"" is not`},
		{"1,", nil, `"" is not`},
		{"+1", nil, `"+1" is not`},
		{"1-2-3", nil, `"1-2-3" is not`},
		{"a", nil, `"a" is not`},
		{strings.Repeat("1,", MaxReservedItems) + "1", nil, "more than 1000 items"},
	} {
		got, err := ParseReserved(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseReserved(%q) error = %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("ParseReserved(%q) = %v, %v; want %v", c.in, got, err, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("ParseReserved(%q) = %v, want %v", c.in, got, c.want)
			}
		}
	}
}

// A reservation of every int32 ordinal costs one range, not two billion entries.
func TestSlotsHugeRangeIsCheap(t *testing.T) {
	rs, err := ParseReserved("0-2147483647")
	if err != nil {
		t.Fatal(err)
	}
	s := NewSlots(0, 3, rs)
	if s.At(0) != 2147483648 || s.Contains(5) || !s.Reserved() {
		t.Fatalf("At(0) = %d, Contains(5) = %v", s.At(0), s.Contains(5))
	}
}

package ordinal

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// Slots maps a set's replica slots to ordinals. Upstream's slot i is ordinal Start+i; with the extension
// reserve-ordinals, slot i is the i-th ordinal from Start that is not reserved, so Replicas counts the
// ordinals that are not. The guest places pods by it; the host's firewall, previews and status read the
// set's members through it, so none of them can disagree about which ordinals a set has.
type Slots struct {
	Start, Replicas int64
	reserved        []Range // sorted, disjoint, not adjacent, each within [Start, ∞)
}

// Range is the ordinals First..Last, both included.
type Range struct{ First, Last int64 }

// MaxReservedItems bounds a reservation list, so a slot lookup stays cheap whatever the annotation says.
const MaxReservedItems = 1000

// NewSlots is the slots of a set with the given spec.ordinals.start and spec.replicas, skipping the
// reserved ranges (nil: upstream's).
func NewSlots(start, replicas int64, reserved []Range) Slots {
	s := Slots{Start: start, Replicas: replicas}
	rs := make([]Range, 0, len(reserved))
	for _, r := range reserved {
		if r.First < start {
			r.First = start
		}
		if r.First <= r.Last {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].First < rs[j].First })
	for _, r := range rs {
		if n := len(s.reserved); n > 0 && r.First <= s.reserved[n-1].Last+1 {
			if r.Last > s.reserved[n-1].Last {
				s.reserved[n-1].Last = r.Last
			}
			continue
		}
		s.reserved = append(s.reserved, r)
	}
	return s
}

// At is the ordinal of slot i (0 <= i < Replicas).
func (s Slots) At(i int) int64 {
	n := s.Start + int64(i)
	for _, r := range s.reserved {
		if r.First > n {
			break
		}
		n += r.Last - r.First + 1
	}
	return n
}

// Index is the slot of ordinal n; ok is false for an ordinal that is not one of the set's (below Start,
// reserved, or at or past End).
func (s Slots) Index(n int64) (int, bool) {
	if n < s.Start {
		return 0, false
	}
	i := n - s.Start
	for _, r := range s.reserved {
		if r.First > n {
			break
		}
		if n <= r.Last {
			return 0, false
		}
		i -= r.Last - r.First + 1
	}
	return int(i), i < s.Replicas
}

// Contains reports whether ordinal n is one of the set's.
func (s Slots) Contains(n int64) bool {
	_, ok := s.Index(n)
	return ok
}

// Below is the number of the set's ordinals lower than n: the first slot at or above ordinal n.
func (s Slots) Below(n int64) int {
	c := int64(0)
	if n > s.Start {
		c = n - s.Start
		for _, r := range s.reserved {
			if r.First >= n {
				break
			}
			c -= min(r.Last, n-1) - r.First + 1
		}
	}
	return int(min(c, s.Replicas))
}

// End is one past the highest ordinal of the set (Start for a set of no replicas).
func (s Slots) End() int64 {
	if s.Replicas <= 0 {
		return s.Start
	}
	return s.At(int(s.Replicas-1)) + 1
}

// Reserved reports whether the slots skip any ordinal below End.
func (s Slots) Reserved() bool { return len(s.reserved) > 0 && s.reserved[0].First < s.End() }

// ParseReserved reads the reserve-ordinals annotation: a comma-separated list of ordinals ("1") and
// ranges ("4-6"), each between 0 and 2147483647, at most MaxReservedItems of them. An empty value
// reserves nothing.
func ParseReserved(v string) ([]Range, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	items := strings.Split(v, ",")
	if len(items) > MaxReservedItems {
		return nil, errors.New("more than " + strconv.Itoa(MaxReservedItems) + " items")
	}
	out := make([]Range, 0, len(items))
	for _, item := range items {
		item = strings.TrimSpace(item)
		first, last, isRange := strings.Cut(item, "-")
		a, errA := parseOrdinal(first)
		b := a
		var errB error
		if isRange {
			b, errB = parseOrdinal(last)
		}
		if errA != nil || errB != nil || b < a {
			return nil, errors.New(strconv.Quote(item) + " is not an ordinal or a range FIRST-LAST (FIRST <= LAST) of ordinals from 0 to 2147483647")
		}
		out = append(out, Range{a, b})
	}
	return out, nil
}

// parseOrdinal reads decimal digits only (no sign, no spaces) as an int32 ordinal.
func parseOrdinal(s string) (int64, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("not digits")
		}
	}
	return strconv.ParseInt(s, 10, 32)
}

// ReservedSlots is the slots of a set whose reserve-ordinals annotation is v: ParseReserved's, refused
// when the reservation would push a replica past the highest ordinal a pod name can carry (upstream
// reads a larger one as no ordinal, so the pod would never be counted as the set's).
func ReservedSlots(start, replicas int64, v string) (Slots, error) {
	rs, err := ParseReserved(v)
	if err != nil {
		return Slots{}, err
	}
	s := NewSlots(start, replicas, rs)
	if s.End()-1 > maxOrdinal {
		return Slots{}, errors.New("it leaves fewer than " + strconv.FormatInt(replicas, 10) + " ordinals from " +
			strconv.FormatInt(start, 10) + " to " + strconv.Itoa(maxOrdinal) + " for the replicas")
	}
	return s, nil
}

// maxOrdinal is the highest ordinal upstream reads from a pod name (strconv.ParseInt(..., 10, 32)).
const maxOrdinal = 1<<31 - 1

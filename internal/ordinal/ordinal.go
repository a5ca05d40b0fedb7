// Package ordinal is the one place that reads a StatefulSet member's name the way the upstream v1.37
// controller does (getParentNameAndOrdinal: the regexp `(.*)-([0-9]+)$`, the digits parsed with
// strconv.ParseInt(..., 10, 32)). The guest uses it to decide membership and order; the host's firewall
// uses it to judge the guest's plans, so the two can never disagree about a name.
package ordinal

import (
	"sort"
	"strconv"
)

// Parse splits a name "<parent>-<ordinal>". An ordinal that does not fit an int32 is -1 while the parent
// still counts (upstream adopts such a pod and then deletes it as out of range); a name without the
// "-<digits>" suffix has parent "" and ordinal -1.
func Parse(name string) (parent string, ordinal int64) {
	end := len(name)
	i := end
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == end || i == 0 || name[i-1] != '-' {
		return "", -1
	}
	// '.' in the pattern does not match '\n': the match starts after the last newline.
	start := 0
	for j := i - 1; j > 0; j-- {
		if name[j-1] == '\n' {
			start = j
			break
		}
	}
	parent = name[start : i-1]
	n, err := strconv.ParseInt(name[i:], 10, 32)
	if err != nil {
		return parent, -1
	}
	return parent, n
}

// Name is the name upstream gives the member of parent with the given ordinal ("%s-%d").
func Name(parent string, ordinal int64) string {
	return parent + "-" + strconv.FormatInt(ordinal, 10)
}

// IsName reports whether name is Name(parent, ordinal), without building it (a sync asks for every pod).
func IsName(name, parent string, ordinal int64) bool {
	if ordinal < 0 {
		return name == Name(parent, ordinal)
	}
	var digits [20]byte
	i := len(digits)
	for n := ordinal; ; n /= 10 {
		i--
		digits[i] = byte('0' + n%10)
		if n < 10 {
			break
		}
	}
	d := digits[i:]
	if len(name) != len(parent)+1+len(d) || name[:len(parent)] != parent || name[len(parent)] != '-' {
		return false
	}
	for j, c := range d {
		if name[len(parent)+1+j] != c {
			return false
		}
	}
	return true
}

// Less orders names naturally, the way the oracle canonicalises map-ordered writes: "x-2" before "x-10".
func Less(a, b string) bool {
	pa, oa := Parse(a)
	pb, ob := Parse(b)
	if oa >= 0 && ob >= 0 {
		if pa == pb {
			return oa < ob
		}
		return pa < pb
	}
	return a < b
}

// Of is name's ordinal as a member of parent; ok is false for a name that is not one of its members.
func Of(name, parent string) (int, bool) {
	p, n := Parse(name)
	return int(n), n >= 0 && p == parent
}

// Ordinal is the ordinal of a member name, whatever its parent; ok is false where upstream reads -1.
func Ordinal(name string) (int, bool) {
	_, n := Parse(name)
	return int(n), n >= 0
}

// Sort sorts names in Less order.
func Sort(names []string) {
	sort.Slice(names, func(i, j int) bool { return Less(names[i], names[j]) })
}

package world

import "sort"

// NaturalLess orders names with runs of digits compared as numbers, so web-2 comes before web-10. Names
// that only leading zeros tell apart (web-01, web-1) are ordered as strings: the order is total, so a list
// kept in it as names come and go is the list sorted (apiserver_names.go).
func NaturalLess(a, b string) bool {
	if less, tie := naturalCompare(a, b); !tie {
		return less
	}
	return a < b
}

// naturalCompare is NaturalLess without the tie-break: tie when the names differ only in leading zeros.
func naturalCompare(a, b string) (less, tie bool) {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			na, ra := splitDigits(a)
			nb, rb := splitDigits(b)
			na, nb = trimZeros(na), trimZeros(nb)
			if len(na) != len(nb) {
				return len(na) < len(nb), false
			}
			if na != nb {
				return na < nb, false
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0], false
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b), len(a) == len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func splitDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

// SortNatural sorts names in NaturalLess order: the order the in-memory API server lists them in.
func SortNatural(names []string) {
	sort.Slice(names, func(i, j int) bool { return NaturalLess(names[i], names[j]) })
}

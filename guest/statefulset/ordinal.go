package statefulset

import "strconv"

// parentAndOrdinal splits a pod name "<parent>-<ordinal>" the way upstream's `(.*)-([0-9]+)$`
// regular expression does: the parent is everything before the last '-' that is followed only
// by digits. An ordinal that does not fit an int32 is -1 (the parent still counts); a name
// without the suffix has parent "" and ordinal -1.
func parentAndOrdinal(name string) (string, int64) {
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
	parent := name[start : i-1]
	n, err := strconv.ParseInt(name[i:], 10, 32)
	if err != nil {
		return parent, -1
	}
	return parent, n
}

// podName is the name of the set's pod with the given ordinal.
func podName(setName string, ordinal int64) string {
	return setName + "-" + strconv.FormatInt(ordinal, 10)
}

// claimName is the name of the PVC of claim template tmpl for the pod with the given ordinal.
func claimName(tmpl, setName string, ordinal int64) string {
	return tmpl + "-" + setName + "-" + strconv.FormatInt(ordinal, 10)
}

func (s *statefulSet) startOrdinal() int64 { return int64(s.Start) }
func (s *statefulSet) endOrdinal() int64   { return int64(s.Start) + int64(s.Replicas) - 1 }

// inRange reports whether ordinal is one of the set's replica ordinals.
func (s *statefulSet) inRange(ordinal int64) bool {
	return ordinal >= s.startOrdinal() && ordinal <= s.endOrdinal()
}

// naturalLess orders names the way the oracle canonicalises map-ordered writes: "x-2" before "x-10".
func naturalLess(a, b string) bool {
	pa, oa := parentAndOrdinal(a)
	pb, ob := parentAndOrdinal(b)
	if oa >= 0 && ob >= 0 {
		if pa == pb {
			return oa < ob
		}
		return pa < pb
	}
	return a < b
}

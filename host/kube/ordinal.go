package kube

import "strconv"

// ParentAndOrdinal splits a StatefulSet pod's name as upstream's getParentNameAndOrdinal does (the
// pattern "(.*)-([0-9]+)$", the number an int32): "web-10" is ("web", 10). ok is false for any name the
// upstream controller gives ordinal -1 ("web", "web-x", "web-+1", "web-99999999999").
func ParentAndOrdinal(name string) (parent string, ordinal int, ok bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i == 0 || name[i-1] != '-' {
		return "", -1, false
	}
	n, err := strconv.ParseInt(name[i:], 10, 32)
	if err != nil {
		return name[:i-1], -1, false
	}
	return name[:i-1], int(n), true
}

// OrdinalOf is the ordinal of a pod of the named set, ok false for a name that is not one of its pods'.
func OrdinalOf(name, set string) (int, bool) {
	parent, o, ok := ParentAndOrdinal(name)
	return o, ok && parent == set
}

// Ordinal is a StatefulSet pod's ordinal, whatever its set (ParentAndOrdinal without the parent).
func Ordinal(name string) (int, bool) {
	_, o, ok := ParentAndOrdinal(name)
	return o, ok
}

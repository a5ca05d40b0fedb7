package statefulset

import "github.com/ordinal-dev/ordinal/internal/ordinal"

// podName is the name of the set's pod with the given ordinal.
func podName(setName string, n int64) string { return ordinal.Name(setName, n) }

// claimName is the name of the PVC of claim template tmpl for the pod with the given ordinal.
func claimName(tmpl, setName string, n int64) string { return ordinal.Name(tmpl+"-"+setName, n) }

func (s *statefulSet) startOrdinal() int64 { return int64(s.Start) }

// parentAndOrdinal is upstream's getParentNameAndOrdinal (internal/ordinal, shared with the host's firewall).
func parentAndOrdinal(name string) (string, int64) { return ordinal.Parse(name) }

// naturalLess orders names the way the oracle canonicalises map-ordered writes: "x-2" before "x-10".
func naturalLess(a, b string) bool { return ordinal.Less(a, b) }

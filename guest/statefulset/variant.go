//go:build !ordinal_gate_maxunavailable_off

package statefulset

// The shipped module: upstream v1.37's default for MaxUnavailableStatefulSet (on).
// variant_maxunavailable_off.go is a test variant with another default (see there).
const (
	defaultMaxUnavailable = true
	moduleVariant         = ""
)

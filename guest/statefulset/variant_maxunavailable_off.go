//go:build ordinal_gate_maxunavailable_off

package statefulset

// A test variant of the module (build tag ordinal_gate_maxunavailable_off): the same logic with
// MaxUnavailableStatefulSet off by default, as a cluster that disables the gate would run it. It is
// a different but valid behaviour (spec.updateStrategy.rollingUpdate.maxUnavailable is ignored:
// one pod at a time) that still passes every conformance case, since the host's conformance gate
// runs the cases with the gates the reference ran them with (internal/conformance.PinFeatures).
// host/controller/testdata/modules/build.sh builds it for the hot-swap tests; it describes itself
// as moduleVersion "<version>+maxunavailable-off".
const (
	defaultMaxUnavailable = false
	moduleVariant         = "+maxunavailable-off"
)

package statefulset

// Feature gates that change what one sync does, with their Kubernetes v1.37 defaults.
const (
	GateMaxUnavailableStatefulSet             = "MaxUnavailableStatefulSet"
	GateStatefulSetRecreateStrategy           = "StatefulSetRecreateStrategy"
	GateStatefulSetSemanticRevisionComparison = "StatefulSetSemanticRevisionComparison"
	GateStaleControllerConsistencyStatefulSet = "StaleControllerConsistencyStatefulSet"
)

// gateDefaults lists the understood gates in a fixed order (describe output order).
var gateDefaults = [...]struct {
	name string
	def  bool
}{
	{GateMaxUnavailableStatefulSet, defaultMaxUnavailable},
	{GateStatefulSetRecreateStrategy, false},
	{GateStatefulSetSemanticRevisionComparison, true},
	{GateStaleControllerConsistencyStatefulSet, true},
}

// Features is the effective gate set of one reconcile.
type Features struct {
	MaxUnavailable             bool
	RecreateStrategy           bool
	SemanticRevisionComparison bool
	StaleControllerConsistency bool
}

// DefaultFeatures returns the v1.37 defaults (MaxUnavailableStatefulSet: see variant.go).
func DefaultFeatures() Features {
	return Features{MaxUnavailable: defaultMaxUnavailable, SemanticRevisionComparison: true, StaleControllerConsistency: true}
}

// set applies one override; false when the gate is unknown.
func (f *Features) set(name string, on bool) bool {
	switch name {
	case GateMaxUnavailableStatefulSet:
		f.MaxUnavailable = on
	case GateStatefulSetRecreateStrategy:
		f.RecreateStrategy = on
	case GateStatefulSetSemanticRevisionComparison:
		f.SemanticRevisionComparison = on
	case GateStaleControllerConsistencyStatefulSet:
		// A single snapshot is consistent by construction: the gate only delays syncs in a
		// running controller, so it does not change the plan.
		f.StaleControllerConsistency = on
	default:
		return false
	}
	return true
}

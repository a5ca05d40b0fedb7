package replay

import "fmt"

// validateStatefulSet refuses a StatefulSet the API server (v1.37 ValidateStatefulSetSpec) would refuse,
// for the fields a replay depends on, with the API server's message. Without it, ordinals.start -5 under
// Parallel made the replay create the same claim twice.
func validateStatefulSet(o Obj) error {
	name := getStr(o, "metadata.name")
	invalid := func(path string, v any, msg string) error {
		return apiErr("Invalid", "StatefulSet.apps %q is invalid: %s: Invalid value: %v: %s", name, path, v, msg)
	}
	for _, path := range []string{"spec.replicas", "spec.ordinals.start", "spec.minReadySeconds", "spec.revisionHistoryLimit"} {
		if v, ok := getInt(o, path); ok && v < 0 {
			return invalid(path, v, "must be greater than or equal to 0")
		}
	}
	return nil
}

// nonNegative refuses a negative time in a scenario: every time there is an offset or a delay.
func nonNegative(d *Duration, path string) error {
	if d != nil && *d < 0 {
		return fmt.Errorf("%s: %s is negative; times in a scenario are offsets and delays", path, d)
	}
	return nil
}

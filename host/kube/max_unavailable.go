package kube

import "k8s.io/apimachinery/pkg/util/intstr"

// MaxUnavailable is upstream's getStatefulSetMaxUnavailable: a rolling update's maxUnavailable, an integer
// or a percentage of replicas rounded down, at least 1; 1 when unset (nil).
func MaxUnavailable(v *intstr.IntOrString, replicas int32) int {
	if v == nil {
		return 1
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, int(replicas), false)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

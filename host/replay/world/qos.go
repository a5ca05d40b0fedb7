package world

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// podQOS is the QoS class the API server records in a new pod's status (the pod strategy's
// PrepareForCreate): BestEffort with no positive cpu or memory request or limit anywhere; Guaranteed when
// every container (init containers included) limits both cpu and memory and the summed requests equal
// the summed limits; Burstable otherwise. Pod-level resources are not modelled.
func podQOS(spec Obj) string {
	requests := map[string]resource.Quantity{}
	limits := map[string]resource.Quantity{}
	guaranteed := true
	add := func(sum map[string]resource.Quantity, list Obj) (found map[string]bool) {
		found = map[string]bool{}
		for name, v := range list {
			if name != "cpu" && name != "memory" {
				continue
			}
			s, _ := v.(string)
			q, err := resource.ParseQuantity(s)
			if err != nil || q.Sign() <= 0 {
				continue
			}
			found[name] = true
			if prev, ok := sum[name]; ok {
				q.Add(prev)
			}
			sum[name] = q
		}
		return found
	}
	for _, key := range []string{"containers", "initContainers"} {
		for _, c := range jsonobj.GetArr(spec, key) {
			co, _ := c.(Obj)
			add(requests, jsonobj.GetObj(co, "resources.requests"))
			if lim := add(limits, jsonobj.GetObj(co, "resources.limits")); !lim["cpu"] || !lim["memory"] {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return "BestEffort"
	}
	for name, req := range requests {
		if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
			guaranteed = false
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return "Guaranteed"
	}
	return "Burstable"
}

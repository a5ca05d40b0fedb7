package kube

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// canonicalQuantity rewrites o[key], a resource quantity in any spelling the API accepts ("0.5", 1,
// "1024Mi"), into the canonical form the API server stores and returns ("500m", "1", "1Gi"): the same
// template spelled two ways must hash to the same revision, as on a real cluster. A value that is not a
// quantity is left for validation to refuse.
func canonicalQuantity(o jsonobj.Obj, key string) {
	if q, ok := jsonQuantity(o[key]); ok {
		o[key] = q.String()
	}
}

// jsonQuantity reads a resource quantity as generic JSON holds it: a string or a number, as the API accepts.
func jsonQuantity(v any) (resource.Quantity, bool) {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case json.Number:
		s = v.String()
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

// canonicalQuantities canonicalises every value of a resource list (requests, limits, overhead).
func canonicalQuantities(list jsonobj.Obj) {
	for k := range list {
		canonicalQuantity(list, k)
	}
}

// canonicalResources canonicalises the requests and limits of a resources object (a container's, a
// pod's, a claim's).
func canonicalResources(resources jsonobj.Obj) {
	canonicalQuantities(jsonobj.GetObj(resources, "requests"))
	canonicalQuantities(jsonobj.GetObj(resources, "limits"))
}

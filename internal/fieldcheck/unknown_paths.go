package fieldcheck

import (
	"reflect"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// maxUnknown is how many unknown fields sigs.k8s.io/json reports of one document at most.
const maxUnknown = 100

// unknownPaths are the paths of the keys of the value t starts with (valid text) that are no field of typ,
// named and ordered as sigs.k8s.io/json's strict decoding names them (each once, at most maxUnknown): what
// Check reports of a document that decodes. It is for one that does not (a string where a list belongs):
// the decoder reports no field of it then, so an unknown field beside a wrong value would pass
// --validate=strict unseen, and be carried into what the module writes.
func unknownPaths(t jsonv.Text, typ reflect.Type) []string {
	var paths []string
	seen := map[string]bool{}
	w := fieldWalk{unknown: func(at *fieldPath) bool {
		if p := at.String(); len(paths) < maxUnknown && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
		return true
	}}
	w.walk(t, typ, nil)
	return paths
}

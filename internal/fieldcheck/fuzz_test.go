package fieldcheck

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Whatever the document, nothing panics; a JSON document without the fields Check found holds none.
func FuzzCheckDrop(f *testing.F) {
	for _, s := range []string{
		`{"spec":{"nodeNme":"a","containers":[{"name":"a","imagee":"x"}]},"metadata":{"lables":{"a":"b"}}}`,
		`{"spec":{"containers":[{},{"imagee":1,"imagee":2}]}, "x":[1,2,{"y":"\"}"}]}`,
		`{"spec":{"x":1`, `[`, `"`, `{"a":}`, ``, `null`, `{"spec":{"overhead":{"cpu":"1"}},"status":{"x":null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var s Shapes
		us, err := s.Check(doc, (*corev1.Pod)(nil)) // as host/kube calls it: a Pod only for a shape it decodes
		us2, err2 := Check(doc, &corev1.Pod{})
		if (err == nil) != (err2 == nil) || len(us) != len(us2) {
			t.Fatalf("Shapes.Check %v %v, Check %v %v", us, err, us2, err2)
		}
		out := Drop(doc, In(us, "x")) // paths of another document: nothing to find, nothing to break
		_ = out
		out = Drop(doc, us)
		if err == nil && json.Valid(doc) {
			if !json.Valid(out) {
				t.Fatalf("Drop(%s) = %s: not JSON", doc, out)
			}
			if left, err := Check(out, &corev1.Pod{}); err != nil || len(left) > 0 {
				// a key whose path cannot be followed (a dotted unknown key under a known one) stays
				for _, u := range left {
					if u.keys != nil {
						t.Fatalf("Drop(%s) = %s left %v (%v)", doc, out, left, err)
					}
				}
			}
		}
	})
}

package fieldcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
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

// CheckValid reads a value where it lies in valid text that goes on past it, as a snapshot's pods lie in
// their list: it finds where the value ends and the fields Check finds in it alone, whether or not the
// Shapes saw the same shape before.
func FuzzCheckValid(f *testing.F) {
	for _, s := range []string{
		`{"spec":{"nodeNme":"a","containers":[{"name":"a","imagee":"x"}]},"metadata":{"lables":{"a":"b"}}}`,
		`{"spec":{"containers":[{},{"imagee":1,"imagee":2}]}, "x":[1,2,{"y":"\"}"}]}`,
		`{ "metadata" : { "name" : "a\u0062" } , "status" : { "x" : null } }`, `{}`, `"s"`, `-1.5e3`, `[ ]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if _, err := jsonv.Validate(doc); err != nil {
			return // CheckValid reads only text jsonv.Validate accepted
		}
		value := bytes.TrimSpace(doc)
		list, err := jsonv.Validate([]byte("[" + string(value) + " , {\"spec\":{}} ]"))
		if err != nil {
			t.Fatalf("%s in a list: %v", value, err)
		}
		want, wantErr := Check(value, &corev1.Pod{})
		var s Shapes
		for round := range 2 { // the second time, the shape may be known clean
			us, end, err := s.CheckValid(list[1:], (*corev1.Pod)(nil))
			if end != len(value) {
				t.Fatalf("%s: end %d, want %d", value, end, len(value))
			}
			if (err == nil) != (wantErr == nil) || fmt.Sprint(us) != fmt.Sprint(want) {
				t.Fatalf("%s, round %d: CheckValid %v %v, Check %v %v", value, round, us, err, want, wantErr)
			}
		}
	})
}

package fieldcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
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
		us2 := judged(doc)
		if len(us) != len(us2) { // err is Check's only for a document decoded (not for one allKnown cleared)
			t.Fatalf("Shapes.Check %v %v, Check %v", us, err, us2)
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
		want := judged(value)
		var s Shapes
		for round := range 2 { // the second time, the shape may be known clean
			us, end, err := s.CheckValid(list[1:], (*corev1.Pod)(nil))
			if end != len(value) {
				t.Fatalf("%s: end %d, want %d", value, end, len(value))
			}
			if fmt.Sprint(us) != fmt.Sprint(want) {
				t.Fatalf("%s, round %d: CheckValid %v %v, Check %v", value, round, us, err, want)
			}
		}
	})
}

// One Shapes, read by Check and by CheckValid in any order (host/kube's FieldChecker serves both), takes a
// document for clean only when it is: the shapes of two documents with other keys differ, and the two
// walks write theirs differently (CheckValid with the colon and blanks after each key) so that neither
// stream reads as the other's.
func FuzzShapesShared(f *testing.F) {
	for _, s := range [][2]string{
		{`{"spec":{}}`, `{"spec" : {}}`},
		{`{"spec":{}}`, `{"spek":{}}`},
		{`{"spec":{"x":1}}`, `{"spec":{"x" :1}}`},
		{`{"a\":":1}`, `{"a\"":1}`},
		{`{"spec":{},"x":1}`, `{ "spec" :{ } , "x" : 1 }`},
		{`{"metadata":{"name":"a"}}`, `{"metadata":{"name":"a"},"metadata":{"nme":1}}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	// check is Check (valid false) or CheckValid of an object
	check := func(s *Shapes, doc []byte, valid bool) []Unknown {
		if valid {
			us, _, _ := s.CheckValid(jsonv.Text(doc), (*corev1.Pod)(nil))
			return us
		}
		us, _ := s.Check(doc, (*corev1.Pod)(nil))
		return us
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
		for _, doc := range [][]byte{a, b} {
			if text, err := jsonv.Validate(doc); err != nil || text.Kind() != jsonv.Object {
				return // CheckValid reads objects in valid text: a snapshot's pods
			}
		}
		want := judged(b)
		for _, firstValid := range []bool{false, true} {
			for _, secondValid := range []bool{false, true} {
				var s Shapes
				check(&s, a, firstValid)
				if us := check(&s, b, secondValid); fmt.Sprint(us) != fmt.Sprint(want) {
					t.Fatalf("after %s (CheckValid: %v), %s (CheckValid: %v) has %v, Check finds %v", a, firstValid, b, secondValid, us, want)
				}
			}
		}
	})
}

// judged is what Shapes reports of a pod: Check's unknown fields, or those listed by their names alone
// (unknownPaths) of a document that does not decode.
func judged(doc []byte) []Unknown {
	us, err := Check(doc, &corev1.Pod{})
	if err == nil {
		return us
	}
	t, verr := jsonv.Validate(doc)
	if verr != nil {
		return nil
	}
	typ := reflect.TypeFor[*corev1.Pod]()
	return unknownsAt(typ, unknownPaths(t, typ))
}

package fieldcheck

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// paths are the Paths of us.
func paths(us []Unknown) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Path)
	}
	return out
}

// Of a document that decodes, unknownPaths names what Check names, in its order, for every type host/kube
// judges objects by: it is the same judgement, made without decoding.
func FuzzUnknownPaths(f *testing.F) {
	for _, s := range []string{
		`{"spec":{"nodeNme":"a","containers":[{"name":"a","imagee":"x"},{"imagee":"y","imagee":"z"}]},"metadata":{"lables":{"a":"b"}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"nme":"a","resources":{"limits":{"cpu":"1"},"x":1}}]}},"volumeClaimTemplates":[{"spec":{"q":1}}]},"x":{"y":1}}`,
		`{"data":{"spec":{"x":1}},"revision":3,"metadata":{"ownerReferences":[{"uid":"u","ctl":true}]}}`,
		`{"spec":{"accessModes":["ReadWriteOnce"],"dataSourceRef":{"knd":"x"}},"status":{"capacity":{"storage":"1Gi"},"phse":"Bound"}}`,
		`{"a\\u0062":1,"b.c":2,"metadata":{"annotations":{"x":"y"},"a\\"b":1}}`, `{}`, `{"status":{"conditions":[{},{"z":1},{"z":2}]}}`,
		`{"":1,"metadata":{"":{"":2}},"spec":{"containers":[{"":3}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		text, err := jsonv.Validate(doc)
		if err != nil {
			return
		}
		for member, typ := range knownTypes {
			us, err := Check(doc, reflect.New(typ.Elem()).Interface())
			if err != nil {
				continue // a document that does not decode: Check names nothing to compare with
			}
			if got, want := unknownPaths(text, typ), paths(us); !slices.Equal(got, want) {
				t.Fatalf("%s as %s: unknownPaths %q, Check %q", doc, member, got, want)
			}
		}
	})
}

// A value of the wrong type no longer hides the unknown fields beside it: the decoder names none of a
// document that does not decode, so a misspelt field passed --validate=strict next to "managedFields": 5.
func TestUnknownFieldsBesideAWrongValue(t *testing.T) {
	doc := []byte(`{"metadata":{"name":"web-0","lables":{"a":"b"},"managedFields":5},"spec":{"containers":[{"name":"a","imagee":"x"}]}}`)
	if us, err := Check(doc, reflect.New(knownTypes["pods"].Elem()).Interface()); err == nil || len(us) != 0 {
		t.Fatalf("Check: %v, %v; want the decoder's type error and no fields (what the fix is for)", us, err)
	}
	var s Shapes
	us, err := s.Check(doc, reflect.Zero(knownTypes["pods"]).Interface())
	if err == nil || fmt.Sprint(us) != "[metadata.lables: unknown field; did you mean labels? spec.containers[0].imagee: unknown field; did you mean image?]" {
		t.Fatalf("Shapes.Check: %v, %v", us, err)
	}
	text, _ := jsonv.Validate(doc)
	if _, _, err := s.CheckValid(text, reflect.Zero(knownTypes["pods"]).Interface()); err == nil {
		t.Errorf("CheckValid of the same document: no error (found clean?)")
	}
	if out := Drop(doc, us); string(out) != `{"metadata":{"name":"web-0","managedFields":5},"spec":{"containers":[{"name":"a"}]}}` {
		t.Errorf("Drop: %s", out)
	}
}

package fieldcheck

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

const set = `{"apiVersion":"apps/v1","kindd":"StatefulSet","metadata":{"name":"web","lables":{"a":"b"},"app.kubernetes.io/name":"x"},
 "spec":{"replicas":3,"podManagmentPolicy":"Parallel","template":{"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","imagee":"y"}]}},
 "updateStrategy":{"rollingUpdate":{"maxUnavailabel":2}},"Replicas":4,"spec":1}}`

func TestCheck(t *testing.T) {
	us, err := Check([]byte(set), &appsv1.StatefulSet{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range us {
		got = append(got, u.String())
	}
	want := []string{
		"kindd: unknown field; did you mean kind?",
		"metadata.lables: unknown field; did you mean labels?",
		"metadata.app.kubernetes.io/name: unknown field",
		"spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?",
		"spec.template.spec.containers[1].imagee: unknown field; did you mean image?",
		"spec.updateStrategy.rollingUpdate.maxUnavailabel: unknown field; did you mean maxUnavailable?",
		"spec.Replicas: unknown field; did you mean replicas?",
		"spec.spec: unknown field",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A document that does not decode into the type is not judged: its other error says what is wrong.
	if us, err := Check([]byte(`{"spec":{"replicas":"3","replcas":1}}`), &appsv1.StatefulSet{}); err == nil || us != nil {
		t.Errorf("a replicas of the wrong type: %v, %v", us, err)
	}
	if us, err := Check([]byte(`{"spec":{"replicas":3}}`), &appsv1.StatefulSet{}); err != nil || us != nil {
		t.Errorf("a set without unknown fields: %v, %v", us, err)
	}
}

func TestInAndError(t *testing.T) {
	us, _ := Check([]byte(`{"spec":{"replcas":1},"x y":1}`), &appsv1.StatefulSet{})
	in := In(us, "pods", 3)
	if got := (&Error{Unknown: in}).Error(); got != "2 unknown fields:\n  pods[3].spec.replcas: unknown field; did you mean replicas?\n  \"pods[3].x y\": unknown field" {
		t.Errorf("Error() = %q", got)
	}
	if got := (&Error{Unknown: In(us[:1], "statefulSet")}).Error(); got != "statefulSet.spec.replcas: unknown field; did you mean replicas?" {
		t.Errorf("Error() = %q", got)
	}
	// A path within the prefixed document still drops its field.
	doc := `{"pods":[{},{},{},{"spec":{"replcas":1,"replicas":2}}]}`
	if got := string(Drop([]byte(doc), in)); got != `{"pods":[{},{},{},{"spec":{"replicas":2}}]}` {
		t.Errorf("Drop = %s", got)
	}
	if got := In(nil, "x"); got != nil {
		t.Errorf("In(nil) = %v", got)
	}
}

func TestDrop(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"spec":{"replcas":1,"replicas":2}}`, `{"spec":{"replicas":2}}`},                                 // first of several
		{`{"spec":{"replicas":2, "replcas":1}}`, `{"spec":{"replicas":2}}`},                                // last of several
		{`{"spec":{"replcas":1}}`, `{"spec":{}}`},                                                          // the only one
		{`{ "spec" : { "replcas" : [1,{"a":"}"}] , "replicas" : 2 } }`, `{ "spec" : { "replicas" : 2 } }`}, // blanks and nested values
		{`{"spec":{"replcas":1,"replicas":2,"replcas":3}}`, `{"spec":{"replicas":2}}`},                     // a key given twice
		{`{"spec":{"replicas":2,"template":{"metadata":{"lables":{}}}},"status":{"x":"\"y"}}`, `{"spec":{"replicas":2,"template":{"metadata":{}}},"status":{}}`},
		{`{"spec":{"replicas":2}}`, `{"spec":{"replicas":2}}`},
	} {
		us, err := Check([]byte(c.in), &appsv1.StatefulSet{})
		if err != nil {
			t.Fatal(err)
		}
		in := []byte(c.in)
		got := Drop(in, us)
		if string(got) != c.want {
			t.Errorf("Drop(%s) = %s, want %s", c.in, got, c.want)
		}
		if string(in) != c.in {
			t.Errorf("Drop wrote its argument: %s", in)
		}
		if !json.Valid(got) {
			t.Errorf("Drop(%s) is not JSON: %s", c.in, got)
		}
		if left, _ := Check(got, &appsv1.StatefulSet{}); len(left) != 0 {
			t.Errorf("Drop(%s) left %v", c.in, left)
		}
	}
}

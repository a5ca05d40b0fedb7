package fieldcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/ordinal-dev/ordinal/host/crd"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// knownTypes are the types host/kube judges objects by, keyed by a snapshot's member.
var knownTypes = map[string]reflect.Type{
	"statefulSet": reflect.TypeFor[*appsv1.StatefulSet](),
	"pods":        reflect.TypeFor[*corev1.Pod](),
	"claims":      reflect.TypeFor[*corev1.PersistentVolumeClaim](),
	"revisions":   reflect.TypeFor[*appsv1.ControllerRevision](),
}

// allTypes are knownTypes and the other types host/kube judges objects by, for the fuzzer.
var allTypes = []reflect.Type{
	reflect.TypeFor[*appsv1.StatefulSet](), reflect.TypeFor[*corev1.Pod](),
	reflect.TypeFor[*corev1.PersistentVolumeClaim](), reflect.TypeFor[*appsv1.ControllerRevision](),
	reflect.TypeFor[*crd.StatefulSet](), reflect.TypeFor[*policyv1.PodDisruptionBudget](), reflect.TypeFor[*corev1.Node](),
	reflect.TypeFor[*synthetic](),
}

// The fast path is live and exact on real objects: every object of the conformance snapshots that Check
// finds clean, allKnown clears without decoding; one it finds a field in, allKnown does not clear.
func TestAllKnownOnConformanceObjects(t *testing.T) {
	files, _ := filepath.Glob("../conformance/cases/*/*.snapshot.json")
	if len(files) < 100 {
		t.Fatalf("%d conformance snapshots found, want the suite's (over 100)", len(files))
	}
	cleared, judged := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var snap map[string]json.RawMessage
		if err := json.Unmarshal(b, &snap); err != nil {
			t.Fatal(err)
		}
		for member, typ := range knownTypes {
			var objs []json.RawMessage
			if member == "statefulSet" {
				objs = []json.RawMessage{snap[member]}
			} else if err := json.Unmarshal(snap[member], &objs); err != nil {
				continue // absent or not a list: the snapshot is a refusal case
			}
			for i, o := range objs {
				text, err := jsonv.Validate(o)
				if err != nil {
					continue
				}
				us, cerr := Check(o, reflect.New(typ.Elem()).Interface())
				known := allKnown(text, typ)
				judged++
				if known {
					cleared++
				}
				if known && len(us) > 0 {
					t.Errorf("%s %s[%d]: allKnown, but Check finds %v", f, member, i, us)
				}
				if !known && len(us) == 0 && cerr == nil {
					t.Errorf("%s %s[%d]: Check finds nothing, allKnown says a field is unknown", f, member, i)
				}
			}
		}
	}
	if cleared == 0 || judged < 1000 {
		t.Fatalf("allKnown cleared %d of %d objects", cleared, judged)
	}
	t.Logf("allKnown cleared %d of %d objects", cleared, judged)
	// and a pod with misspelt fields at three depths is not cleared
	typo := `{"spec":{"nodeNme":"a","containers":[{"name":"a","imagee":"x"}]},"metadata":{"lables":{"a":"b"}}}`
	for _, doc := range []string{typo, `{"spec":{"containers":[{"imagee":"x"}]}}`, `{"metadata":{"lables":{}}}`} {
		text, _ := jsonv.Validate([]byte(doc))
		if allKnown(text, knownTypes["pods"]) {
			t.Errorf("%s: allKnown", doc)
		}
	}
}

// The rules of encoding/json's fields: tags, Go names, "-", embedded structs promoted (pointer or not,
// exported or not), an embedded struct with a tag kept as one field, a name given twice left to Check;
// a type that decodes itself takes any value.
func TestStructFields(t *testing.T) {
	type inner struct{ Deep string }
	type Embedded struct {
		Promoted int `json:"promoted"`
	}
	type twice struct{ Same int }
	type Twice struct{ Same int }
	type outer struct {
		Tagged   string `json:"tagged,omitempty"`
		Plain    int
		Skipped  int `json:"-"`
		Dash     int `json:"-,"`
		BadTag   int `json:"a\"b"`
		unexp    int
		Embedded                  // promoted
		*inner                    // promoted through a pointer, though unexported
		Named    Embedded         `json:"named"`
		twice                     // Same, given twice at one depth
		Twice                     //
		Time     metaTime         `json:"time"`
		Any      any              `json:"any"`
		List     []inner          `json:"list"`
		ByName   map[string]inner `json:"byName"`
	}
	_ = outer{}.unexp
	got := structFields(reflect.TypeFor[outer]())
	want := "tagged Plain - BadTag promoted Deep named time any list byName" // as declared, promoted ones in place
	if s := strings.Join(got.names, " "); s != want || len(got.types) != len(got.names) {
		t.Errorf("fields %s (%d types), want %s", s, len(got.types), want)
	}
	typ := reflect.TypeFor[*outer]()
	for doc, want := range map[string]bool{
		`{"tagged":"a","Plain":1,"promoted":2,"Deep":"x","named":{"promoted":1}}`: true,
		`{"Tagged":"a"}`:                                        false, // case-sensitive, as sigs.k8s.io/json's strict decoding
		`{"Skipped":1}`:                                         false,
		`{"unexp":1}`:                                           false,
		`{"Same":1}`:                                            false, // ambiguous: Check decides
		`{"named":{"Deep":1}}`:                                  false,
		`{"time":{"anything":[1,{"x":2}]}}`:                     true, // its own UnmarshalJSON takes it
		`{"any":{"x":{"y":1}}}`:                                 true,
		`{"list":[{"Deep":"a"},{"Deep":"b"}]}`:                  true,
		`{"list":[{"Deep":"a"},{"Dep":"b"}]}`:                   false,
		`{"byName":{"a":{"Deep":"a"},"b":{"x":1}}}`:             false,
		`{"list":{"x":1},"named":[1,{"x":2}],"tagged":{"x":1}}`: true, // values of the wrong kind: type errors, no field judged
		`null`: true,
	} {
		text, err := jsonv.Validate([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := allKnown(text, typ); got != want {
			t.Errorf("%s: allKnown %v, want %v", doc, got, want)
		}
	}
}

// metaTime decodes itself, as metav1.Time does.
type metaTime struct{ s string }

func (m *metaTime) UnmarshalJSON(b []byte) error { m.s = string(b); return nil }

// Whatever the document, allKnown clears it only when Check finds no unknown field in it, for each type
// host/kube judges objects by.
func FuzzAllKnown(f *testing.F) {
	for _, s := range []string{
		`{"spec":{"nodeNme":"a","containers":[{"name":"a","imagee":"x"}]},"metadata":{"lables":{"a":"b"}}}`,
		`{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1"}}}]},"metadata":{"labels":{"a":"b"},"creationTimestamp":"2026-01-01T00:00:00Z"}}`,
		`{"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80}]}]}},"volumeClaimTemplates":[{"spec":{"resources":{"requests":{"storage":"1Gi"}}}}]}}`,
		`{"data":{"spec":{"x":1}},"revision":3,"metadata":{"ownerReferences":[{"uid":"u","controller":true}]}}`,
		`{"spec":{"accessModes":["ReadWriteOnce"],"dataSourceRef":{"kind":"x"}},"status":{"capacity":{"storage":"1Gi"},"phase":"Bound"}}`,
		`{"metadata":{"ManagedFields":[{"fieldsV1":{"f:x":{}}}]},"status":{"conditions":[{"type":"Ready","lastProbeTime":null}]}}`,
		`{"spec":{"overhead":{"cpu":"1"}},"status":{"x":null}}`, `{}`, `[]`, `"s"`,
		`{"apiVersion":"ordinal.dev/v1","status":{"selector":"a=b"},"spec":{"replicas":1}}`,
		`{"a":{"X":1,"q":1},"b":{"Y":1},"f":{"q":1},"g":{"Z":1},"h":[{"q":1}],"p":{"q":1},"Deep":1,"m":{"1":{"Deep":1}}}`,
		`{"arr":[{"Deep":1},{"Deep":1},{"q":1}],"Shared":1,"Low":{"Deep":1},"u\u0308":1,"\u0041":1,"deep":1,"I":{"q":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		text, err := jsonv.Validate(doc)
		if err != nil {
			return // allKnown reads text jsonv.Validate accepted
		}
		for _, typ := range allTypes {
			end, known := knownTo(text, typ)
			if !known {
				continue
			}
			if end != len(text) {
				t.Fatalf("%s as %v: cleared to %d of %d", doc, typ, end, len(text))
			}
			if us, _ := Check(doc, reflect.New(typ.Elem()).Interface()); len(us) > 0 {
				t.Fatalf("%s as %v: allKnown, but Check finds %s", doc, typ, fmt.Sprint(us))
			}
		}
	})
}

// Types that decode themselves where encoding/json does not call their decoder: it looks for one only on
// a pointer, or on the address of a value of a named type (indirect), and only when the value can be
// handed out, which a field of an unexported embedded struct given a name cannot. Decoded as structs,
// their keys are judged field by field.
type (
	selfA struct{ X int }
	selfB struct{ Y int }
	SelfC struct{ Z int }
)

func (*selfA) UnmarshalJSON([]byte) error { return nil }
func (*selfB) UnmarshalJSON([]byte) error { return nil }
func (SelfC) UnmarshalJSON([]byte) error  { return nil }

// synthetic exercises encoding/json's field rules for FuzzAllKnown: names given at two depths, embedded
// structs by value and by pointer, decoders it calls and decoders it does not.
type synthetic struct {
	selfA `json:"a"` // both given names: neither's UnmarshalJSON is promoted, and neither is called
	selfB `json:"b"`
	F     struct{ metaTime }         `json:"f"` // unnamed: its promoted UnmarshalJSON is not looked for
	G     struct{ SelfC }            `json:"g"`
	H     []struct{ metaTime }       `json:"h"`
	P     *struct{ metaTime }        `json:"p"` // through a pointer it is
	M     map[int]struct{ metaTime } `json:"m"`
	Arr   [2]inner                   `json:"arr"`
	I     any
	*inner
	Low inner
	deepA
	deepB
	Ü int `json:"u\u0308"`
}

type inner struct{ Deep int }
type deepA struct {
	Shared int
	inner
}
type deepB struct{ Shared int }

// encoding/json's own decoders only: allKnown does not clear what Check decodes as a struct.
func TestAllKnownDecodersNotCalled(t *testing.T) {
	typ := reflect.TypeFor[*synthetic]()
	for _, doc := range []string{`{"a":{"q":1}}`, `{"f":{"q":1}}`, `{"g":{"q":1}}`, `{"h":[{"q":1}]}`, `{"m":{"1":{"q":1}}}`} {
		us, err := Check([]byte(doc), new(synthetic))
		if err != nil || len(us) == 0 {
			t.Fatalf("%s: Check finds %v, %v: want an unknown field", doc, us, err)
		}
		text, _ := jsonv.Validate([]byte(doc))
		if allKnown(text, typ) {
			t.Errorf("%s: allKnown, but Check finds %v", doc, us)
		}
	}
	// through a pointer, the promoted UnmarshalJSON takes the value
	text, _ := jsonv.Validate([]byte(`{"p":{"q":1}}`))
	if !allKnown(text, typ) {
		t.Errorf(`{"p":{"q":1}}: not allKnown`)
	}
}

// recursive is a type as deep as any document: a key known at every depth.
type recursive struct {
	A *recursive  `json:"a"`
	L []recursive `json:"l"`
	S string      `json:"s"`
}

// allKnown on a document nearly as deep as jsonv accepts (256), of a recursive type, with 4 KiB at each depth:
// ns/op and MB/s against Check's, at three depths (each value walked once: its time grows with the bytes,
// not with the bytes times the depth).
func BenchmarkAllKnownDeep(b *testing.B) {
	for _, depth := range []int{16, 64, 250} {
		level := `{"s":"` + strings.Repeat("x", 4096) + `","l":[{"s":"y"}],"a":`
		doc := []byte(strings.Repeat(level, depth) + `{}` + strings.Repeat("}", depth))
		text, err := jsonv.Validate(doc)
		if err != nil {
			b.Fatal(err)
		}
		typ := reflect.TypeFor[*recursive]()
		if !allKnown(text, typ) {
			b.Fatal("not cleared")
		}
		b.Run(fmt.Sprintf("depth=%d/allKnown", depth), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				allKnown(text, typ)
			}
		})
		b.Run(fmt.Sprintf("depth=%d/Check", depth), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				_, _ = Check(doc, new(recursive))
			}
		})
	}
}

// A type the decoder cannot set into (an unexported embedded pointer given a tag name) is a document that
// does not decode, not a panic: allKnown hands its keys to Check.
func TestCheckOfATypeTheDecoderCannotSet(t *testing.T) {
	type plain struct{ A int }
	type withPointer struct {
		*plain `json:"a"`
	}
	doc := []byte(`{"a":{"A":1,"q":2}}`)
	text, _ := jsonv.Validate(doc)
	if allKnown(text, reflect.TypeFor[*withPointer]()) {
		t.Errorf("allKnown cleared a key of an unexported embedded pointer")
	}
	us, err := Check(doc, &withPointer{})
	if err == nil || len(us) != 0 {
		t.Errorf("Check: %v, %v; want no fields and the decoder's refusal", us, err)
	}
	var s Shapes // and the key it cannot set is one no value can be decoded into
	if us, err := s.Check(doc, (*withPointer)(nil)); err == nil || fmt.Sprint(us) != "[a: unknown field]" {
		t.Errorf("Shapes.Check: %v, %v", us, err)
	}
}

package snapshot

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// unknownFields is UnknownFields of a document, validated as the CLI does (nothing for an invalid one).
func unknownFields(js []byte) (envelope, objects []fieldcheck.Unknown) {
	t, err := jsonv.Validate(js)
	if err != nil {
		return nil, nil
	}
	return UnknownFields(t)
}

func fieldStrings(us []fieldcheck.Unknown) string {
	var s []string
	for _, u := range us {
		s = append(s, u.String())
	}
	return strings.Join(s, "\n")
}

// The envelope's members and the objects' fields are read apart: by their paths in the snapshot, with
// the field meant.
func TestUnknownFields(t *testing.T) {
	snap := `{"abi":1,"now":"2026-01-01T00:00:00Z","statefullSet":{},"eventActons":true,
	  "statefulSet":{"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"podManagmentPolicy":"Parallel"}},
	  "pods":[{"metadata":{"name":"web-0"}},{"metadata":{"name":"web-1"},"spec":{"containers":[{"name":"a","imagee":"x"}]}}],
	  "revisions":[{"data":{"spec":{"anything":1}},"revison":1}],"claims":[{"spec":{"storageClasName":"x"}}],
	  "features":{"MaxUnavailableStatefulSet":true},"delta":{"removed":{},"counts":{}},"writeFailures":[]}`
	envelope, objects := unknownFields([]byte(snap))
	if got, want := fieldStrings(envelope), "statefullSet: unknown field; did you mean statefulSet?\neventActons: unknown field; did you mean eventActions?"; got != want {
		t.Errorf("envelope:\n%s\nwant\n%s", got, want)
	}
	want := strings.Join([]string{
		"statefulSet.spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?",
		"pods[1].spec.containers[0].imagee: unknown field; did you mean image?",
		"revisions[0].revison: unknown field; did you mean revision?",
		"claims[0].spec.storageClasName: unknown field; did you mean storageClassName?",
	}, "\n")
	if got := fieldStrings(objects); got != want {
		t.Errorf("objects:\n%s\nwant\n%s", got, want)
	}
	// Dropped, the rest of the snapshot is as it was, byte for byte.
	dropped := fieldcheck.Drop([]byte(snap), objects)
	if _, left := unknownFields(dropped); len(left) > 0 {
		t.Errorf("left after Drop: %s", fieldStrings(left))
	}
	if !strings.Contains(string(dropped), `"revisions":[{"data":{"spec":{"anything":1}}}]`) {
		t.Errorf("Drop changed a revision's data: %s", dropped)
	}
	// The walk finds each object's end itself: blanks anywhere, elements that are not objects, members
	// after the lists, an empty list; of a member given twice, the last is judged (the module reads it).
	odd := "{ \"pods\" : [ 1 ,\n {\"metadata\":{\"name\":\"a\"}} , [ {\"x\":1} ] ,{ \"spec\" : { \"nodeNme\" : \"n\" } } ] ,\n" +
		` "claims":[], "statefulSet" : {"spec":{"replcas":1}} , "pods":[{"statuss":{}}] , "nw":"x" }`
	envelope, objects = unknownFields([]byte(odd))
	if got, want := fieldStrings(envelope), "nw: unknown field; did you mean now?"; got != want {
		t.Errorf("blanks and odd elements, envelope:\n%s\nwant\n%s", got, want)
	}
	want = strings.Join([]string{
		"statefulSet.spec.replcas: unknown field; did you mean replicas?",
		"pods[0].statuss: unknown field; did you mean status?",
	}, "\n")
	if got := fieldStrings(objects); got != want {
		t.Errorf("blanks and odd elements, objects:\n%s\nwant\n%s", got, want)
	}
	// an earlier statefulSet or pods the module never reads refuses nothing; the last one given is judged
	for doc, want := range map[string]string{
		`{"statefulSet":{"spec":{"replcas":1}},"pods":[{"spek":1}],"statefulSet":{"spec":{}},"pods":[]}`: "",
		`{"statefulSet":{"spec":{}},"statefulSet":{"spec":{"replcas":1}}}`:                               "statefulSet.spec.replcas: unknown field; did you mean replicas?",
		`{"pods":[{"spek":1}],"claims":[{"spek":2}],"pods":[{},{"spek":3}]}`:                             "claims[0].spek: unknown field; did you mean spec?\npods[1].spek: unknown field; did you mean spec?",
	} {
		if _, objects := unknownFields([]byte(doc)); fieldStrings(objects) != want {
			t.Errorf("%s: objects\n%s\nwant\n%s", doc, fieldStrings(objects), want)
		}
	}
	for _, doc := range []string{`[]`, `{"abi":`, ``, `null`} {
		if e, o := unknownFields([]byte(doc)); e != nil || o != nil {
			t.Errorf("%q: %v %v (the module says what is wrong with it)", doc, e, o)
		}
	}
}

// The envelope's members are the ABI schema's properties, every member of abi.Snapshot among them.
func TestEnvelopeMembersAreTheSchemas(t *testing.T) {
	names := envelopeMembers()
	for _, n := range []string{"abi", "now", "statefulSet", "pods", "revisions", "claims", "features", "eventActions", "delta", "writeFailures"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s is not an envelope member (%v)", n, names)
		}
	}
	st := reflect.TypeFor[abi.Snapshot]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if !slices.Contains(names, name) {
			t.Errorf("abi.Snapshot's %s is not in the schema's properties %v", name, names)
		}
	}
	b, _ := json.Marshal(abi.Snapshot{ABI: 1, Now: "2026-01-01T00:00:00Z", StatefulSet: json.RawMessage(`{}`), EventActions: true})
	if e, _ := unknownFields(b); len(e) > 0 {
		t.Errorf("a snapshot the host builds: %s", fieldStrings(e))
	}
}

// The objects are checked where they lie in the snapshot: a copy of each, megabytes in all for a large
// set, was most of what reading a snapshot for its unknown fields allocated.
func TestUnknownFieldsCopiesNoObject(t *testing.T) {
	pod := `{"metadata":{"name":"web-%d","namespace":"default","labels":{"app":"web"}},` +
		`"spec":{"containers":[{"name":"nginx","image":"registry.k8s.io/nginx-slim:0.27","env":[{"name":"PAD","value":"` +
		strings.Repeat("x", 2000) + `"}]}]},"status":{"phase":"Running"}}`
	var pods []string
	for i := range 500 {
		pods = append(pods, fmt.Sprintf(pod, i))
	}
	snap := []byte(`{"abi":1,"now":"2026-01-01T00:00:00Z","statefulSet":{"apiVersion":"apps/v1","kind":"StatefulSet"},` +
		`"pods":[` + strings.Join(pods, ",") + `]}`)
	unknownFields(snap) // once, for what is allocated once per process (the schema's members)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	envelope, objects := unknownFields(snap)
	runtime.ReadMemStats(&after)
	if len(envelope) > 0 || len(objects) > 0 {
		t.Fatalf("unknown fields in a clean snapshot: %s %s", fieldStrings(envelope), fieldStrings(objects))
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(len(snap))/2 {
		t.Fatalf("allocated %d bytes to read a %d-byte snapshot's fields", allocated, len(snap))
	}
}

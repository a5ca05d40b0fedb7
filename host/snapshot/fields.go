package snapshot

import (
	"encoding/json"
	"slices"
	"sync"
	"unsafe"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// UnknownFields reads a snapshot (ABI v1 JSON) for the fields it should not have, by their paths in it:
// envelope, members of the snapshot itself that the ABI does not define (abi/schema/snapshot.schema.json's
// properties: statefullSet, evnts, ...), and objects, fields of its StatefulSet, pods, revisions and claims
// that their kinds do not have (kube.UnknownFields: statefulSet.spec.podManagmentPolicy,
// pods[3].spec.containers[0].imagee). The module ignores both, as abi/README.md says it does, so a
// misspelt field of a hand-edited snapshot would change nothing without a word; the CLI refuses the
// first and, by --validate, warns of or refuses the second. A document that is not a JSON object reports
// none: the module says what is wrong with it. t is the snapshot as jsonv.Validate accepted it: the CLI's
// reading of a file validates it once, to tell a snapshot from a List or a manifest.
func UnknownFields(t jsonv.Text) (envelope, objects []fieldcheck.Unknown) {
	if t.Kind() != jsonv.Object {
		return nil, nil
	}
	known := envelopeMembers()
	var c kube.FieldChecker
	t.Members(func(k string, v jsonv.Text) {
		kind, list := "", false
		switch k {
		case "statefulSet":
			kind = "StatefulSet"
		case "pods":
			kind, list = "Pod", true
		case "revisions":
			kind, list = "ControllerRevision", true
		case "claims":
			kind, list = "PersistentVolumeClaim", true
		default:
			if !slices.Contains(known, k) {
				envelope = append(envelope, fieldcheck.Member(k, known))
			}
			return
		}
		switch {
		case !list && v.Kind() == jsonv.Object:
			objects = append(objects, fieldcheck.In(c.UnknownFields(kind, TextBytes(v)), k)...)
		case list && v.Kind() == jsonv.Array:
			v.Items(func(i int, o jsonv.Text) {
				if o.Kind() == jsonv.Object {
					objects = append(objects, fieldcheck.In(c.UnknownFields(kind, TextBytes(o)), k, i)...)
				}
			})
		}
	})
	return envelope, objects
}

// envelopeMembers are the members the ABI's snapshot schema defines, in their order there.
var envelopeMembers = sync.OnceValue(func() []string {
	b, err := abi.Schemas.ReadFile("schema/" + abi.SnapshotSchema)
	if err != nil {
		panic(err) // embedded at build time
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		panic(err)
	}
	t, err := jsonv.Validate(s.Properties)
	if err != nil {
		panic(err)
	}
	var names []string
	t.Members(func(k string, _ jsonv.Text) { names = append(names, k) })
	return names
})

// TextBytes are t's source as bytes, sharing the input's memory (jsonv.Validate's Text is the input): read
// them, never write them. A snapshot's objects are megabytes, which a copy each would fault in again. Here,
// not in jsonv, as the module is built from jsonv.
func TextBytes(t jsonv.Text) []byte {
	if len(t) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(string(t)), len(t))
}

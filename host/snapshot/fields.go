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
	// The objects of each member as the module reads it: the last of a member given twice (an earlier one's
	// fields are nobody's, and Drop would look for them in the last).
	var members []string
	byMember := map[string][]fieldcheck.Unknown{}
	// One walk: each object's check finds where it ends (a snapshot is megabytes of pods, each skipped as
	// a value and then walked for its shape, read twice, before).
	for i := t.FirstMember(); ; {
		k, v, ok := t.MemberAt(i)
		if !ok {
			break
		}
		val := t[v:]
		end := 0
		var us []fieldcheck.Unknown
		kind, list := objectsOf(k)
		switch {
		case kind == "":
			if !slices.Contains(known, k) {
				envelope = append(envelope, fieldcheck.Member(k, known))
			}
			end = val.ValueEnd()
		case !list && val.Kind() == jsonv.Object:
			us, end = c.UnknownFieldsOfValue(kind, val)
			us = fieldcheck.In(us, k)
		case list && val.Kind() == jsonv.Array:
			end = listUnknownFields(&c, kind, k, val, &us)
		default:
			end = val.ValueEnd()
		}
		if kind != "" {
			members = slices.DeleteFunc(members, func(m string) bool { return m == k })
			members, byMember[k] = append(members, k), us
		}
		i = t.MemberAfter(v + end)
	}
	for _, k := range members {
		objects = append(objects, byMember[k]...)
	}
	return envelope, objects
}

// objectsOf is the kind of the objects the snapshot's member named key holds, and whether they are a list
// ("" for a member that holds none).
func objectsOf(key string) (kind string, list bool) {
	switch key {
	case "statefulSet":
		return "StatefulSet", false
	case "pods":
		return "Pod", true
	case "revisions":
		return "ControllerRevision", true
	case "claims":
		return "PersistentVolumeClaim", true
	}
	return "", false
}

// listUnknownFields appends the unknown fields of the objects of list a (the snapshot's member named key,
// a's text going on past it) to objects, and returns where a ends.
func listUnknownFields(c *kube.FieldChecker, kind, key string, a jsonv.Text, objects *[]fieldcheck.Unknown) int {
	j := a.FirstItem()
	for n := 0; ; n++ {
		o, ok := a.ItemRest(j)
		if !ok {
			return j + 1
		}
		end := 0
		if o.Kind() == jsonv.Object {
			var us []fieldcheck.Unknown
			us, end = c.UnknownFieldsOfValue(kind, o)
			*objects = append(*objects, fieldcheck.In(us, key, n)...)
		} else {
			end = o.ValueEnd()
		}
		j = a.ItemAfter(j + end)
	}
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

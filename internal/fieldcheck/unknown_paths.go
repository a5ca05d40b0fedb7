package fieldcheck

import (
	"reflect"
	"strconv"

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
	w := pathWalk{seen: map[string]bool{}}
	w.walk(t, typ, "")
	return w.paths
}

type pathWalk struct {
	paths []string
	seen  map[string]bool
}

func (w *pathWalk) add(path string) {
	if len(w.paths) < maxUnknown && !w.seen[path] {
		w.seen[path] = true
		w.paths = append(w.paths, path)
	}
}

// walk lists the unknown keys of the value t starts with (t may go on past it) under path, and returns
// where the value ends. It follows the decoder (knownTo's rules): a type that decodes itself, a value of
// the wrong kind for its type, an interface, are read whole and judged by nothing.
func (w *pathWalk) walk(t jsonv.Text, typ reflect.Type, path string) int {
	for {
		if decodesItself(typ) {
			return t.ValueEnd()
		}
		if typ.Kind() != reflect.Pointer {
			break
		}
		typ = typ.Elem()
	}
	switch k := t.Kind(); {
	case k == jsonv.Object && typ.Kind() == reflect.Struct:
		fields := structFields(typ)
		for i := t.FirstMember(); ; {
			key, v, ok := t.MemberAt(i)
			if !ok {
				return i + 1
			}
			var end int
			if ft, known := fields.types[key]; known {
				end = w.walk(t[v:], ft, member(path, key))
			} else {
				w.add(member(path, key))
				end = t[v:].ValueEnd()
			}
			i = t.MemberAfter(v + end)
		}
	case k == jsonv.Object && typ.Kind() == reflect.Map && mapKeyDecodes(typ.Key()):
		for i := t.FirstMember(); ; {
			key, v, ok := t.MemberAt(i)
			if !ok {
				return i + 1
			}
			i = t.MemberAfter(v + w.walk(t[v:], typ.Elem(), member(path, key)))
		}
	case k == jsonv.Array && (typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array):
		for n, i := 0, t.FirstItem(); ; n++ {
			item, ok := t.ItemRest(i)
			if !ok {
				return i + 1
			}
			var end int
			if typ.Kind() == reflect.Array && n >= typ.Len() {
				end = item.ValueEnd() // past a Go array's length: skipped, as the decoder skips it
			} else {
				end = w.walk(item, typ.Elem(), path+"["+strconv.Itoa(n)+"]")
			}
			i = t.ItemAfter(i + end)
		}
	}
	return t.ValueEnd()
}

// member is path's member key, as the decoder's strict field stack joins them.
func member(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapKeyDecodes: encoding/json decodes an object into a map only with string, integer or text-decoding
// keys; any other is a type error, and nothing in the object is judged.
func mapKeyDecodes(k reflect.Type) bool {
	switch k.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return reflect.PointerTo(k).Implements(textUnmarshaler)
}

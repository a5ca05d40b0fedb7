package fieldcheck

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// allKnown reports whether every key of the value t starts with (valid text) is a field Check's decoder
// would match in typ, at every depth: then Check reports no unknown field, and t needs no decoding. It
// is the cheap half of judging a document: Check decodes into a new value, and sigs.k8s.io/json builds
// a codec for every type reachable from typ the first time it meets typ (a corev1.Pod's are hundreds,
// most of a short CLI run's field check), where this reads only the types t's keys reach. It may say
// false where Check finds nothing (a key of an ambiguous embedded field): the caller decodes then, so only
// true must be exact.
func allKnown(t jsonv.Text, typ reflect.Type) bool {
	_, ok := knownTo(t, typ)
	return ok
}

// knownTo is allKnown for the value t starts with (t may go on past it), and where that value ends when
// every key is known: the fields walk, stopped at the first unknown key.
func knownTo(t jsonv.Text, typ reflect.Type) (end int, ok bool) {
	w := fieldWalk{unknown: func(*fieldPath) bool { return false }}
	return w.walk(t, typ, nil)
}

// fieldWalk walks a JSON value against a Go type by the rules sigs.k8s.io/json's strict decoding follows,
// and tells unknown each key that is no field of its struct, at its path; unknown returning false stops
// the walk. Each value is walked once, not walked and then skipped again by every object or array that
// holds it (a document as deep as jsonv allows, of a recursive type, would be walked 256 times).
type fieldWalk struct {
	unknown func(at *fieldPath) bool
}

// fieldPath is where a key is, built as the walk descends and written out (String) only for a key
// reported: the walk of a clean document writes no path.
type fieldPath struct {
	parent *fieldPath
	key    string
	index  int  // the item's, in a list
	item   bool // a list's item (index), not an object's member (key, which may be "")
}

// String is the path as the decoder's strict field stack names it: spec.containers[0].imagee.
func (p *fieldPath) String() string {
	if p == nil {
		return ""
	}
	if p.item {
		return p.parent.String() + "[" + strconv.Itoa(p.index) + "]"
	}
	if p.parent == nil {
		return p.key
	}
	return p.parent.String() + "." + p.key
}

// walk walks the value t starts with (t may go on past it) at path, and returns where it ends; ok is
// false when unknown stopped the walk. A type that decodes itself, a value of the wrong kind for its type
// (a type error: the decoder judges nothing in it), an interface and a scalar are read whole.
func (w fieldWalk) walk(t jsonv.Text, typ reflect.Type, path *fieldPath) (end int, ok bool) {
	for {
		if decodesItself(typ) {
			return t.ValueEnd(), true
		}
		if typ.Kind() != reflect.Pointer {
			break
		}
		typ = typ.Elem()
	}
	switch k := t.Kind(); {
	case k == jsonv.Object && (typ.Kind() == reflect.Struct || typ.Kind() == reflect.Map && mapKeyDecodes(typ.Key())):
		var fields fieldSet // a struct's; a map's members are all of its element type
		if typ.Kind() == reflect.Struct {
			fields = structFields(typ)
		}
		at := fieldPath{parent: path}
		for i := t.FirstMember(); ; {
			key, v, more := t.MemberAt(i)
			if !more {
				return i + 1, true
			}
			at.key = key
			ft, known := fields.types[key]
			if typ.Kind() == reflect.Map {
				ft, known = typ.Elem(), true
			}
			var e int
			if known {
				if e, ok = w.walk(t[v:], ft, &at); !ok {
					return 0, false
				}
			} else if !w.unknown(&at) {
				return 0, false
			} else {
				e = t[v:].ValueEnd()
			}
			i = t.MemberAfter(v + e)
		}
	case k == jsonv.Array && (typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array):
		at := fieldPath{parent: path, item: true}
		for i := t.FirstItem(); ; at.index++ {
			item, more := t.ItemRest(i)
			if !more {
				return i + 1, true
			}
			e := 0
			if typ.Kind() == reflect.Array && at.index >= typ.Len() {
				e = item.ValueEnd() // past a Go array's length: skipped, as the decoder skips it
			} else if e, ok = w.walk(item, typ.Elem(), &at); !ok {
				return 0, false
			}
			i = t.ItemAfter(i + e)
		}
	}
	return t.ValueEnd(), true
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

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself: encoding/json hands the value to the type's own UnmarshalJSON (or, for a string, its
// UnmarshalText), which judges no field as unknown. It looks for one on a pointer, or on the address of
// a value of a named type (indirect): an unnamed struct's, promoted from an embedded field, only through
// a pointer; otherwise the struct is decoded field by field.
func decodesItself(typ reflect.Type) bool {
	if typ.Kind() != reflect.Pointer {
		if typ.Name() == "" {
			return false
		}
		typ = reflect.PointerTo(typ)
	}
	return typ.Implements(jsonUnmarshaler) || typ.Implements(textUnmarshaler)
}

// fieldsOf caches structFields per type: a long-running process meets the same few types.
var fieldsOf sync.Map // reflect.Type -> fieldSet

// fieldSet is a struct type's JSON members: their names in the order the type declares them (for a
// suggestion among them) and their types.
type fieldSet struct {
	names []string
	types map[string]reflect.Type
}

// structFields are the JSON names encoding/json's decoder matches in typ (a struct), with their types:
// tagged names, exported field names, and the fields of embedded structs promoted by its rules. A name
// that is given more than once is left out (Go's rules keep one of them or none; left out, allKnown says
// false and Check decides).
func structFields(typ reflect.Type) fieldSet {
	if f, ok := fieldsOf.Load(typ); ok {
		return f.(fieldSet)
	}
	seen := map[string]int{}
	var order []string
	types := map[string]reflect.Type{}
	collectFields(typ, types, seen, &order, map[reflect.Type]bool{})
	fs := fieldSet{types: types}
	for _, name := range order {
		if seen[name] > 1 {
			delete(types, name)
		} else if _, ok := types[name]; ok {
			fs.names = append(fs.names, name)
		}
	}
	fieldsOf.Store(typ, fs)
	return fs
}

// collectFields adds typ's fields to out, counting each name in seen, by encoding/json's typeFields rules
// for which fields a struct has and which embedded structs it promotes the fields of.
func collectFields(typ reflect.Type, out map[string]reflect.Type, seen map[string]int, order *[]string, visiting map[reflect.Type]bool) {
	if visiting[typ] {
		return
	}
	visiting[typ] = true
	defer delete(visiting, typ)
	for i := range typ.NumField() {
		sf := typ.Field(i)
		ft := sf.Type
		if sf.Anonymous {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if !sf.IsExported() && ft.Kind() != reflect.Struct {
				continue // an embedded field of an unexported non-struct type
			}
		} else if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if !validTagName(name) {
			name = ""
		}
		if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
			collectFields(ft, out, seen, order, visiting) // promoted
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if seen[name]++; seen[name] == 1 {
			*order = append(*order, name)
		}
		if sf.Anonymous && !sf.IsExported() {
			continue // an unexported embedded struct given a name: decoded read-only, without its own decoder
		}
		out[name] = sf.Type
	}
}

// validTagName is encoding/json's rule for a tag's name: otherwise the field keeps its Go name.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

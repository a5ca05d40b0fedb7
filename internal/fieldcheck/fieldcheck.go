// Package fieldcheck finds the fields of a document that its Go type does not have, the way kube-apiserver's
// strict field validation finds them (sigs.k8s.io/json's strict decoding: case-sensitive, every unknown
// field by its path), and names the field most likely meant (internal/didyoumean). The snapshot, scenario,
// manifest and test-file readers all report through it, so a misspelt key reads the same everywhere:
//
//	statefulSet.spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?
//
// Whether an unknown field is an error is the reader's call: always, in Ordinal's own formats; by
// --validate (strict, warn, ignore) in Kubernetes objects, which Drop then reads as kube-apiserver stores
// them under fieldValidation Warn or Ignore: without the fields it does not know.
package fieldcheck

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	sigsjson "sigs.k8s.io/json"

	"github.com/ordinal-dev/ordinal/internal/didyoumean"
)

// Unknown is a field of a document that its format does not have.
type Unknown struct {
	// Path is where it is, as kube-apiserver names it: spec.template.spec.containers[0].imagee.
	Path string
	// Meant is the field of the same object it most likely misspells, or "".
	Meant string
	// keys are Path's object keys (string) and list indexes (int), for Drop; nil where Path could not be
	// followed through the type.
	keys []any
}

// String is the field as a person reads it: "spec.replcas: unknown field; did you mean replicas?".
func (u Unknown) String() string {
	p := u.Path
	if strings.ContainsFunc(p, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '"' }) {
		p = strconv.Quote(p) // a key of any text the file chose: quoted, so it cannot pass for another line
	}
	s := p + ": unknown field"
	if u.Meant != "" {
		s += "; did you mean " + u.Meant + "?"
	}
	return s
}

// Error is a document's unknown fields where they are an error.
type Error struct{ Unknown []Unknown }

func (e *Error) Error() string {
	if len(e.Unknown) == 1 {
		return e.Unknown[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d unknown fields:", len(e.Unknown))
	for _, u := range e.Unknown {
		b.WriteString("\n  ")
		b.WriteString(u.String())
	}
	return b.String()
}

// Check decodes doc (JSON) into v, a pointer to a typed value, as kube-apiserver's strict field validation
// does (sigs.k8s.io/json UnmarshalStrict, case-sensitive), and returns the fields of doc that v's type does
// not have, in the order they appear. err is a document that does not decode into v at all (not JSON, a
// string where a number belongs): its fields are not judged then, and v holds what was decoded.
func Check(doc []byte, v any) (_ []Unknown, err error) {
	defer func() {
		// The decoder panics on a type it cannot set (an unexported embedded pointer with a tag name): a
		// document of such a type does not decode, as one with a type error does not.
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding into %T: %v", v, r)
		}
	}()
	strict, err := sigsjson.UnmarshalStrict(doc, v, sigsjson.DisallowUnknownFields)
	if err != nil || len(strict) == 0 {
		return nil, err
	}
	var paths []string
	for _, e := range strict {
		if fe, ok := e.(sigsjson.FieldError); ok && strings.HasPrefix(e.Error(), "unknown field ") {
			paths = append(paths, fe.FieldPath())
		}
	}
	return unknownsAt(reflect.TypeOf(v), paths), nil
}

// unknownsAt are the unknown fields at paths (as kube-apiserver names them) of a document of type t, each
// with its keys for Drop and the field it most likely misspells.
func unknownsAt(t reflect.Type, paths []string) []Unknown {
	var out []Unknown
	for _, p := range paths {
		u := Unknown{Path: p}
		var known []string
		if u.keys, known = locate(t, u.Path); u.keys != nil {
			u.Meant = didyoumean.Closest(u.keys[len(u.keys)-1].(string), known)
		}
		out = append(out, u)
	}
	return out
}

// In returns us as fields of the document that holds theirs at keys (object keys and list indexes):
// In(us, "pods", 3) makes spec.x pods[3].spec.x.
func In(us []Unknown, keys ...any) []Unknown {
	if len(us) == 0 {
		return us
	}
	var prefix strings.Builder
	for _, k := range keys {
		switch k := k.(type) {
		case int:
			fmt.Fprintf(&prefix, "[%d]", k)
		default:
			if prefix.Len() > 0 {
				prefix.WriteByte('.')
			}
			fmt.Fprint(&prefix, k)
		}
	}
	out := make([]Unknown, len(us))
	for i, u := range us {
		sep := "."
		if prefix.Len() == 0 || strings.HasPrefix(u.Path, "[") {
			sep = ""
		}
		u.Path = prefix.String() + sep + u.Path
		if u.keys != nil {
			u.keys = append(append([]any(nil), keys...), u.keys...)
		}
		out[i] = u
	}
	return out
}

// locate follows path (sigs.k8s.io/json's: keys joined by '.', list indexes as [i]) through type t and
// returns its keys and the JSON names of the object that should hold the last one. The last key is what
// is left of the path at the first struct that does not have the next one, so an unknown key that itself
// holds dots (app.kubernetes.io/name under metadata) stays one key. keys is nil where the path cannot be
// followed (a value of a type that decodes itself).
func locate(t reflect.Type, path string) (keys []any, known []string) {
	rest := path
	for {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			fields := structFields(t)
			seg, after := cutKey(rest)
			if ft, ok := fields.types[seg]; ok && after != "" {
				keys, t, rest = append(keys, seg), ft, strings.TrimPrefix(after, ".")
				continue
			}
			if rest == "" {
				return nil, nil
			}
			return append(keys, rest), fields.names
		case reflect.Slice, reflect.Array:
			if !strings.HasPrefix(rest, "[") {
				return nil, nil
			}
			end := strings.IndexByte(rest, ']')
			n, err := strconv.Atoi(rest[1:max(end, 1)])
			if end < 0 || err != nil {
				return nil, nil
			}
			keys, t, rest = append(keys, n), t.Elem(), strings.TrimPrefix(rest[end+1:], ".")
		case reflect.Map:
			seg, after := cutKey(rest)
			if seg == "" || after == "" {
				return nil, nil
			}
			keys, t, rest = append(keys, seg), t.Elem(), strings.TrimPrefix(after, ".")
		default:
			return nil, nil
		}
	}
}

// cutKey splits the path's first key from the rest (which starts with '.' or '[', or is empty).
func cutKey(path string) (key, rest string) {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i], path[i:]
	}
	return path, ""
}

// Member is name, a member of a document's top level that is none of known (the document's members, for
// the suggestion): for a format read member by member rather than into a Go type.
func Member(name string, known []string) Unknown {
	return Unknown{Path: name, Meant: didyoumean.Closest(name, known), keys: []any{name}}
}

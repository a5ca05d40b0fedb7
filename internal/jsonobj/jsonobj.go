// Package jsonobj reads and edits Kubernetes objects held as generic JSON values (map[string]any,
// []any, json.Number, string, bool, nil), addressed by dotted paths with list indexes
// ("spec.template.spec.containers[0].image"). The replay keeps its world this way, and the conformance
// generator its objects, because the module hashes pod templates byte for byte: a round trip through
// typed structs would add or drop fields and change revision names.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Obj is a JSON object.
type Obj = map[string]any

// Decode parses one JSON value keeping numbers as json.Number, so integers survive unchanged.
func Decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

// DecodeObj is Decode for a value that must be an object.
func DecodeObj(b []byte) (Obj, error) {
	v, err := Decode(b)
	if err != nil {
		return nil, err
	}
	o, ok := v.(Obj)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object")
	}
	return o, nil
}

// Clone deep-copies a generic JSON value.
func Clone(v any) any {
	return rebuild(v, func(leaf any) any {
		if r, ok := leaf.(json.RawMessage); ok {
			return append(json.RawMessage(nil), r...)
		}
		return leaf
	})
}

// rebuild copies the objects and lists of v, replacing every other value by leaf(value).
func rebuild(v any, leaf func(any) any) any {
	switch x := v.(type) {
	case Obj:
		o := make(Obj, len(x))
		for k, e := range x {
			o[k] = rebuild(e, leaf)
		}
		return o
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = rebuild(e, leaf)
		}
		return a
	}
	return leaf(v)
}

// CloneObj deep-copies an object (nil stays nil).
func CloneObj(o Obj) Obj {
	if o == nil {
		return nil
	}
	return Clone(o).(Obj)
}

// AsObj is v as an object, nil when it is not one.
func AsObj(v any) Obj {
	o, _ := v.(Obj)
	return o
}

// AsArr is v as a list, nil when it is not one.
func AsArr(v any) []any {
	a, _ := v.([]any)
	return a
}

// Get follows a dotted path ("a.b[2].c"); nil when any step is missing.
func Get(v any, path string) any {
	for _, k := range splitPath(path) {
		if v = step(v, k); v == nil {
			return nil
		}
	}
	return v
}

// step is v's member k (a key of an object, an index of a list); nil when there is none.
func step(v any, k any) any {
	switch key := k.(type) {
	case string:
		if o, ok := v.(Obj); ok {
			return o[key]
		}
	case int:
		if a, ok := v.([]any); ok && key >= 0 && key < len(a) {
			return a[key]
		}
	}
	return nil
}

// GetStr is the string at path, "" when absent or not a string.
func GetStr(v any, path string) string {
	s, _ := Get(v, path).(string)
	return s
}

// GetObj is the object at path, nil when absent or not an object.
func GetObj(v any, path string) Obj {
	o, _ := Get(v, path).(Obj)
	return o
}

// GetArr is the list at path, nil when absent or not a list.
func GetArr(v any, path string) []any {
	a, _ := Get(v, path).([]any)
	return a
}

// GetInt reads an integer; ok is false when the value is absent or not a number.
func GetInt(v any, path string) (int64, bool) {
	return AsInt(Get(v, path))
}

// AsInt is a number as an integer (a fraction is truncated); ok is false for anything else.
func AsInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil {
				return 0, false
			}
			return int64(f), true
		}
		return i, true
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// Num is an integer as a JSON number.
func Num(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }

// Set assigns at a dotted path, creating intermediate objects; list indexes must exist.
func Set(o Obj, path string, val any) error {
	keys := splitPath(path)
	var cur any = o
	for i, k := range keys {
		last := i == len(keys)-1
		switch key := k.(type) {
		case string:
			m, ok := cur.(Obj)
			if !ok {
				return fmt.Errorf("%s: %q is not inside an object", path, key)
			}
			if last {
				m[key] = val
				return nil
			}
			next, exists := m[key]
			if !exists || next == nil {
				if _, isIdx := keys[i+1].(int); isIdx {
					return fmt.Errorf("%s: no list at %q", path, key)
				}
				next = Obj{}
				m[key] = next
			}
			cur = next
		case int:
			a, ok := cur.([]any)
			if !ok || key < 0 || key >= len(a) {
				return fmt.Errorf("%s: index %d out of range", path, key)
			}
			if last {
				a[key] = val
				return nil
			}
			cur = a[key]
		}
	}
	return nil
}

// SetDefault assigns val at key when the key is absent or null: a typed decode reads null as the zero
// value, which the API server defaults (a Go type marshalled writes null for a nil pointer without
// omitempty, e.g. a probe's grpc.service).
func SetDefault(o Obj, key string, val any) {
	if v, ok := o[key]; !ok || v == nil {
		o[key] = val
	}
}

// Ensure returns o[key] as an object, creating it when absent.
func Ensure(o Obj, key string) Obj {
	if m, ok := o[key].(Obj); ok {
		return m
	}
	m := Obj{}
	o[key] = m
	return m
}

// Delete removes the key at a dotted path, if present.
func Delete(o Obj, path string) {
	keys := splitPath(path)
	if len(keys) == 0 {
		return
	}
	var parent any = o
	for _, k := range keys[:len(keys)-1] {
		if parent = step(parent, k); parent == nil {
			return
		}
	}
	if m, ok := parent.(Obj); ok {
		if key, ok := keys[len(keys)-1].(string); ok {
			delete(m, key)
		}
	}
}

// Equal compares two generic values as JSON values (numbers numerically).
func Equal(a, b any) bool {
	return reflect.DeepEqual(Normalize(a), Normalize(b))
}

// Normalize is v with every number a float64 and every json.RawMessage decoded, so that equal JSON
// values are reflect.DeepEqual.
func Normalize(v any) any { return rebuild(v, normalizeLeaf) }

func normalizeLeaf(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return string(x)
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case json.RawMessage:
		if d, err := Decode(x); err == nil {
			return Normalize(d)
		}
	}
	return v
}

// Keys returns a dotted path's keys (string) and list indexes (int): "spec.containers[0].image" is
// spec, containers, 0, image.
func Keys(path string) []any { return append([]any(nil), splitPath(path)...) }

// splitPath splits a dotted path into keys (string) and list indexes (int). Paths come from code and
// scenarios, so a few thousand distinct ones are cached.
func splitPath(path string) []any {
	if v, ok := splitCache.Load(path); ok {
		return v.([]any)
	}
	out := splitPathUncached(path)
	if splitCacheLen.Load() < maxSplitCache {
		if _, loaded := splitCache.LoadOrStore(path, out); !loaded {
			splitCacheLen.Add(1)
		}
	}
	return out
}

const maxSplitCache = 4096

var (
	splitCache    sync.Map // path -> []any
	splitCacheLen atomic.Int32
)

func splitPathUncached(path string) []any {
	var out []any
	for _, part := range strings.Split(path, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part, ']')
			if j < i {
				out = append(out, part)
				break
			}
			n, err := strconv.Atoi(part[i+1 : j])
			if err != nil {
				out = append(out, part)
				break
			}
			out = append(out, n)
			part = part[j+1:]
		}
	}
	return out
}

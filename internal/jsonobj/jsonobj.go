// Package jsonobj reads and edits Kubernetes objects held as generic JSON values (map[string]any,
// []any, json.Number, string, bool, nil), addressed by paths as kubectl's JSONPath writes them
// ("spec.template.spec.containers[0].image", `metadata.annotations["example.com/approve"]`; ParsePath). The replay keeps its world this way, and the conformance
// generator its objects, because the module hashes pod templates byte for byte: a round trip through
// typed structs would add or drop fields and change revision names.
package jsonobj

import (
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

// Get follows a path ("a.b[2].c", ParsePath); nil when any step is missing or the path is malformed.
func Get(v any, path string) any {
	if got, ok := getDotted(v, path); ok {
		return got
	}
	keys, err := splitPath(path)
	if err != nil {
		return nil
	}
	for _, k := range keys {
		if v = step(v, k); v == nil {
			return nil
		}
	}
	return v
}

// getDotted is Get of a path of keys and dots only ("metadata.name", most of those code reads), walked
// as it is read: the path cache's lookup cost more than the walk. ok is false for a path with a bracket
// or a backslash, which Get parses.
func getDotted(v any, path string) (got any, ok bool) {
	if path == "" || strings.ContainsAny(path, `[]\`) {
		return nil, false
	}
	if path[0] == '.' {
		path = path[1:] // kubectl's {.metadata.name}
	}
	for {
		key, rest, more := strings.Cut(path, ".")
		if key == "" {
			return nil, true // an empty key: a malformed path
		}
		o, isObj := v.(Obj)
		if !isObj {
			return nil, true
		}
		if v = o[key]; v == nil || !more {
			return v, true
		}
		path = rest
	}
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

// Set assigns at a path (ParsePath), creating the objects missing on the way; a list index must be
// one of the list's.
func Set(o Obj, path string, val any) error {
	return assign(o, path, func(any) any { return val })
}

// MergeAt applies patch at a path (ParsePath) as a JSON merge patch (RFC 7386, kubectl patch --type
// merge): an object is merged into the object there key by key (null removes a key, the others are kept),
// anything else replaces what is there, and null removes the field itself. The objects missing on the
// way are created; a list index must be one of the list's. patch is copied, not shared.
func MergeAt(o Obj, path string, patch any) error {
	if err := CheckMerge(path, patch); err != nil {
		return err
	}
	if patch == nil {
		Delete(o, path)
		return nil
	}
	return assign(o, path, func(old any) any { return mergePatch(old, Clone(patch)) })
}

// CheckMerge is what MergeAt refuses whatever the object: a malformed path, and null at a list index.
func CheckMerge(path string, patch any) error {
	keys, err := splitPath(path)
	if err != nil {
		return err
	}
	if i, ok := keys[len(keys)-1].(int); ok && patch == nil {
		return fmt.Errorf("%s: null removes a key, not a list item ([%d])", path, i)
	}
	return nil
}

// mergePatch is RFC 7386's MergePatch(target, patch), reusing target's object.
func mergePatch(target, patch any) any {
	p, ok := patch.(Obj)
	if !ok {
		return patch
	}
	t, ok := target.(Obj)
	if !ok {
		t = Obj{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = mergePatch(t[k], v)
		}
	}
	return t
}

// assign sets the value at path to value(the value there now, nil when none), creating the objects
// missing on the way.
func assign(o Obj, path string, value func(old any) any) error {
	keys, err := splitPath(path)
	if err != nil {
		return err
	}
	var cur any = o
	for i, k := range keys {
		at := FormatPath(keys[:i])
		switch key := k.(type) {
		case string:
			m, ok := cur.(Obj)
			if !ok {
				return fmt.Errorf("%s: %s is %s, not an object", path, at, kindOf(cur))
			}
			if i == len(keys)-1 {
				m[key] = value(m[key])
				return nil
			}
			if next, exists := m[key]; exists && next != nil {
				cur = next
				continue
			}
			if _, isIdx := keys[i+1].(int); isIdx {
				return fmt.Errorf("%s: there is no list %s (an index addresses an item of a list that is there)", path, FormatPath(keys[:i+1]))
			}
			next := Obj{}
			m[key], cur = next, next
		case int:
			a, ok := cur.([]any)
			if !ok {
				return fmt.Errorf("%s: %s is %s, not a list", path, at, kindOf(cur))
			}
			if key >= len(a) {
				return fmt.Errorf("%s: %s has %d items, no index %d", path, at, len(a), key)
			}
			if i == len(keys)-1 {
				a[key] = value(a[key])
				return nil
			}
			cur = a[key]
		}
	}
	return nil
}

// kindOf names a JSON value's kind, for an error.
func kindOf(v any) string {
	switch v.(type) {
	case Obj:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
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

// Delete removes the key at a path (ParsePath), if present.
func Delete(o Obj, path string) {
	keys, err := splitPath(path)
	if err != nil {
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

// splitPath is ParsePath of a path from code or a scenario: a few thousand distinct ones are cached.
func splitPath(path string) ([]any, error) {
	if v, ok := splitCache.Load(path); ok {
		r := v.(parsedPath)
		return r.keys, r.err
	}
	keys, err := ParsePath(path)
	if splitCacheLen.Load() < maxSplitCache {
		if _, loaded := splitCache.LoadOrStore(path, parsedPath{keys, err}); !loaded {
			splitCacheLen.Add(1)
		}
	}
	return keys, err
}

type parsedPath struct {
	keys []any
	err  error
}

const maxSplitCache = 4096

var (
	splitCache    sync.Map // path -> parsedPath
	splitCacheLen atomic.Int32
)

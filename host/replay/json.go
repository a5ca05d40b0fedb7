package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Obj is a Kubernetes object as generic JSON. The world is kept as JSON values, not typed structs,
// because the module hashes pod templates byte for byte: a typed round trip would add or drop
// fields and change revision names.
type Obj = map[string]any

// decodeJSON parses JSON keeping numbers as json.Number, so integers survive unchanged.
func decodeJSON(b []byte) (any, error) {
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

func decodeObj(b []byte) (Obj, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	o, ok := v.(Obj)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object")
	}
	return o, nil
}

// mustJSON encodes like encoding/json (sorted map keys); values here are always encodable.
func mustJSON(v any) []byte {
	b, err := appendJSON(nil, v)
	if err != nil {
		panic(fmt.Sprintf("replay: encoding JSON: %v", err))
	}
	return b
}

// cloneJSON deep-copies a generic JSON value.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case Obj:
		o := make(Obj, len(x))
		for k, e := range x {
			o[k] = cloneJSON(e)
		}
		return o
	case []any:
		o := make([]any, len(x))
		for i, e := range x {
			o[i] = cloneJSON(e)
		}
		return o
	case json.RawMessage:
		return append(json.RawMessage(nil), x...)
	}
	return v
}

func cloneObj(o Obj) Obj {
	if o == nil {
		return nil
	}
	return cloneJSON(o).(Obj)
}

// splitPath splits "spec.template.spec.containers[0].image" into keys and indexes. The result is
// shared: callers only read it. Splitting on every get was a fifth of a replay's allocations; the
// paths are the code's constants and a scenario's own, so the cache stays small (and is capped).
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

// get follows a dotted path ("a.b[2].c"); nil when any step is missing.
func get(v any, path string) any {
	for _, k := range splitPath(path) {
		switch key := k.(type) {
		case string:
			o, ok := v.(Obj)
			if !ok {
				return nil
			}
			v = o[key]
		case int:
			a, ok := v.([]any)
			if !ok || key < 0 || key >= len(a) {
				return nil
			}
			v = a[key]
		}
	}
	return v
}

func getStr(v any, path string) string {
	s, _ := get(v, path).(string)
	return s
}

func getObj(v any, path string) Obj {
	o, _ := get(v, path).(Obj)
	return o
}

func getArr(v any, path string) []any {
	a, _ := get(v, path).([]any)
	return a
}

// getInt reads an integer; ok is false when the value is absent or not a number.
func getInt(v any, path string) (int64, bool) {
	return asInt(get(v, path))
}

func asInt(v any) (int64, bool) {
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

func num(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }

// set assigns at a dotted path, creating intermediate objects; list indexes must exist.
func set(o Obj, path string, val any) error {
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

// setDefault assigns val at key only when the key is absent.
func setDefault(o Obj, key string, val any) {
	if _, ok := o[key]; !ok {
		o[key] = val
	}
}

// ensureObj returns o[key] as an object, creating it when absent.
func ensureObj(o Obj, key string) Obj {
	if m, ok := o[key].(Obj); ok {
		return m
	}
	m := Obj{}
	o[key] = m
	return m
}

// jsonEqual compares two generic values as JSON (numbers by their literal after normalising).
func jsonEqual(a, b any) bool {
	return bytes.Equal(mustJSON(normalizeNumbers(a)), mustJSON(normalizeNumbers(b)))
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case Obj:
		o := make(Obj, len(x))
		for k, e := range x {
			o[k] = normalizeNumbers(e)
		}
		return o
	case []any:
		o := make([]any, len(x))
		for i, e := range x {
			o[i] = normalizeNumbers(e)
		}
		return o
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
	case json.RawMessage:
		if d, err := decodeJSON(x); err == nil {
			return normalizeNumbers(d)
		}
	}
	return v
}

// deletePath removes the key at a dotted path, if present.
func deletePath(o Obj, path string) {
	keys := splitPath(path)
	var cur any = o
	for i, k := range keys {
		last := i == len(keys)-1
		switch key := k.(type) {
		case string:
			m, ok := cur.(Obj)
			if !ok {
				return
			}
			if last {
				delete(m, key)
				return
			}
			cur = m[key]
		case int:
			a, ok := cur.([]any)
			if !ok || key < 0 || key >= len(a) || last {
				return
			}
			cur = a[key]
		}
	}
}

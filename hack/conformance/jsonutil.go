package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// M is a decoded JSON object. All JSON in the generator is handled as generic values
// (map[string]any / []any / json.Number / string / bool / nil).
type M = map[string]any

// compactJSON is a pre-encoded JSON value that the pretty printer writes verbatim on one line.
// ControllerRevision .data is written this way: upstream compares revision data byte-wise
// (Data.Raw), and a real API server returns it in the compact form the controller created.
type compactJSON []byte

// decode parses JSON keeping numbers as json.Number.
func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func mustDecodeObj(b []byte) M {
	v, err := decode(b)
	if err != nil {
		fatalf("decoding JSON: %v\n%s", err, trunc(b))
	}
	o, ok := v.(M)
	if !ok {
		fatalf("expected a JSON object:\n%s", trunc(b))
	}
	return o
}

func trunc(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// clone deep-copies a generic JSON value.
func clone[T any](v T) T {
	return cloneAny(v).(T)
}

func cloneAny(v any) any {
	switch x := v.(type) {
	case M:
		o := make(M, len(x))
		for k, e := range x {
			o[k] = cloneAny(e)
		}
		return o
	case []any:
		o := make([]any, len(x))
		for i, e := range x {
			o[i] = cloneAny(e)
		}
		return o
	case compactJSON:
		return append(compactJSON(nil), x...)
	default:
		return v
	}
}

// compactMarshal encodes like Go's json.Marshal of a map (sorted keys, HTML escaping): the
// form upstream's getPatch produces for ControllerRevision data.
func compactMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		fatalf("marshal: %v", err)
	}
	return b
}

// pretty encodes v with 2-space indentation and sorted object keys; compactJSON values are
// written verbatim. The output ends with a newline.
func pretty(v any) []byte {
	var b bytes.Buffer
	writePretty(&b, v, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func writePretty(b *bytes.Buffer, v any, ind string) {
	switch x := v.(type) {
	case M:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{\n")
		for i, k := range keys {
			b.WriteString(ind + "  ")
			b.Write(compactMarshal(k))
			b.WriteString(": ")
			writePretty(b, x[k], ind+"  ")
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(ind + "}")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(ind + "  ")
			writePretty(b, e, ind+"  ")
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(ind + "]")
	case compactJSON:
		b.Write(x)
	default:
		b.Write(compactMarshal(x))
	}
}

// ---- path helpers on generic JSON ----

func obj(v any) M {
	o, _ := v.(M)
	return o
}

func arr(v any) []any {
	a, _ := v.([]any)
	return a
}

// get follows a dotted path of object keys.
func get(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		o, ok := v.(M)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

func getStr(v any, path string) string {
	s, _ := get(v, path).(string)
	return s
}

func getInt(v any, path string) int {
	switch n := get(v, path).(type) {
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			fatalf("%s: %v", path, err)
		}
		return int(i)
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

// set assigns at a dotted path, creating intermediate objects.
func set(v M, path string, val any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		n, ok := v[k].(M)
		if !ok {
			n = M{}
			v[k] = n
		}
		v = n
	}
	v[keys[len(keys)-1]] = val
}

// del removes the key at a dotted path (if present).
func del(v M, path string) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		n, ok := v[k].(M)
		if !ok {
			return
		}
		v = n
	}
	delete(v, keys[len(keys)-1])
}

func num(i int) json.Number { return json.Number(strconv.Itoa(i)) }

// jsonEqual compares two generic values as JSON values (numbers numerically via their literal).
func jsonEqual(a, b any) bool {
	return bytes.Equal(compactMarshal(normalizeNums(a)), compactMarshal(normalizeNums(b)))
}

func normalizeNums(v any) any {
	switch x := v.(type) {
	case M:
		o := make(M, len(x))
		for k, e := range x {
			o[k] = normalizeNums(e)
		}
		return o
	case []any:
		o := make([]any, len(x))
		for i, e := range x {
			o[i] = normalizeNums(e)
		}
		return o
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return string(x)
		}
		return f
	case int:
		return float64(x)
	case compactJSON:
		v, err := decode(x)
		if err != nil {
			fatalf("bad compact JSON: %v", err)
		}
		return normalizeNums(v)
	}
	return v
}

// stripKeys removes every object key named k, recursively (used to compare plans modulo
// resourceVersion).
func stripKeys(v any, names ...string) any {
	switch x := v.(type) {
	case M:
		o := make(M, len(x))
		for k, e := range x {
			skip := false
			for _, n := range names {
				if k == n {
					skip = true
				}
			}
			if !skip {
				o[k] = stripKeys(e, names...)
			}
		}
		return o
	case []any:
		o := make([]any, len(x))
		for i, e := range x {
			o[i] = stripKeys(e, names...)
		}
		return o
	}
	return v
}

func fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

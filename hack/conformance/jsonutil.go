package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// M is a decoded JSON object. All JSON in the generator is handled as generic values
// (map[string]any / []any / json.Number / string / bool / nil).
type M = map[string]any

// compactJSON is a pre-encoded JSON value that the pretty printer writes verbatim on one line.
// ControllerRevision .data is written this way: upstream compares revision data byte-wise
// (Data.Raw), and a real API server returns it in the compact form the controller created.
type compactJSON = json.RawMessage

func mustDecodeObj(b []byte) M {
	o, err := jsonobj.DecodeObj(b)
	if err != nil {
		fatalf("decoding JSON: %v\n%s", err, trunc(b))
	}
	return o
}

func trunc(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// clone deep-copies a generic JSON value, keeping its type.
func clone[T any](v T) T {
	return jsonobj.Clone(v).(T)
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

// ---- the generator's error policy over internal/jsonobj: a wrong path is a bug, so it stops ----

func getInt(v any, path string) int {
	i, _ := jsonobj.GetInt(v, path)
	return int(i)
}

// set assigns at a dotted path, creating intermediate objects.
func set(v M, path string, val any) {
	if err := jsonobj.Set(v, path, val); err != nil {
		fatalf("%v", err)
	}
}

func num(i int) json.Number { return jsonobj.Num(int64(i)) }

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

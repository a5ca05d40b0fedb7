// Package jsoncmp compares JSON documents as values: key order is irrelevant and numbers compare
// numerically. Plans are checked this way against the oracle's, so a difference names the first
// path where two plans part.
package jsoncmp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Diff returns "" when a and b are the same JSON value, else a description of the first difference
// ("actions[2].object.metadata.labels: missing key \"app\" in actual").
func Diff(expected, actual []byte) string {
	e, err := decode(expected)
	if err != nil {
		return "expected: " + err.Error()
	}
	a, err := decode(actual)
	if err != nil {
		return "actual: " + err.Error()
	}
	return diff("", e, a)
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return v, nil
}

func diff(path string, e, a any) string {
	switch ev := e.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: expected object, got %s", show(path), brief(a))
		}
		keys := make([]string, 0, len(ev)+len(av))
		for k := range ev {
			keys = append(keys, k)
		}
		for k := range av {
			if _, ok := ev[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			x, inE := ev[k]
			y, inA := av[k]
			switch {
			case !inA:
				return fmt.Sprintf("%s: missing key %q in actual (expected %s)", show(path), k, brief(x))
			case !inE:
				return fmt.Sprintf("%s: unexpected key %q in actual (%s)", show(path), k, brief(y))
			}
			if d := diff(join(path, k), x, y); d != "" {
				return d
			}
		}
		return ""
	case []any:
		av, ok := a.([]any)
		if !ok {
			return fmt.Sprintf("%s: expected array, got %s", show(path), brief(a))
		}
		for i := 0; i < len(ev) && i < len(av); i++ {
			if d := diff(fmt.Sprintf("%s[%d]", path, i), ev[i], av[i]); d != "" {
				return d
			}
		}
		if len(ev) != len(av) {
			return fmt.Sprintf("%s: expected %d elements, got %d", show(path), len(ev), len(av))
		}
		return ""
	case json.Number:
		an, ok := a.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: expected number %s, got %s", show(path), ev, brief(a))
		}
		ef, err1 := ev.Float64()
		af, err2 := an.Float64()
		if err1 != nil || err2 != nil || ef != af {
			return fmt.Sprintf("%s: expected %s, got %s", show(path), ev, an)
		}
		return ""
	default:
		if e != a {
			return fmt.Sprintf("%s: expected %s, got %s", show(path), brief(e), brief(a))
		}
		return ""
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func show(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

// brief renders a value in at most 120 characters.
func brief(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return strings.TrimSpace(s)
}

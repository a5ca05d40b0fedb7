package rollout

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
)

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// absent stands for a key or list item one side does not have.
var absent = &struct{}{}

// Diff lists how two JSON documents differ, by path, as a person reads a template change: a field that
// changed, a subtree added or removed whole (one line, not one per field), and a list reordered. Lists
// whose items all carry a distinct "name" (containers, env, volumes, ports) are compared by name, as
// strategic merge treats them; other lists by index when their lengths agree, else whole. Numbers are
// equal by value however each side was decoded (int64 from a dynamic client, float64 from a file).
// It is the one JSON diff of the host: `history` shows template changes with it, `migrate` refuses a
// spec the target would store differently with it.
func Diff(a, b any) []Change {
	return diff(normalize(a), normalize(b))
}

// normalize decodes v as encoding/json does (numbers float64), through its JSON.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// diff is Diff of documents decoded by encoding/json.
func diff(a, b any) []Change {
	out := []Change{}
	walk("", a, b, &out)
	return out
}

func walk(path string, a, b any, out *[]Change) {
	if a != absent && b != absent && reflect.DeepEqual(a, b) {
		return
	}
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(join(path, k), valueOr(am, k), valueOr(bm, k), out)
		}
		return
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	switch {
	case aIsList && bIsList && namedItems(al) && namedItems(bl):
		an, bn := byName(al), byName(bl)
		var order []string // names in b's order, then those only a has
		for _, e := range bl {
			order = append(order, name(e))
		}
		for _, e := range al {
			if _, ok := bn[name(e)]; !ok {
				order = append(order, name(e))
			}
		}
		for _, n := range order {
			ai, ok := an[n]
			if !ok {
				ai = absent
			}
			bi, ok := bn[n]
			if !ok {
				bi = absent
			}
			walk(fmt.Sprintf("%s[%s]", path, n), ai, bi, out)
		}
		if ao, bo := common(al, bn), common(bl, an); !reflect.DeepEqual(ao, bo) {
			*out = append(*out, Change{Path: path + " (order)", From: raw(ao), To: raw(bo)})
		}
	case aIsList && bIsList && len(al) == len(bl):
		for i := range al {
			walk(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
		}
	default:
		*out = append(*out, Change{Path: path, From: raw(a), To: raw(b)})
	}
}

func join(path, k string) string {
	if !plainKey.MatchString(k) { // a label or annotation key: example.com/version
		q, _ := json.Marshal(k)
		return path + "[" + string(q) + "]"
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func valueOr(m map[string]any, k string) any {
	if v, ok := m[k]; ok {
		return v
	}
	return absent
}

func raw(v any) json.RawMessage {
	if v == absent {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

func name(item any) string { return item.(map[string]any)["name"].(string) }

func byName(items []any) map[string]any {
	m := make(map[string]any, len(items))
	for _, e := range items {
		m[name(e)] = e
	}
	return m
}

// common is the names of items, in their order, that the other list has too.
func common(items []any, other map[string]any) []string {
	out := []string{}
	for _, e := range items {
		if _, ok := other[name(e)]; ok {
			out = append(out, name(e))
		}
	}
	return out
}

func namedItems(items []any) bool {
	seen := map[string]bool{}
	for _, e := range items {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		n, ok := m["name"].(string)
		if !ok || seen[n] {
			return false
		}
		seen[n] = true
	}
	return true
}

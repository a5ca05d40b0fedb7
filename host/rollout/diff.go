package rollout

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
)

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// diff lists the leaf values that differ between two JSON documents, by path. Lists whose items all
// carry a distinct "name" (containers, env, volumes, ports) are compared by name, as a person reads
// them and as strategic merge treats them; other lists by index.
func diff(a, b any) []Change {
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", a, fa)
	flatten("", b, fb)
	paths := make([]string, 0, len(fa)+len(fb))
	for p := range fa {
		paths = append(paths, p)
	}
	for p := range fb {
		if _, ok := fa[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	out := []Change{}
	for _, p := range paths {
		if fa[p] != fb[p] {
			out = append(out, Change{Path: p, From: fa[p], To: fb[p]})
		}
	}
	return out
}

func flatten(path string, v any, out map[string]string) {
	join := func(k string) string {
		if !plainKey.MatchString(k) { // a label or annotation key: example.com/version
			q, _ := json.Marshal(k)
			return path + "[" + string(q) + "]"
		}
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[path] = "{}"
		}
		for k, e := range x {
			flatten(join(k), e, out)
		}
	case []any:
		if len(x) == 0 {
			out[path] = "[]"
		}
		named := namedItems(x)
		for i, e := range x {
			key := fmt.Sprintf("%s[%d]", path, i)
			if named {
				key = fmt.Sprintf("%s[%s]", path, e.(map[string]any)["name"])
			}
			flatten(key, e, out)
		}
	default:
		b, _ := json.Marshal(x)
		out[path] = string(b)
	}
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

package rollout

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestDiffReadsAsATemplateChange(t *testing.T) {
	parse := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	show := func(cs []Change) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, fmt.Sprintf("%s: %s -> %s", c.Path, c.From, c.To))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		a, b string
		want []string
	}{
		{"fields, subtrees, list items by name and order",
			`{"metadata":{"labels":{"app":"web"},"annotations":{"example.com/v":"1"}},"spec":{"containers":[{"name":"app","image":"a:1","args":["x","y"]},{"name":"side","image":"s:1"}],"tolerations":[{"key":"k"}]}}`,
			`{"metadata":{"labels":{"app":"web","tier":"db"}},"spec":{"containers":[{"name":"side","image":"s:1"},{"name":"app","image":"a:2","args":["x"]}],"tolerations":[]}}`,
			[]string{
				`metadata.annotations: {"example.com/v":"1"} -> `,
				`metadata.labels.tier:  -> "db"`,
				`spec.containers[app].args: ["x","y"] -> ["x"]`,
				`spec.containers[app].image: "a:1" -> "a:2"`,
				`spec.containers (order): ["app","side"] -> ["side","app"]`,
				`spec.tolerations: [{"key":"k"}] -> []`,
			}},
		{"a container added whole is one change",
			`{"spec":{"containers":[{"name":"app","image":"a:1"}]}}`,
			`{"spec":{"containers":[{"name":"app","image":"a:1"},{"name":"side","image":"s:1","env":[{"name":"A","value":"1"}]}]}}`,
			[]string{`spec.containers[side]:  -> {"env":[{"name":"A","value":"1"}],"image":"s:1","name":"side"}`}},
		{"reordered only",
			`{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}`,
			`{"spec":{"containers":[{"name":"b"},{"name":"a"}]}}`,
			[]string{`spec.containers (order): ["a","b"] -> ["b","a"]`}},
		{"label keys with dots and slashes are quoted",
			`{"metadata":{"annotations":{"example.com/version":"v1"}}}`,
			`{"metadata":{"annotations":{"example.com/version":"v2"}}}`,
			[]string{`metadata.annotations["example.com/version"]: "v1" -> "v2"`}},
		{"same", `{"spec":{"x":[1,2]}}`, `{"spec":{"x":[1,2]}}`, []string{}},
	} {
		if got := show(diff(parse(tc.a), parse(tc.b))); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

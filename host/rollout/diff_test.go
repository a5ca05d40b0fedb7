package rollout

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDiffNamesListItemsByName(t *testing.T) {
	parse := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	a := parse(`{"metadata":{"labels":{"app":"web"},"annotations":{"example.com/v":"1"}},"spec":{"containers":[{"name":"app","image":"a:1","args":["x","y"]},{"name":"side","image":"s:1"}],"tolerations":[{"key":"k"}]}}`)
	b := parse(`{"metadata":{"labels":{"app":"web","tier":"db"}},"spec":{"containers":[{"name":"side","image":"s:1"},{"name":"app","image":"a:2","args":["x"]}],"tolerations":[]}}`)
	got := diff(a, b)
	want := []Change{
		{Path: `metadata.annotations["example.com/v"]`, From: `"1"`},
		{Path: "metadata.labels.tier", To: `"db"`},
		{Path: "spec.containers[app].args[1]", From: `"y"`},
		{Path: "spec.containers[app].image", From: `"a:1"`, To: `"a:2"`},
		{Path: "spec.tolerations", To: "[]"},
		{Path: "spec.tolerations[0].key", From: `"k"`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff:\n got %+v\nwant %+v", got, want)
	}
	if d := diff(a, a); len(d) != 0 {
		t.Errorf("a template differs from itself: %+v", d)
	}
}

package jsoncmp

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	cases := []struct {
		e, a, want string // want: "" for equal, else a substring of the difference
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1.0}`, ""},
		{`{"a":1}`, `{"a":2}`, "a: expected 1, got 2"},
		{`{"a":{"b":"x"}}`, `{"a":{}}`, `a: missing key "b"`},
		{`{"a":{}}`, `{"a":{"c":true}}`, `a: unexpected key "c"`},
		{`[1,2,3]`, `[1,2]`, "expected 3 elements, got 2"},
		{`{"x":[{"y":null}]}`, `{"x":[{"y":false}]}`, "x[0].y: expected null, got false"},
		{`{"a":"1"}`, `{"a":1}`, "expected \"1\", got 1"},
		{`{`, `{}`, "expected: invalid JSON"},
	}
	for _, c := range cases {
		got := Diff([]byte(c.e), []byte(c.a))
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("Diff(%s, %s) = %q, want %q", c.e, c.a, got, c.want)
		}
	}
}

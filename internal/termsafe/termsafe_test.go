package termsafe

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\nwith tab\t":             "plain text\nwith tab\t",
		"pod web-0 \x1b]0;pwned\x07 created": `pod web-0 \x1b]0;pwned\x07 created`,
		"\x1b[2J\x1b[Hclear":                 `\x1b[2J\x1b[Hclear`,
		"cr\rover":                           `cr\x0dover`,
		"c1 \u009b31m":                       `c1 \u009b31m`,
		"rtl \u202eevil\u202c":               `rtl \u202eevil\u202c`,
		"bad utf8 \xff":                      "bad utf8 \uFFFD",
		"ünïcödé and 中文 stay":                "ünïcödé and 中文 stay",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSON(t *testing.T) {
	in := []byte("{\"message\":\"a\u009b31m\u202eb\x7f\"}")
	got := JSON(in)
	if string(got) != `{"message":"a\u009b31m\u202eb\u007f"}` {
		t.Fatalf("JSON = %s", got)
	}
	var a, b any
	if err := json.Unmarshal(in, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &b); err != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("not the same JSON value: %v %v", b, err)
	}
	plain := []byte(`{"a":"b"}`)
	if &JSON(plain)[0] != &plain[0] {
		t.Fatal("a clean document is copied")
	}
}

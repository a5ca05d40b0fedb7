package termsafe

import (
	"bytes"
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

// recordingWriter keeps what it was given and the largest single write.
type recordingWriter struct {
	bytes.Buffer
	largest int
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	r.largest = max(r.largest, len(p))
	return r.Buffer.Write(p)
}

// A JSONWriter writes what JSON writes of the whole document, however the document is cut into writes
// (inside a character, inside a run of invalid bytes), and writes it line by line rather than holding it.
func TestJSONWriter(t *testing.T) {
	doc := []byte("{\n  \"a\": \"x\u009b31m\u202eb\x7f\",\n  \"bad\": \"\xff\xfe\xfd\",\n  \"nc\": \"\uFFFE\uFFFF 中文\",\n  \"plain\": \"text\"\n}")
	want := JSON(doc)
	for size := 1; size <= len(doc); size++ {
		var out recordingWriter
		j := NewJSONWriter(&out)
		for at := 0; at < len(doc); at += size {
			if n, err := j.Write(doc[at:min(at+size, len(doc))]); err != nil || n != min(size, len(doc)-at) {
				t.Fatalf("write of %d: %d, %v", size, n, err)
			}
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("writes of %d bytes: %q, want %q", size, out.Bytes(), want)
		}
		if size == len(doc) && out.largest >= len(want) {
			t.Errorf("the document was written in one piece of %d bytes", out.largest)
		}
	}
}

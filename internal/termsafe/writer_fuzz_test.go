package termsafe

import (
	"bytes"
	"testing"
)

// FuzzJSONWriter: for any document and any cut of it into writes (each byte of cuts the length of the
// next write, 0 an empty write), a JSONWriter writes exactly what JSON writes of the whole document.
func FuzzJSONWriter(f *testing.F) {
	f.Add([]byte("{\n\"a\":\"\xff\n\xfe\u202e\"\n}"), []byte{1, 2, 0, 3})
	f.Add([]byte("\xe4\xb8\n\xad\u009b\n\n\xef\xbf\xbe"), []byte{2, 1, 1})
	f.Add([]byte("no newline \x7f \xff"), []byte{4})
	f.Fuzz(func(t *testing.T, doc, cuts []byte) {
		var out bytes.Buffer
		j := NewJSONWriter(&out)
		at := 0
		for k := 0; at < len(doc); k++ {
			n := len(doc) - at
			if k < len(cuts) {
				n = min(int(cuts[k]), n)
			}
			if w, err := j.Write(doc[at : at+n]); err != nil || w != n {
				t.Fatalf("Write of %d: %d, %v", n, w, err)
			}
			at += n
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if want := JSON(doc); !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("JSONWriter wrote %q, JSON %q (doc %q, cuts %v)", out.Bytes(), want, doc, cuts)
		}
	})
}

// FuzzJSONNeeds: JSON's byte-wise check agrees with its definition, String's characters (needs) and the
// noncharacters, on any bytes.
func FuzzJSONNeeds(f *testing.F) {
	for _, s := range []string{"{\"a\": 1}\n", "\x7f", "\r", "\xc2\x9b", "\u202e", "\uFFFD", "\xff", "\xef\xbf", "\uFFFE", "\uFFFF", "日本\t", "\xc2\xa0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		want := needs(string(doc)) || bytes.Contains(doc, []byte("\uFFFE")) || bytes.Contains(doc, []byte("\uFFFF"))
		if got := jsonNeeds(doc); got != want {
			t.Fatalf("jsonNeeds(%q) = %v, want %v", doc, got, want)
		}
	})
}

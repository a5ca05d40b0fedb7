package jsonobj

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decodeCases are inputs where a decoder of its own could differ from encoding/json: escapes, invalid
// UTF-8, lone and paired surrogates, numbers at the edge of the grammar, duplicate keys, empty containers,
// deep nesting, data after the value.
var decodeCases = []string{
	`{}`, `[]`, `{"a":[]}`, `{"a":{}}`, `null`, `true`, `false`, `0`, `-0`, `12`, `-1.5e+10`, `1E-2`, `0.0`,
	` {"a" : 1 , "b":[ 1 , 2 ] } `, "\t\r\n[1]\n",
	`{"a":1,"a":2}`, `{"a":{"x":1},"a":[2]}`, `{"":1}`,
	`"plain"`, `"esc \" \\ \/ \b \f \n \r \t"`, `"\u00e9\u4e2d\uD83D\uDE00"`, `"\uD83D"`, `"\uDE00"`, `"\uD83Dx"`,
	`"\uD83D\u0041"`, `"\uD83D\uD83D\uDE00"`, `"\u0000"`, `"\uDBFF\uDFFF"`, `{"\uD800":"\uDFFF"}`,
	"\"bad \xff utf8\"", "\"\xed\xa0\x80\"", "\"\xc3\"", "\"\xe2\x82\"", "{\"k\xff\":\"v\xfe\"}", `"é€😀"`,
	"\"\x7f\"", `"\uD834\uDD1E and \uDD1E\uD834"`,
	// refused, by the one pass and by encoding/json
	``, ` `, `{`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`, `1e+`, `tru`, `nulll`,
	`"\x"`, `"\u12"`, `"\uZZZZ"`, `"\'"`, "\"a\nb\"", "\"\x01\"", `"unterminated`, `[1 2]`, `{"a" 1}`, `NaN`,
	"\xef\xbb\xbf{}", `{}}`, `{} {}`, `1 2`, `[1]]`, `{"a":1}]x`, `[1]x`, `1x`, `{}/`, `[`, `]`, `{"a":[1,{"b":]}}`,
	strings.Repeat("[", 1100) + strings.Repeat("]", 1100),
	strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// Decode gives what encoding/json's Decoder gives, value and error, whichever way it took.
func TestDecodeAsEncodingJSON(t *testing.T) {
	for _, in := range append(decodeCases, seedObjects(t)...) {
		checkDecode(t, []byte(in))
	}
}

// The one pass takes the inputs it should: what it refuses costs a second decode.
func TestDecodeOnePass(t *testing.T) {
	for _, in := range append([]string{"{\"a\":[1,\"\\uD83D\",{\"b\":null}],\"c\":\"\xff\"}", ` 1 `, `"x"`}, seedObjects(t)...) {
		d := decoder{data: []byte(in)}
		if _, ok := d.top(); !ok {
			t.Errorf("the one pass refused %.80q", in)
		}
	}
}

// Data after the value is refused, a closing bracket too (encoding/json's Decoder.More alone reports
// "no more" there, and Decode took `{}]x` as `{}`).
func TestDecodeRefusesDataAfterTheValue(t *testing.T) {
	for _, in := range []string{`{}]x`, `{}}`, `[1]]`, `{"a":1}]`, `1 ]`, `{} {}`, `"s"x`} {
		if v, err := Decode([]byte(in)); err == nil {
			t.Errorf("%q: decoded as %#v, want an error", in, v)
		}
	}
	for _, in := range []string{"{} ", "{}\n\t\r ", " [1] "} {
		if _, err := Decode([]byte(in)); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, in := range append(decodeCases, seedObjects(f)...) {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkDecode(t, in) })
}

func checkDecode(t *testing.T, in []byte) {
	t.Helper()
	got, err := Decode(in)
	want, wantErr := decodeStd(in)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%.200q: error %v, encoding/json's %v", in, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%.200q: %#v, encoding/json's %#v", in, got, want)
	}
}

// seedObjects is Kubernetes objects as the replay writes and reads them: a few of the repository's
// scenarios and plans.
func seedObjects(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob("../../testdata/scenarios/oracle/*.json")
	files = append(files, "../../testdata/golden/web-fresh.plan.json")
	var out []string
	for i, f := range files {
		if i%8 != 0 && !strings.HasSuffix(f, ".plan.json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	if len(out) < 3 {
		t.Fatalf("seed objects: %d files", len(out))
	}
	return out
}

func BenchmarkDecode(b *testing.B) {
	objs := seedObjects(b)
	n := 0
	for _, o := range objs {
		n += len(o)
	}
	b.SetBytes(int64(n))
	for _, dec := range []struct {
		name string
		f    func([]byte) (any, error)
	}{{"onepass", Decode}, {"encoding-json", decodeStd}} {
		b.Run(dec.name, func(b *testing.B) {
			for range b.N {
				for _, o := range objs {
					if _, err := dec.f([]byte(o)); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// Get walks a path of keys and dots without parsing it (getDotted): the same value as the parsed walk.
func TestGetDottedAsParsed(t *testing.T) {
	o, err := DecodeObj([]byte(`{"a":{"b":{"c":1},"l":[{"x":2}],"n":null,"":{"e":3},"d.e":4,"q'\"":5},"s":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", ".a", "a.b", "a.b.c", ".a.b.c", "a.b.c.d", "a.l", "a.l.x", "a.n", "a.n.x", "s", "s.x",
		"", ".", "..", "a.", "a..b", ".a.", "a.b.", "x", "x.y", "a.q'\"", "a.d.e", `a.d\.e`, "a.l[0].x", `a[""]`, "a['b'].c"} {
		_, dotted := getDotted(o, p)
		want := getParsed(o, p)
		if got := Get(o, p); !reflect.DeepEqual(got, want) {
			t.Errorf("Get(%q) = %v (dotted walk %v), parsed %v", p, got, dotted, want)
		}
	}
}

// getParsed is what Get(o, p) reads by p's keys as ParsePath parses them, a step at a time (nil for a path
// ParsePath refuses): what its walk of the dotted text must agree with.
func getParsed(o any, p string) any {
	keys, err := ParsePath(p)
	if err != nil {
		return nil
	}
	v := o
	for _, k := range keys {
		if v = step(v, k); v == nil {
			return nil
		}
	}
	return v
}

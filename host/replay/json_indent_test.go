package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/replay/world"
)

// checkIndentedRaw: appendRaw of src, depth arrays deep, then appendIndented, is json.MarshalIndent's bytes
// for the same arrays around a json.RawMessage of src, and fails where it fails.
func checkIndentedRaw(t *testing.T, src []byte, depth int) { checkIndentedRawBy(t, src, depth, "\t") }

func checkIndentedRawBy(t *testing.T, src []byte, depth int, indent string) {
	t.Helper()
	var v any = json.RawMessage(src)
	for range depth {
		v = []any{v}
	}
	want, werr := json.MarshalIndent(v, "  ", indent)
	b := bytes.Repeat([]byte{'['}, depth)
	b, ok := appendRaw(b, src, depth)
	if ok != (werr == nil) {
		t.Fatalf("appendRaw(%q, %d): ok %v; encoding/json: %v", src, depth, ok, werr)
	}
	if !ok {
		return
	}
	b = append(b, bytes.Repeat([]byte{']'}, depth)...)
	if got := appendIndented(nil, b, "  ", indent); !bytes.Equal(got, want) {
		t.Fatalf("appendRaw(%q, %d), indented:\n%s\nencoding/json:\n%s", src, depth, got, want)
	}
}

// appendRaw and appendIndented write json.MarshalIndent's bytes, and refuse what it refuses: the grammar's
// edges, escapes, what HTML escaping rewrites, invalid UTF-8, nesting at encoding/json's limit, every JSON
// fixture of the repository, and random documents with whitespace, cut short or with a byte changed.
func TestAppendRawIsMarshalIndent(t *testing.T) {
	for _, s := range []string{
		"", " ", "null", " null ", "nul", "nullx", "true", "false", "tru", "0", "-0", "01", "-", "1.", "1.5", ".5", "1e5", "1E+5",
		"1e-5", "1e", "1e+", "-01", "123456789012345678901234567890", "1 2", `""`, `"`, `"a`, `"\"`, `"\\"`, `"\/\b\f\n\r\t"`,
		`"\u00e9\u00E9"`, `"\u00g9"`, `"\u00e"`, `"\x"`, "\"tab\tin\"", "\"nl\nin\"", "\"\x7f\"", "\"\x1f\"",
		`"<a href='x'>&amp;</a>"`, "\"\u2028\u2029\"", "\"\xe2\x80\"", "\"\xe2\x80\xaa\"", "\"\xe2\x80\xa8", "\"\xff\xfe bad\"", "\"日本\"",
		"{}", "[]", "{ }", "[ ]", "{,}", "[,]", "[1,]", "{\"a\":1,}", `{"a"}`, `{"a":}`, `{1:2}`, "{\"a\" : [ 1 , 2 ] }",
		"[[],{},[{}],{\"\":[]}]", " \t\r\n{\"a\":\n[true,false,null]}\n", "[1]x", "{\"a\":1}}", "[", "{", `{"a":1`, "\x00",
	} {
		for depth := range 3 {
			checkIndentedRaw(t, []byte(s), depth)
		}
	}
	checkIndentedRaw(t, nil, 1)
	for _, n := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		deep := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		checkIndentedRawBy(t, deep, 0, "") // no indent: lines as deep as the nesting would be 50 MB
		checkIndentedRawBy(t, deep, 1, "")
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*.json"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "*.json"))
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkIndentedRaw(t, b, 1)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		src := randomRaw(r)
		checkIndentedRaw(t, src, r.IntN(2))
	}
}

// randomRaw is a random JSON document as a module or a file may write it (HTML characters and U+2028 raw,
// whitespace between tokens), or, one time in four, one that is not: cut short or with a byte changed.
func randomRaw(r *rand.Rand) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent([]string{"", " ", "\r\n"}[r.IntN(3)], []string{"", "\t", "  "}[r.IntN(3)])
	v := randomJSON(r, 4)
	if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
		v = nil
	}
	if err := enc.Encode(v); err != nil {
		return []byte("[]")
	}
	src := bytes.ReplaceAll(b.Bytes(), []byte(`\u2028`), []byte("\u2028"))
	switch r.IntN(8) {
	case 0:
		return src[:r.IntN(len(src)+1)]
	case 1:
		src[r.IntN(len(src))] = "{}[],:\"\\ 0-.eE\x00\x80\xe2tfnu<"[r.IntN(22)]
	}
	return src
}

// FuzzAppendRaw: for any bytes, appendRaw and appendIndented write what json.MarshalIndent writes of a
// json.RawMessage of them, and fail where it fails.
func FuzzAppendRaw(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"<\u2028>"],"b":{}}`, " [ true , null ] ", "\"\xe2\x80\xa9\xff\"", "01", `"\ud800"`} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, src []byte, depth uint8) {
		checkIndentedRaw(t, src, int(depth%3))
	})
}

// Step.appendJSON is json.Marshal of the step, and fails where it fails, for steps with every exported field
// filled at random (randomFill): a field added to Step but not to appendJSON fails here.
func TestStepAppendJSONIsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		var s Step
		randomFill(t, r, reflect.ValueOf(&s).Elem())
		want, werr := json.Marshal(&s)
		got, ok := s.appendJSON(nil)
		if ok != (werr == nil) || ok && !bytes.Equal(got, want) {
			t.Fatalf("step %d: appendJSON = %s, %v\njson.Marshal = %s, %v", i, got, ok, want, werr)
		}
	}
}

// A step encoding/json refuses is refused by WriteJSON with encoding/json's error.
func TestWriteJSONRefusesWhatMarshalRefuses(t *testing.T) {
	for _, s := range []Step{{Plan: json.RawMessage(`{"a":`)}, {Plan: json.RawMessage{}}, {OffsetSeconds: math.Inf(1)}} {
		tl := Timeline{Steps: []Step{{Plan: json.RawMessage(`{}`)}, s}}
		_, want := json.MarshalIndent(&tl, "", "  ")
		err := tl.WriteJSON(&bytes.Buffer{})
		if want == nil || err == nil || err.Error() != want.Error() {
			t.Errorf("WriteJSON of %+v: %v; json.MarshalIndent: %v", s, err, want)
		}
	}
}

// randomFill fills v with random contents: every exported field of a struct, slices nil, empty or not,
// strings with what JSON escapes, numbers now and then not finite, plans as randomRaw writes them, grids
// of runs. A kind it does not know fails the test.
func randomFill(t *testing.T, r *rand.Rand, v reflect.Value) {
	switch v.Type() {
	case reflect.TypeFor[PodGrid]():
		v.Set(reflect.ValueOf(randomGrid(r)))
		return
	case reflect.TypeFor[json.RawMessage]():
		switch r.IntN(6) {
		case 0: // nil
		case 1:
			v.SetBytes([]byte{})
		default:
			v.SetBytes(randomRaw(r))
		}
		return
	case reflect.TypeFor[world.Duration]():
		v.SetInt(r.Int64N(1e13) - 1e9)
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomString(r))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt(r.Int64N(2000) - 100)
	case reflect.Float64:
		f := []float64{0, math.Copysign(0, -1), 1.5, 1e21, 1e-7, 30, math.Inf(1), math.NaN()}[r.IntN(8)]
		if f == 1.5 {
			f = r.NormFloat64() * 100
		}
		v.SetFloat(f)
	case reflect.Slice:
		if r.IntN(4) == 0 {
			return // nil
		}
		n := r.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			randomFill(t, r, s.Index(i))
		}
		v.Set(s)
	case reflect.Pointer:
		if r.IntN(2) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		randomFill(t, r, p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				randomFill(t, r, v.Field(i))
			}
		}
	default:
		t.Fatalf("randomFill: no random %s", v.Type())
	}
}

// randomString is empty, a name, or text with what JSON escapes: HTML characters, controls, U+2028,
// invalid UTF-8.
func randomString(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("web-%d", r.IntN(12))
	}
	parts := []string{"a", "<b>", "&", "\u2028", "\t\n\"\\", "\x00\x1f\x7f", "\xff\xe2\x80", "é日", " "}
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// randomGrid is a grid of up to 40 pods, in runs of one state, names now and then odd (not the run's
// prefix and ordinal, or with characters JSON escapes).
func randomGrid(r *rand.Rand) PodGrid {
	var states []PodState
	prefix := []string{"web-", "a<&>-", "x\xe2\x80-", "db-\u2028-"}[r.IntN(4)]
	for o := range r.IntN(40) {
		p := PodState{Name: prefix + fmt.Sprint(o), Ordinal: o, Revision: "web-6cbd9df98d", Label: "A", Phase: "Running", Ready: true}
		if r.IntN(6) == 0 {
			p.Ready, p.Label, p.Revision = false, "B", "web-54cb854cf9"
		}
		if r.IntN(15) == 0 {
			p.Name = fmt.Sprintf("%s0%d", prefix, o)
		}
		if r.IntN(20) == 0 {
			p.Terminating, p.Phase = true, randomString(r)
		}
		states = append(states, p)
	}
	return GridOf(states)
}

// A grid is written as the array of its states (appendJSON, without reflection, as json.Marshal writes the
// slice of them), whatever its runs and names.
func TestPodGridAppendJSONIsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		g := randomGrid(r)
		want, err := json.Marshal(g.States())
		if g.Len() == 0 {
			want = []byte("[]")
		}
		if got := g.appendJSON(nil); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("grid of %d runs: %s\njson.Marshal: %s", len(g.runs), got, want)
		}
	}
}

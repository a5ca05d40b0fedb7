package replay

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// appendJSON must give json.Marshal's bytes: the segment snapshots' digests (oracle captures) and the
// goldens depend on them.
func TestAppendJSONIsMarshal(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", "<a href=\"x\">&amp;</a>", "tab\tnew\nline\r\b\f\x00\x1f\x7f", "\u2028\u2029 é 日本",
		"bad \xff utf8 \xc3", `back\slash "quote"`, 0.0, math.Copysign(0, -1), 1.0, -1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.125,
		5e-324, math.MaxFloat64, 3, int64(-9007199254740993), int32(7), json.Number("12"), json.Number("-0.5e+10"), json.Number(""),
		Obj{}, []any{}, Obj(nil), []any(nil), []string{"x<"}, map[string]string{"b": "1", "a": "2"},
		Obj{"z": 1, "a": Obj{"<k>": []any{nil, "v", 2.5, Obj{}}}, "é": "x", "A": json.Number("1")},
	}
	for _, v := range values {
		check(t, v)
	}
	// every JSON and YAML-as-JSON fixture in the repository's scenarios and testdata, decoded as the replay decodes
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*.json"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "*.json"))
	files = append(files, more...)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonobj.Decode(b)
		if err != nil {
			continue
		}
		check(t, v)
		n++
	}
	if n < 10 {
		t.Fatalf("only %d fixtures compared", n)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		check(t, randomJSON(r, 4))
	}
}

func check(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, gerr := appendJSON(nil, v)
	if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("appendJSON(%#v) = %s, %v; json.Marshal = %s, %v", v, got, gerr, want, werr)
	}
}

func randomJSON(r *rand.Rand, depth int) any {
	pick := r.IntN(9)
	if depth == 0 {
		pick %= 6
	}
	switch pick {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return math.Float64frombits(r.Uint64())
	case 3:
		return json.Number([]string{"0", "-1", "3.25", "1e400", "01", "1.", "-", "2E-3", "x"}[r.IntN(9)])
	case 4, 5:
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	case 6, 7:
		o := Obj{}
		for range r.IntN(5) {
			k := make([]byte, r.IntN(6))
			for i := range k {
				k[i] = byte(r.IntN(256))
			}
			o[string(k)] = randomJSON(r, depth-1)
		}
		return o
	default:
		a := make([]any, r.IntN(5))
		for i := range a {
			a[i] = randomJSON(r, depth-1)
		}
		return a
	}
}

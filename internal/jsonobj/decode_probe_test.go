package jsonobj

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Many goroutines decoding objects whose keys share the intern table's slots (a thousand keys over 4096
// slots, keys of 1 to 64 bytes and just over) get what encoding/json gets, and nothing the input held is
// kept: the input is written over after each decode.
func TestDecodeConcurrentInterning(t *testing.T) {
	var docs []string
	for g := 0; g < 8; g++ {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; i < 1000; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			k := fmt.Sprintf("k%d-%d", i, g%2)
			if i%97 == 0 {
				k = strings.Repeat("x", 60+i%8) // at the interning limit
			}
			fmt.Fprintf(&b, "%q:[%d,\"v%d\",{\"%s\":1e400}]", k, i, g, k)
		}
		b.WriteString("}")
		docs = append(docs, b.String())
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; n < 20; n++ {
				in := []byte(docs[(g+n)%len(docs)])
				got, err := Decode(in)
				want, wantErr := decodeStd([]byte(docs[(g+n)%len(docs)]))
				for i := range in {
					in[i] = 'X'
				}
				if err != nil || wantErr != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("goroutine %d: %v %v, or the values differ", g, err, wantErr)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

// Odd inputs beside the fuzz corpus: huge numbers, long and escaped keys, nesting at the one pass's limit.
func TestDecodeProbeInputs(t *testing.T) {
	ins := []string{
		`{"a":` + strings.Repeat("9", 5000) + `}`, `-` + strings.Repeat("0", 1), `1e99999999999999999999`,
		`0.` + strings.Repeat("0", 400) + `1E-400`, `{"` + strings.Repeat("k", 100000) + `":1}`,
		strings.Repeat("[", 1000) + strings.Repeat("]", 1000), strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
		strings.Repeat(`{"a":`, 999) + `[]` + strings.Repeat("}", 999), strings.Repeat(`{"a":`, 1000) + `[]` + strings.Repeat("}", 1000),
		"{\"\xff\":1,\"\xfe\":2}", "{\"\\ud800\":1,\"\\udc00\":2}", `{"a":1,"\u0061":2}`, "{\"\xc0\xaf\":1}",
		"{\"a\":1}\x00", "\x00", "{\"a\":\"\xf4\x90\x80\x80\"}", `{"\u0000":1}`, "[\"\\u00\"]", `"\/"`,
		"{\"k\": \"\xed\xbf\xbf\"}", `["\uDFFF\uD800"]`, `{"a":[1,2,3,],"b":1}`, "\u00a0{}", "{}\u00a0",
		"[1,\n2\r,\t3]", "{\"a\":\f1}", "[1e+0, -0.0E-0, 0e0]", "[-]", "[--1]", "[1.e5]", "[0x10]", "[Infinity]",
	}
	for _, in := range ins {
		checkDecode(t, []byte(in))
	}
}

// FuzzGetDotted: Get walks any path to the value the parsed walk finds.
func FuzzGetDotted(f *testing.F) {
	for _, p := range []string{"a", ".a.b.c", "a..b", "a.", "a.l[0].x", `a.d\.e`, "", ".", "a.q'\"", "s.x", "a.\xff"} {
		f.Add(p)
	}
	o, err := DecodeObj([]byte(`{"a":{"b":{"c":1},"l":[{"x":2}],"n":null,"":{"e":3},"d.e":4,"q'\"":5,"\ufffd":6,"0":{"1":7}},"s":"t"," ":{" ":8}}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		want := getParsed(o, p)
		if got := Get(o, p); !reflect.DeepEqual(got, want) {
			t.Fatalf("Get(%q) = %v, parsed %v", p, got, want)
		}
	})
}

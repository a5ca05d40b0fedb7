package jsonv

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// goCanonical is what the revision bytes must equal: json.Marshal of the
// map[string]interface{} that json.Unmarshal decodes.
func goCanonical(t testing.TB, b []byte) ([]byte, bool) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return out, true
}

func randString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", " ", "<", ">", "&", "\"", "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"é", "日本", "\u2028", "\u2029", "\ufffd", "😀", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "$patch", "'"}
	var b strings.Builder
	n := r.Intn(8)
	for i := 0; i < n; i++ {
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	return b.String()
}

func randNumber(r *rand.Rand) string {
	nums := []string{"0", "-0", "1", "-1", "30", "0.5", "1e21", "1e20", "123456789012345678901234", "1E+2", "1e-7", "0.000001",
		"0.0000001", "-2.5e-10", "9007199254740993", "3.14159", "100", "1.0", "12e0", "5e-324", "1.7976931348623157e308", "1e400", "-1e999"}
	if r.Intn(3) == 0 {
		return strconv.FormatFloat(r.NormFloat64()*math10(r.Intn(40)-20), 'g', -1, 64)
	}
	return nums[r.Intn(len(nums))]
}

func math10(e int) float64 {
	f := 1.0
	for e > 0 {
		f *= 10
		e--
	}
	for e < 0 {
		f /= 10
		e++
	}
	return f
}

// randJSON writes a random JSON document, sometimes with whitespace and escapes in the source.
func randJSON(r *rand.Rand, depth int, b *bytes.Buffer) {
	ws := func() {
		if r.Intn(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "\r\n  "}[r.Intn(4)])
		}
	}
	switch k := r.Intn(7); {
	case depth > 4 || k == 0:
		switch r.Intn(4) {
		case 0:
			b.WriteString("null")
		case 1:
			b.WriteString("true")
		case 2:
			b.WriteString(randNumber(r))
		default:
			writeSourceString(r, b, randString(r))
		}
	case k <= 2:
		b.WriteByte('[')
		n := r.Intn(4)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			randJSON(r, depth+1, b)
			ws()
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		n := r.Intn(5)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			key := randString(r)
			if r.Intn(5) == 0 {
				key = "dup"
			}
			writeSourceString(r, b, key)
			ws()
			b.WriteByte(':')
			ws()
			randJSON(r, depth+1, b)
		}
		b.WriteByte('}')
	}
}

// writeSourceString writes s as a JSON string literal, escaping in various legal ways
// (raw invalid UTF-8 bytes are kept raw: Go's decoder turns each into U+FFFD).
func writeSourceString(r *rand.Rand, b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || (r.Intn(6) == 0 && c < utf8.RuneSelf) {
			b.WriteString(`\u00`)
			b.WriteString(strconv.FormatInt(int64(c>>4), 16))
			b.WriteString(strconv.FormatInt(int64(c&0xf), 16))
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			rr, size := utf8.DecodeRuneInString(s[i:])
			if rr != utf8.RuneError && r.Intn(3) == 0 {
				if rr > 0xffff {
					r1, r2 := rr-0x10000, 0
					r2 = int(0xdc00 + (r1 & 0x3ff))
					r1 = 0xd800 + (r1 >> 10)
					b.WriteString(`\u` + strconv.FormatInt(int64(r1), 16) + `\u` + strconv.FormatInt(int64(r2), 16))
				} else {
					b.WriteString(`\u` + strconv.FormatInt(int64(0x10000+rr), 16)[1:])
				}
				i += size
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	if r.Intn(10) == 0 {
		b.WriteString(`\ud800`) // lone surrogate
	}
	if r.Intn(10) == 0 {
		b.WriteString(`\ud83d\u0041`) // high surrogate + non-surrogate
	}
	b.WriteByte('"')
}

func TestStringEscapingMatchesGo(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		s := randString(r)
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	}
	// every single byte and a few runes
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("byte %#x: got %s want %s", c, got, want)
		}
	}
}

func TestCanonicalMatchesGo(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 20000; i++ {
		var b bytes.Buffer
		randJSON(r, 0, &b)
		checkAgainstGo(t, b.Bytes())
	}
}

func checkAgainstGo(t testing.TB, in []byte) {
	v, err := Parse(in)
	valid := json.Valid(in)
	// The scanning path (Validate, Text) accepts exactly what Parse accepts and walks to the same tree.
	text, terr := Validate(in)
	if (terr == nil) != (err == nil) {
		t.Fatalf("%q: Validate error %v, Parse error %v", in, terr, err)
	}
	if terr == nil {
		if got := treeOfText(text); !reflect.DeepEqual(normal(got), normal(v)) {
			t.Fatalf("%q: the Text walk gives\n%s\nParse gives\n%s", in, Encode(got), Encode(v))
		}
		// ValidateMembers accepts the same and finds the members the walk finds, where it finds them
		mtext, members, merr := ValidateMembers(in)
		var walked []int
		if text.Kind() == Object {
			for i := text.FirstMember(); ; {
				_, _, next, ok := text.Member(i)
				if !ok {
					break
				}
				walked, i = append(walked, i), next
			}
		}
		if merr != nil || mtext != text || !slices.Equal(members, walked) {
			t.Fatalf("%q: ValidateMembers %v at %v, the walk finds %v", in, merr, members, walked)
		}
		// the walk that is handed the rest of a list and finds each value's end itself
		rest := Text(string(text) + ` , "after" ]`)
		if got, end := treeOfRest(rest); !reflect.DeepEqual(normal(got), normal(v)) || end != len(text) {
			t.Fatalf("%q: the walk of the rest gives\n%s\nending at %d of %d; Parse gives\n%s", in, Encode(got), end, len(text), Encode(v))
		}
	}
	if err != nil {
		if valid && checkDepth(in) == nil {
			t.Fatalf("Parse rejected valid JSON %q: %v", in, err)
		}
		return
	}
	if !valid {
		t.Fatalf("Parse accepted invalid JSON %q", in)
	}
	want, ok := goCanonical(t, in)
	got, cok := Canonical(v)
	if ok != cok {
		t.Fatalf("%q: Go unmarshal ok=%v, Canonical ok=%v", in, ok, cok)
	}
	if ok && !bytes.Equal(got, want) {
		t.Fatalf("canonical of %q:\n got %s\nwant %s", in, got, want)
	}
	// Encode keeps order and number text; it must decode to the same value as the input.
	enc := Encode(v)
	if !json.Valid(enc) {
		t.Fatalf("Encode produced invalid JSON %q from %q", enc, in)
	}
	var a, b any
	d1 := json.NewDecoder(bytes.NewReader(in))
	d1.UseNumber()
	d2 := json.NewDecoder(bytes.NewReader(enc))
	d2.UseNumber()
	if d1.Decode(&a) == nil && d2.Decode(&b) == nil && !reflect.DeepEqual(a, b) {
		t.Fatalf("Encode changed the value: %q -> %q", in, enc)
	}
}

func TestFloatFormatting(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"30", "30"}, {"1e21", "1e+21"}, {"0.5", "0.5"}, {"1e-7", "1e-7"}, {"0.000001", "0.000001"},
		{"123456789012345678901234", "1.2345678901234569e+23"}, {"-0", "-0"}, {"1.0", "1"}, {"9007199254740993", "9007199254740992"},
	} {
		v, err := Parse([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := Canonical(v)
		if string(got) != c.want {
			t.Errorf("%s: got %s want %s", c.in, got, c.want)
		}
		want, _ := goCanonical(t, []byte(c.in))
		if string(want) != c.want {
			t.Errorf("Go disagrees for %s: %s", c.in, want)
		}
	}
}

func TestInvalidJSON(t *testing.T) {
	cases := []string{"", " ", "{", `{"a":`, `{"a":1`, `[1,2`, `"abc`, `{"a" 1}`, `[1,]`, `{,}`, `01`, `1.`, `-`, `1e`, `nul`, `tru`,
		`{"a":1}}`, `[1] 2`, "\"a\x01\"", `"\x"`, `"\u12"`, `{"a":1,}`, `.5`, `+1`, `NaN`, `'a'`, "\xff"}
	for _, c := range cases {
		_, err := Parse([]byte(c))
		if err == nil {
			t.Errorf("%q: accepted", c)
			continue
		}
		if json.Valid([]byte(c)) {
			t.Errorf("%q: Go accepts it", c)
		}
		if !strings.HasPrefix(err.Error(), "invalid JSON") {
			t.Errorf("%q: message %q", c, err.Error())
		}
	}
	_, err := Parse([]byte(`{"a":[1,2`))
	if err == nil || !strings.Contains(err.Error(), "unexpected end of JSON input") {
		t.Errorf("truncated: %v", err)
	}
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, err := Parse([]byte(deep)); err == nil || !strings.Contains(err.Error(), "max depth") {
		t.Errorf("deep: %v", err)
	}
	okDeep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Parse([]byte(okDeep)); err != nil {
		t.Errorf("depth %d rejected: %v", MaxDepth, err)
	}
}

func TestKeyOrderAndDuplicates(t *testing.T) {
	v, err := Parse([]byte(`{"b":1,"a":{"y":[1,2],"x":null},"b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(Encode(v)); got != `{"b":1,"a":{"y":[1,2],"x":null},"b":2}` {
		t.Errorf("Encode: %s", got)
	}
	if got, _ := Canonical(v); string(got) != `{"a":{"x":null,"y":[1,2]},"b":2}` {
		t.Errorf("Canonical: %s", got)
	}
	if v.G("b").S != "2" {
		t.Errorf("Get: last duplicate must win")
	}
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,"x",null,true]`, `"\u2028<>&"`, `1e21`, `{"a":{"b":[{},[]]}}`, "\"\xff\"", `"\ud800"`} {
		f.Add([]byte(s))
	}
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 50; i++ {
		var b bytes.Buffer
		randJSON(r, 0, &b)
		f.Add(b.Bytes())
		// runs of blanks, as a laid-out snapshot pads the gaps between its objects (spacesEnd), before and
		// after values, of lengths around the scanners' eight-byte step
		pad := strings.Repeat(" ", r.Intn(20)) + []string{"", "\t", "\n", "\r\n"}[r.Intn(4)] + strings.Repeat(" ", r.Intn(20))
		p := bytes.ReplaceAll(b.Bytes(), []byte(","), []byte(pad+","+pad))
		f.Add(append(append([]byte(pad), bytes.ReplaceAll(p, []byte(":"), []byte(":"+pad))...), pad...))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkAgainstGo(t, in)
	})
}

// treeOfText rebuilds a value through Members and Items, leaves through Text.Value and Str.
func treeOfText(t Text) Value {
	switch t.Kind() {
	case Object:
		v := Value{K: Object, O: []Member{}}
		t.Members(func(k string, m Text) { v.O = append(v.O, Member{Key: k, Val: treeOfText(m)}) })
		return v
	case Array:
		v := Value{K: Array, A: []Value{}}
		t.Items(func(_ int, m Text) { v.A = append(v.A, treeOfText(m)) })
		return v
	case String:
		return Value{K: String, S: t.Str()}
	}
	return t.Value()
}

// treeOfRest rebuilds the value t starts with (t goes on past it) through MemberAt, MemberAfter, ItemRest,
// ItemAfter and MembersInto's end, and returns where it ends in t.
func treeOfRest(t Text) (Value, int) {
	switch t.Kind() {
	case Object:
		v := Value{K: Object, O: []Member{}}
		i := t.FirstMember()
		for {
			k, at, ok := t.MemberAt(i)
			if !ok {
				if end := t.MembersInto(nil, nil); end != i+1 {
					panic("MembersInto ends the object elsewhere than MemberAt")
				}
				return v, i + 1
			}
			m, n := treeOfRest(t[at:])
			v.O = append(v.O, Member{Key: k, Val: m})
			i = t.MemberAfter(at + n)
		}
	case Array:
		v := Value{K: Array, A: []Value{}}
		i := t.FirstItem()
		for {
			rest, ok := t.ItemRest(i)
			if !ok {
				return v, i + 1
			}
			e, n := treeOfRest(rest)
			v.A = append(v.A, e)
			i = t.ItemAfter(i + n)
		}
	}
	end := t.ValueEnd()
	return treeOfText(t[:end]), end
}

// normal makes empty containers comparable (nil and empty slices).
func normal(v Value) Value {
	switch v.K {
	case Object:
		out := Value{K: Object}
		for _, m := range v.O {
			out.O = append(out.O, Member{Key: m.Key, Val: normal(m.Val)})
		}
		return out
	case Array:
		out := Value{K: Array}
		for _, e := range v.A {
			out.A = append(out.A, normal(e))
		}
		return out
	}
	return v
}

func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	r := rand.New(rand.NewSource(4))
	buf.WriteByte('[')
	for i := 0; i < 200; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		randJSON(r, 0, &buf)
	}
	buf.WriteByte(']')
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse(in); err != nil {
			b.Fatal(err)
		}
	}
}

// The single-pass builder and the gjson-iteration builder give the same tree.
func TestParseMatchesGJSONBuild(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 20000; i++ {
		var b bytes.Buffer
		randJSON(r, 0, &b)
		v1, e1 := Parse(b.Bytes())
		v2, e2 := ParseGJSON(b.Bytes())
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("%q: %v vs %v", b.Bytes(), e1, e2)
		}
		if e1 == nil && !reflect.DeepEqual(v1, v2) {
			t.Fatalf("%q: trees differ:\n%s\n%s", b.Bytes(), Encode(v1), Encode(v2))
		}
	}
}

// Strings that end in backslashes or hold escaped quotes are where a scanner loses its place.
func TestTextWalkEscapes(t *testing.T) {
	for _, in := range []string{
		`{"a\"b":"c\\","d":["\\\"",{"e":"\u0022x\\\\"}],"f":"\\\\\""}`,
		` [ "\\" , "\"" , {"k\\":"v\\\\"} , 1e5 , -0.5 , true , null ] `,
		`{"":{"":[[],{}]},"x":"]}"}`,
	} {
		checkAgainstGo(t, []byte(in))
	}
}

// Mutated JSON (bytes flipped, dropped, inserted, cut short): Validate accepts exactly what Parse and
// encoding/json accept.
func TestValidateMatchesGoOnMutations(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	special := []byte(`{}[]:,"\-+.eE0123456789tfnul x` + "\x00\x1f\x7f\xff")
	for i := 0; i < 30000; i++ {
		var b bytes.Buffer
		randJSON(r, 0, &b)
		in := b.Bytes()
		for n := r.Intn(3) + 1; n > 0 && len(in) > 0; n-- {
			p := r.Intn(len(in))
			switch r.Intn(4) {
			case 0:
				in[p] = special[r.Intn(len(special))]
			case 1:
				in = append(in[:p], in[p+1:]...)
			case 2:
				in = append(in[:p], append([]byte{special[r.Intn(len(special))]}, in[p:]...)...)
			default:
				in = in[:p]
			}
		}
		checkAgainstGo(t, in)
	}
	for _, in := range []string{"", " ", "-", "01", "1.", "1e", "1e+", "-0.0e-0", `"\u12"`, `"\u12G4"`, `"\x"`, "[1,]", `{"a"}`, `{"a":}`, `{,}`, "[", "]", "nul", "truex", `"a` + "\x01" + `"`, "\t[ ]\r\n"} {
		checkAgainstGo(t, []byte(in))
	}
}

// The scanners step eight bytes at a time (swar.go): every byte that stops them (a quote, a backslash, a
// non-ASCII or control byte, a bracket inside or outside a string) at every place in a word, in keys,
// strings and skipped containers, shifted through every alignment, reads as encoding/json reads it.
func TestWordScansAtEveryOffset(t *testing.T) {
	stops := []string{`\"`, `\\`, `\u0041`, "é", "\xff", "\x01", "\x1f", "{", "}", "[", "]", `\/`}
	for _, stop := range stops {
		for at := 0; at <= 17; at++ {
			s := strings.Repeat("a", at) + stop + strings.Repeat("b", 17-at)
			for pad := 0; pad < 8; pad++ {
				sp := strings.Repeat(" ", pad)
				for _, in := range []string{
					sp + `"` + s + `"`,
					sp + `{"` + s + `":"` + s + `","x":[{"` + s + `":["` + s + `",{}]}],"y":1}`,
					sp + `[{"k":{"` + s + `":[1,"` + s + `"]}},"` + s + `",[[` + strconv.Itoa(at) + `]]]`,
					sp + `{"` + s, // cut short inside a string
				} {
					checkAgainstGo(t, []byte(in))
				}
			}
		}
	}
}

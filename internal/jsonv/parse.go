package jsonv

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// MaxDepth is the deepest nesting of arrays/objects Parse accepts. Kubernetes objects nest a few
// dozen levels; the limit keeps the recursive validator, builder and encoders far from the end
// of the TinyGo guest's 64 KiB stack (measured: depth 500 still runs, 700 overflows).
const MaxDepth = 256

// SyntaxError describes why input is not acceptable JSON.
type SyntaxError struct {
	Msg    string
	Offset int
}

func (e *SyntaxError) Error() string { return e.Msg }

// Parse validates data (gjson.Valid, after a depth check) and builds the value tree in one pass
// over the validated bytes. (Building through gjson.Result.ForEach would rescan every nested
// value once per enclosing level; ParseGJSON does that and serves as the cross-check.)
func Parse(data []byte) (Value, error) {
	if err := checkDepth(data); err != nil {
		return Value{}, err
	}
	if !gjson.ValidBytes(data) {
		return Value{}, diagnose(data)
	}
	if len(data) == 0 {
		return Value{}, diagnose(data)
	}
	// No string of the tree aliases the input (see builder), so it is read in place.
	b := builder{s: unsafe.String(&data[0], len(data)), strs: make(map[string]string, 256)}
	b.ws()
	return b.value(), nil
}

// ParseGJSON is Parse with the tree built through gjson's iteration (slower; for tests).
func ParseGJSON(data []byte) (Value, error) {
	if err := checkDepth(data); err != nil {
		return Value{}, err
	}
	if !gjson.ValidBytes(data) {
		return Value{}, diagnose(data)
	}
	return build(gjson.ParseBytes(data)), nil
}

// builder builds the tree from input already known to be valid JSON. Members and items of
// open containers collect on shared stacks and are copied out into exact-size slices when the
// container closes (one allocation per container).
//
// No string of the tree points into the input: TinyGo's collector resolves every interior
// pointer by walking back to the start of its allocation, which for substrings of a multi-MB
// input costs O(input) per string and made collections quadratic. Short strings are interned
// (keys, names and values repeat a lot), longer ones copied.
type builder struct {
	s       string
	i       int
	members []Member
	items   []Value
	strs    map[string]string
}

func (b *builder) own(s string) string {
	if b.strs == nil { // Text.Value: strings stay in the input (see Text)
		return s
	}
	if len(s) > 48 {
		return strings.Clone(s)
	}
	if v, ok := b.strs[s]; ok {
		return v
	}
	c := strings.Clone(s)
	b.strs[c] = c
	return c
}

func (b *builder) ws() {
	for b.i < len(b.s) {
		switch b.s[b.i] {
		case ' ', '\t', '\n', '\r':
			b.i++
		default:
			return
		}
	}
}

func (b *builder) value() Value {
	switch c := b.s[b.i]; c {
	case '{':
		b.i++
		b.ws()
		if b.s[b.i] == '}' {
			b.i++
			return Value{K: Object, O: []Member{}}
		}
		base := len(b.members)
		for {
			b.ws()
			key := b.str()
			b.ws()
			b.i++ // ':'
			b.ws()
			val := b.value()
			b.members = append(b.members, Member{Key: key, Val: val})
			b.ws()
			if b.s[b.i] == ',' {
				b.i++
				continue
			}
			b.i++ // '}'
			o := make([]Member, len(b.members)-base)
			copy(o, b.members[base:])
			clear(b.members[base:])
			b.members = b.members[:base]
			return Value{K: Object, O: o}
		}
	case '[':
		b.i++
		b.ws()
		if b.s[b.i] == ']' {
			b.i++
			return Value{K: Array, A: []Value{}}
		}
		base := len(b.items)
		for {
			b.ws()
			val := b.value()
			b.items = append(b.items, val)
			b.ws()
			if b.s[b.i] == ',' {
				b.i++
				continue
			}
			b.i++ // ']'
			a := make([]Value, len(b.items)-base)
			copy(a, b.items[base:])
			clear(b.items[base:])
			b.items = b.items[:base]
			return Value{K: Array, A: a}
		}
	case '"':
		return Value{K: String, S: b.str()}
	case 't':
		b.i += 4
		return Value{K: Bool, B: true}
	case 'f':
		b.i += 5
		return Value{K: Bool}
	case 'n':
		b.i += 4
		return Value{}
	}
	start := b.i
	for b.i < len(b.s) {
		c := b.s[b.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			b.i++
			continue
		}
		break
	}
	return Value{K: Number, S: b.own(b.s[start:b.i])}
}

// str reads a string literal at b.i (the opening quote) and returns its decoded value.
func (b *builder) str() string {
	start := b.i
	b.i++
	for {
		c := b.s[b.i]
		if c == '\\' {
			b.i += 2
			continue
		}
		b.i++
		if c == '"' {
			break
		}
	}
	raw := b.s[start:b.i]
	u := unquote(raw)
	if len(u) == 0 {
		return ""
	}
	if len(raw) >= 2 && unsafe.StringData(u) == unsafe.StringData(raw[1:]) {
		return b.own(u) // a substring of the input
	}
	return u
}

func build(r gjson.Result) Value {
	switch r.Type {
	case gjson.Null:
		return Value{}
	case gjson.False:
		return Value{K: Bool}
	case gjson.True:
		return Value{K: Bool, B: true}
	case gjson.Number:
		return Value{K: Number, S: r.Raw}
	case gjson.String:
		return Value{K: String, S: unquote(r.Raw)}
	}
	if r.IsArray() {
		v := Value{K: Array, A: []Value{}}
		r.ForEach(func(_, item gjson.Result) bool {
			v.A = append(v.A, build(item))
			return true
		})
		return v
	}
	v := Value{K: Object, O: []Member{}}
	r.ForEach(func(key, item gjson.Result) bool {
		v.O = append(v.O, Member{Key: unquote(key.Raw), Val: build(item)})
		return true
	})
	return v
}

// unquote decodes a JSON string literal (with quotes) the way Go's encoding/json does:
// invalid UTF-8 bytes and unpaired surrogates become U+FFFD.
func unquote(raw string) string {
	if len(raw) < 2 {
		return ""
	}
	s := raw[1 : len(raw)-1]
	simple := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' || c >= utf8.RuneSelf {
			simple = false
			break
		}
	}
	if simple {
		return s
	}
	if !hasBackslash(s) && utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return string(b)
			}
			switch s[i+1] {
			case '"', '\\', '/', '\'':
				b = append(b, s[i+1])
				i += 2
			case 'b':
				b = append(b, '\b')
				i += 2
			case 'f':
				b = append(b, '\f')
				i += 2
			case 'n':
				b = append(b, '\n')
				i += 2
			case 'r':
				b = append(b, '\r')
				i += 2
			case 't':
				b = append(b, '\t')
				i += 2
			case 'u':
				r := hex4(s, i+2)
				i += 6
				if r < 0 {
					b = utf8.AppendRune(b, utf8.RuneError)
					continue
				}
				if utf16.IsSurrogate(rune(r)) {
					r2 := -1
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s, i+2)
					}
					if r2 >= 0 {
						if dec := utf16.DecodeRune(rune(r), rune(r2)); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							i += 6
							continue
						}
					}
					b = utf8.AppendRune(b, utf8.RuneError)
					continue
				}
				b = utf8.AppendRune(b, rune(r))
			default:
				b = append(b, c)
				i++
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return string(b)
}

func hasBackslash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			return true
		}
	}
	return false
}

func hex4(s string, i int) int {
	if i+4 > len(s) {
		return -1
	}
	r := 0
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + int(c)
	}
	return r
}

// checkDepth rejects nesting deeper than MaxDepth without recursion.
func checkDepth(data []byte) error {
	depth := 0
	inStr := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			depth++
			if depth > MaxDepth {
				return &SyntaxError{Msg: "invalid JSON: exceeded max depth of " + strconv.Itoa(MaxDepth) + " at offset " + strconv.Itoa(i), Offset: i}
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// diagnose finds the first syntax error in data (only called when gjson.Valid said no), to
// report where and why, with messages in the style of Go's encoding/json.
func diagnose(data []byte) error {
	d := &diag{data: data}
	d.ws()
	if d.i >= len(data) {
		return d.eof()
	}
	if err := d.value(0); err != nil {
		return err
	}
	d.ws()
	if d.i < len(data) {
		return d.bad("after top-level value")
	}
	// gjson rejected something this scanner accepts; report generically.
	return &SyntaxError{Msg: "invalid JSON", Offset: 0}
}

type diag struct {
	data []byte
	i    int
}

func (d *diag) eof() error {
	return &SyntaxError{Msg: "invalid JSON: unexpected end of JSON input (truncated at offset " + strconv.Itoa(len(d.data)) + ")", Offset: len(d.data)}
}

func (d *diag) bad(ctx string) error {
	if d.i >= len(d.data) {
		return d.eof()
	}
	c := d.data[d.i]
	q := strconv.QuoteRune(rune(c))
	if c >= utf8.RuneSelf {
		q = "byte 0x" + strconv.FormatUint(uint64(c), 16)
	}
	return &SyntaxError{Msg: "invalid JSON: invalid character " + q + " " + ctx + " at offset " + strconv.Itoa(d.i), Offset: d.i}
}

func (d *diag) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *diag) lit(s string) error {
	for j := 0; j < len(s); j++ {
		if d.i >= len(d.data) {
			return d.eof()
		}
		if d.data[d.i] != s[j] {
			return d.bad("in literal " + s)
		}
		d.i++
	}
	return nil
}

func (d *diag) value(depth int) error {
	if d.i >= len(d.data) {
		return d.eof()
	}
	switch c := d.data[d.i]; {
	case c == '{':
		d.i++
		d.ws()
		if d.i < len(d.data) && d.data[d.i] == '}' {
			d.i++
			return nil
		}
		for {
			d.ws()
			if d.i >= len(d.data) {
				return d.eof()
			}
			if d.data[d.i] != '"' {
				return d.bad("looking for beginning of object key string")
			}
			if err := d.str(); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.data) {
				return d.eof()
			}
			if d.data[d.i] != ':' {
				return d.bad("after object key")
			}
			d.i++
			d.ws()
			if err := d.value(depth + 1); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.data) {
				return d.eof()
			}
			if d.data[d.i] == ',' {
				d.i++
				continue
			}
			if d.data[d.i] == '}' {
				d.i++
				return nil
			}
			return d.bad("after object key:value pair")
		}
	case c == '[':
		d.i++
		d.ws()
		if d.i < len(d.data) && d.data[d.i] == ']' {
			d.i++
			return nil
		}
		for {
			d.ws()
			if err := d.value(depth + 1); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.data) {
				return d.eof()
			}
			if d.data[d.i] == ',' {
				d.i++
				continue
			}
			if d.data[d.i] == ']' {
				d.i++
				return nil
			}
			return d.bad("after array element")
		}
	case c == '"':
		return d.str()
	case c == 't':
		return d.lit("true")
	case c == 'f':
		return d.lit("false")
	case c == 'n':
		return d.lit("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return d.num()
	default:
		return d.bad("looking for beginning of value")
	}
}

func (d *diag) str() error {
	d.i++
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return nil
		case c == '\\':
			if d.i+1 >= len(d.data) {
				return d.eof()
			}
			switch d.data[d.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				d.i += 2
				for k := 0; k < 4; k++ {
					if d.i >= len(d.data) {
						return d.eof()
					}
					if hex4(string([]byte{d.data[d.i], '0', '0', '0'}), 0) < 0 {
						return d.bad("in \\u hexadecimal character escape")
					}
					d.i++
				}
			default:
				d.i++
				return d.bad("in string escape code")
			}
		case c < 0x20:
			return d.bad("in string literal")
		default:
			d.i++
		}
	}
	return d.eof()
}

func (d *diag) num() error {
	if d.data[d.i] == '-' {
		d.i++
	}
	if d.i >= len(d.data) {
		return d.eof()
	}
	if d.data[d.i] == '0' {
		d.i++
	} else if d.data[d.i] >= '1' && d.data[d.i] <= '9' {
		for d.i < len(d.data) && isDigit(d.data[d.i]) {
			d.i++
		}
	} else {
		return d.bad("in numeric literal")
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if d.i >= len(d.data) {
			return d.eof()
		}
		if !isDigit(d.data[d.i]) {
			return d.bad("after decimal point in numeric literal")
		}
		for d.i < len(d.data) && isDigit(d.data[d.i]) {
			d.i++
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if d.i >= len(d.data) {
			return d.eof()
		}
		if !isDigit(d.data[d.i]) {
			return d.bad("in exponent of numeric literal")
		}
		for d.i < len(d.data) && isDigit(d.data[d.i]) {
			d.i++
		}
	}
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

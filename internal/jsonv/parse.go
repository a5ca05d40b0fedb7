package jsonv

import (
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
	if plain(s) {
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

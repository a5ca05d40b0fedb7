package jsonobj

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode parses one JSON value keeping numbers as json.Number, so integers survive unchanged.
//
// The value is what encoding/json's Decoder with UseNumber gives (FuzzDecode holds them equal), read in
// one pass: the Decoder scans a value once to find its end and again to build it, and a replay decodes
// every write's object and each whole world it previews from (1.5 MB for 1000 pods). Input the one pass
// does not take — bad JSON, data after the value, nesting deeper than fastDepth — goes to the Decoder,
// for its result and its error messages.
func Decode(b []byte) (any, error) {
	d := decoder{data: b}
	if v, ok := d.top(); ok {
		return v, nil
	}
	return decodeStd(b)
}

// decodeStd is Decode by encoding/json's Decoder.
func decodeStd(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	// Anything but white space after the value is refused: the Decoder's More alone says "no more" at a
	// closing bracket, which let `{}]x` through.
	if len(bytes.TrimLeft(b[d.InputOffset():], " \t\r\n")) > 0 {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

// fastDepth is the deepest nesting the one pass takes (encoding/json's limit is 10000; a Kubernetes
// object nests a few dozen).
const fastDepth = 1000

// decoder is the one pass of Decode over data. Every method reports false on input encoding/json's
// scanner would refuse (and on what the pass leaves to it), never guessing.
type decoder struct {
	data  []byte
	i     int
	depth int
}

// top is the whole input as one value with nothing but white space after it. Data after the value is left
// to the Decoder, for its error.
func (d *decoder) top() (any, bool) {
	d.ws()
	v, ok := d.value()
	if !ok {
		return nil, false
	}
	d.ws()
	return v, d.i == len(d.data)
}

func (d *decoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value() (any, bool) {
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		s, ok := d.str(false)
		return s, ok
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	case c == 't':
		return true, d.lit("true")
	case c == 'f':
		return false, d.lit("false")
	case c == 'n':
		return nil, d.lit("null")
	}
	return nil, false
}

func (d *decoder) lit(s string) bool {
	if !bytes.HasPrefix(d.data[d.i:], []byte(s)) {
		return false
	}
	d.i += len(s)
	return true
}

func (d *decoder) object() (any, bool) {
	if d.depth++; d.depth > fastDepth {
		return nil, false
	}
	d.i++ // {
	m := make(map[string]any)
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		d.depth--
		return m, true
	}
	for {
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str(true)
		if !ok {
			return nil, false
		}
		d.ws()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.ws()
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		m[k] = v // a duplicate key: the last one wins, as in encoding/json
		switch more, ok := d.after('}'); {
		case !ok:
			return nil, false
		case !more:
			return m, true
		}
	}
}

func (d *decoder) array() (any, bool) {
	if d.depth++; d.depth > fastDepth {
		return nil, false
	}
	d.i++ // [
	// empty, not nil, as encoding/json's
	a := make([]any, 0)
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		d.depth--
		return a, true
	}
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		a = append(a, v)
		switch more, ok := d.after(']'); {
		case !ok:
			return nil, false
		case !more:
			return a, true
		}
	}
}

// after reads what follows a member or an element: a comma, and the blanks before the next (more), or the
// container's close (its end: the depth it opened is closed). ok is false for anything else.
func (d *decoder) after(close byte) (more, ok bool) {
	d.ws()
	if d.i >= len(d.data) {
		return false, false
	}
	switch d.data[d.i] {
	case ',':
		d.i++
		d.ws()
		return true, true
	case close:
		d.i++
		d.depth--
		return false, true
	}
	return false, false
}

// number is the number at d.i as its literal text (UseNumber), in JSON's grammar.
func (d *decoder) number() (any, bool) {
	data, from := d.data, d.i
	i := from
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return nil, false
		}
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return nil, false
		}
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	}
	d.i = i
	return json.Number(data[from:i]), true
}

// str is the string at d.i (its opening quote), unquoted as encoding/json unquotes: an invalid UTF-8 byte
// and a lone surrogate escape become U+FFFD. A key is interned.
func (d *decoder) str(key bool) (string, bool) {
	data := d.data
	from := d.i + 1
	i, plain := from, true // plain: no escape and valid UTF-8, the string is the bytes themselves
	for {
		if i >= len(data) {
			return "", false
		}
		c := data[i]
		switch {
		case c == '"':
			d.i = i + 1
			raw := data[from:i]
			if !plain {
				return string(unquote(raw)), true
			}
			if key {
				return internKey(raw), true
			}
			return string(raw), true
		case c == '\\':
			plain = false
			if i+1 >= len(data) {
				return "", false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if getu4(data[i:]) < 0 {
					return "", false
				}
				i += 6
			default:
				return "", false
			}
		case c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				plain = false
			}
			i += size
		}
	}
}

// internKey is raw as a string, the same string as the last time a key with the same hash was read: the
// keys of Kubernetes objects are a few hundred, and a decode of 1000 pods would otherwise allocate each
// of them a thousand times. The table is shared by every Decode, each slot swapped atomically.
func internKey(raw []byte) string {
	if len(raw) > 64 {
		return string(raw)
	}
	h := uint32(2166136261) // FNV-1a
	for _, c := range raw {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &keyTable[h%uint32(len(keyTable))]
	if p := slot.Load(); p != nil && *p == string(raw) {
		return *p
	}
	s := string(raw)
	slot.Store(&s)
	return s
}

var keyTable [4096]atomic.Pointer[string]

// unquote is s, a string's contents that str checked (escapes well formed, no control character), with
// its escapes and invalid UTF-8 replaced as encoding/json's unquoteBytes replaces them.
func unquote(s []byte) []byte {
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			switch e := s[r+1]; e {
			case 'u':
				rr := getu4(s[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6 // a valid pair
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = unicode.ReplacementChar // a lone surrogate
				}
				b = utf8.AppendRune(b, rr)
			default:
				b = append(b, unescape[e])
				r += 2
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr) // U+FFFD for an invalid byte
			r += size
		}
	}
	return b
}

// unescape is the byte each one-letter escape stands for.
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// getu4 is the code unit of the \uXXXX escape at the start of s, -1 when there is none.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	r, err := strconv.ParseUint(string(s[2:6]), 16, 16) // hex digits only: no sign, prefix or underscore
	if err != nil {
		return -1
	}
	return rune(r)
}

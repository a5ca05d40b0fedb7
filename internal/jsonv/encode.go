package jsonv

import (
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Encode writes v as compact JSON with object members in their stored order and numbers as
// their source text; strings are escaped exactly as Go's encoding/json escapes them.
func Encode(v Value) []byte {
	return AppendEncode(make([]byte, 0, 256), v)
}

// AppendEncode appends the encoding of v to b.
func AppendEncode(b []byte, v Value) []byte {
	switch v.K {
	case Null:
		return append(b, "null"...)
	case Bool:
		if v.B {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case Number:
		return append(b, v.S...)
	case String:
		return AppendString(b, v.S)
	case Array:
		b = append(b, '[')
		for i := range v.A {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendEncode(b, v.A[i])
		}
		return append(b, ']')
	case Object:
		b = append(b, '{')
		for i := range v.O {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, v.O[i].Key)
			b = append(b, ':')
			b = AppendEncode(b, v.O[i].Val)
		}
		return append(b, '}')
	}
	return b
}

// Canonical returns what Go's json.Marshal produces for the map[string]interface{} that
// json.Unmarshal decodes from v: keys sorted (last duplicate wins), numbers re-formatted as
// float64. ok is false when a number does not fit a float64 (Go's Unmarshal would fail).
func Canonical(v Value) (out []byte, ok bool) {
	ok = true
	out = appendCanonical(make([]byte, 0, 1024), v, &ok)
	return out, ok
}

func appendCanonical(b []byte, v Value, ok *bool) []byte {
	switch v.K {
	case Number:
		f, err := strconv.ParseFloat(v.S, 64)
		if err != nil {
			*ok = false
		}
		return AppendFloat(b, f)
	case Array:
		b = append(b, '[')
		for i := range v.A {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, v.A[i], ok)
		}
		return append(b, ']')
	case Object:
		members := dedupe(v.O)
		if len(members) != len(v.O) {
			// Go's decoder still converts the numbers of overwritten duplicates (and fails on
			// out-of-range ones).
			for _, m := range v.O {
				checkNumbers(m.Val, ok)
			}
		}
		sorted := true
		for i := 1; i < len(members); i++ {
			if members[i-1].Key >= members[i].Key {
				sorted = false
				break
			}
		}
		if !sorted {
			members = append([]Member(nil), members...)
			sort.Slice(members, func(i, j int) bool { return members[i].Key < members[j].Key })
		}
		b = append(b, '{')
		for i := range members {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, members[i].Key)
			b = append(b, ':')
			b = appendCanonical(b, members[i].Val, ok)
		}
		return append(b, '}')
	}
	return AppendEncode(b, v)
}

func checkNumbers(v Value, ok *bool) {
	switch v.K {
	case Number:
		if _, err := strconv.ParseFloat(v.S, 64); err != nil {
			*ok = false
		}
	case Array:
		for i := range v.A {
			checkNumbers(v.A[i], ok)
		}
	case Object:
		for i := range v.O {
			checkNumbers(v.O[i].Val, ok)
		}
	}
}

// AppendFloat formats f as Go's encoding/json formats a float64.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		// Go refuses to encode these; never produced from parsed JSON (range errors keep ±Inf out
		// only when callers check ok). Fall back to a large finite representation.
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 {
		if abs < 1e-6 || abs >= 1e21 {
			fmt = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, fmt, -1, 64)
	if fmt == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// htmlSafe[c] is true when ASCII byte c can appear unescaped in a string (Go's htmlSafeSet).
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return
}()

// AppendString appends s as a JSON string literal with Go's encoding/json escaping
// (HTML-safe, U+2028/U+2029 escaped, invalid UTF-8 as \ufffd).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Equal compares two values as JSON values: object key order irrelevant (last duplicate wins),
// numbers compared numerically.
func Equal(a, b Value) bool {
	if a.K != b.K {
		return false
	}
	switch a.K {
	case Null:
		return true
	case Bool:
		return a.B == b.B
	case String:
		return a.S == b.S
	case Number:
		if a.S == b.S {
			return true
		}
		fa, e1 := strconv.ParseFloat(a.S, 64)
		fb, e2 := strconv.ParseFloat(b.S, 64)
		return e1 == nil && e2 == nil && fa == fb
	case Array:
		if len(a.A) != len(b.A) {
			return false
		}
		for i := range a.A {
			if !Equal(a.A[i], b.A[i]) {
				return false
			}
		}
		return true
	case Object:
		ao, bo := dedupe(a.O), dedupe(b.O)
		if len(ao) != len(bo) {
			return false
		}
		for _, m := range ao {
			bv, ok := b.Get(m.Key)
			if !ok || !Equal(m.Val, bv) {
				return false
			}
		}
		return true
	}
	return false
}

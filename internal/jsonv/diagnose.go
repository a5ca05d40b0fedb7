package jsonv

import (
	"strconv"
	"unicode/utf8"
)

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
		return d.elements('}', "after object key:value pair", func() error {
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
			return d.value(depth + 1)
		})
	case c == '[':
		return d.elements(']', "after array element", func() error { return d.value(depth + 1) })
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

// elements reads an object's or an array's elements, from its opening byte to its closing one (close): each
// read by elem, separated by commas; what stands after an element and is neither is refused as after.
func (d *diag) elements(close byte, after string, elem func() error) error {
	d.i++
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == close {
		d.i++
		return nil
	}
	for {
		d.ws()
		if err := elem(); err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.data) {
			return d.eof()
		}
		switch d.data[d.i] {
		case ',':
			d.i++
		case close:
			d.i++
			return nil
		default:
			return d.bad(after)
		}
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

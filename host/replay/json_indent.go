package replay

// A timeline's steps are written as json.MarshalIndent writes them, but without its two passes of
// encoding/json's byte-at-a-time scanner over every step (compacting each plan, then indenting the whole
// step) and the copies between them: writing the JSON was a sixth of a short replay's CPU (`ordinal replay
// -o json`, a 300-pod rollout, 3.4 MB). appendRaw reads a plan once, as encoding/json's compact does, and
// appendIndented indents what this package encoded, which it trusts to be compact and valid.

// maxJSONDepth is encoding/json's limit on nesting (its scanner's maxNestingDepth): deeper JSON is invalid
// to it, so it is to appendRaw.
const maxJSONDepth = 10000

// appendRaw appends raw as json.Marshal writes a json.RawMessage holding it (nil is null): checked to be
// one JSON value, its whitespace dropped, and <, >, &, U+2028 and U+2029 in its strings escaped (encoding/
// json's compact with HTML escaping). depth is how many objects and arrays around it the document opens
// (encoding/json's limit counts them). ok is false where encoding/json would fail: the caller then asks
// encoding/json, for its error.
func appendRaw(dst, raw []byte, depth int) (out []byte, ok bool) {
	if raw == nil {
		return append(dst, "null"...), true
	}
	c := rawCompactor{src: raw, dst: dst}
	if !c.value(depth) {
		return dst, false
	}
	c.space()
	return c.dst, c.i == len(raw)
}

// rawCompactor reads src from i, appending its compact form to dst.
type rawCompactor struct {
	src, dst []byte
	i        int
}

func (c *rawCompactor) space() {
	for c.i < len(c.src) {
		switch c.src[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// value reads the value at i, inside depth objects and arrays.
func (c *rawCompactor) value(depth int) bool {
	c.space()
	if c.i >= len(c.src) {
		return false
	}
	switch open := c.src[c.i]; open {
	case '{', '[':
		if depth >= maxJSONDepth {
			return false
		}
		end := byte('}')
		if open == '[' {
			end = ']'
		}
		c.dst = append(c.dst, open)
		c.i++
		c.space()
		if c.i < len(c.src) && c.src[c.i] == end {
			c.dst = append(c.dst, end)
			c.i++
			return true
		}
		for {
			if open == '{' {
				c.space()
				if c.i >= len(c.src) || c.src[c.i] != '"' || !c.str() {
					return false
				}
				c.space()
				if c.i >= len(c.src) || c.src[c.i] != ':' {
					return false
				}
				c.dst = append(c.dst, ':')
				c.i++
			}
			if !c.value(depth + 1) {
				return false
			}
			c.space()
			if c.i >= len(c.src) {
				return false
			}
			switch c.src[c.i] {
			case ',':
				c.dst = append(c.dst, ',')
				c.i++
			case end:
				c.dst = append(c.dst, end)
				c.i++
				return true
			default:
				return false
			}
		}
	case '"':
		return c.str()
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	case 'n':
		return c.literal("null")
	}
	return c.number()
}

func (c *rawCompactor) literal(lit string) bool {
	if len(c.src)-c.i < len(lit) || string(c.src[c.i:c.i+len(lit)]) != lit {
		return false
	}
	c.dst = append(c.dst, lit...)
	c.i += len(lit)
	return true
}

// number reads a number as JSON's grammar has it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (c *rawCompactor) number() bool {
	src, i := c.src, c.i
	if i < len(src) && src[i] == '-' {
		i++
	}
	switch {
	case i >= len(src):
		return false
	case src[i] == '0':
		i++
	case '1' <= src[i] && src[i] <= '9':
		i = digits(src, i)
	default:
		return false
	}
	if i < len(src) && src[i] == '.' {
		if i++; i >= len(src) || !isDigit(src[i]) {
			return false
		}
		i = digits(src, i)
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		if i++; i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) || !isDigit(src[i]) {
			return false
		}
		i = digits(src, i)
	}
	c.dst = append(c.dst, src[c.i:i]...)
	c.i = i
	return true
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// digits is the index of the first byte from i on that is not a digit.
func digits(src []byte, i int) int {
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	return i
}

// inString marks the bytes a string's reading must stop at: its end, an escape, the control characters
// JSON forbids raw, what HTML escaping rewrites, and the lead byte of U+2028 and U+2029.
var inString = func() (t [256]bool) {
	for b := range 0x20 {
		t[b] = true
	}
	for _, b := range []byte{'"', '\\', '<', '>', '&', 0xE2} {
		t[b] = true
	}
	return t
}()

// str reads the string at i (at its quote). Invalid UTF-8 is copied as it is, as encoding/json's compact
// copies it.
func (c *rawCompactor) str() bool {
	const hex = "0123456789abcdef"
	src := c.src
	start := c.i
	for i := c.i + 1; i < len(src); {
		b := src[i]
		if !inString[b] {
			i++
			continue
		}
		switch {
		case b == '"':
			c.dst = append(c.dst, src[start:i+1]...)
			c.i = i + 1
			return true
		case b == '\\':
			if i+1 >= len(src) {
				return false
			}
			switch src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(src)-i < 6 || !isHex(src[i+2]) || !isHex(src[i+3]) || !isHex(src[i+4]) || !isHex(src[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case b < 0x20:
			return false
		case b == 0xE2:
			if i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8 {
				c.dst = append(c.dst, src[start:i]...)
				c.dst = append(c.dst, '\\', 'u', '2', '0', '2', hex[src[i+2]&0xF])
				i += 3
				start = i
			} else {
				i++
			}
		default: // <, >, &
			c.dst = append(c.dst, src[start:i]...)
			c.dst = append(c.dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			i++
			start = i
		}
	}
	return false
}

func isHex(b byte) bool { return isDigit(b) || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F' }

// appendIndented appends compact as json.Indent writes it with prefix and indent (the bytes of
// json.MarshalIndent). compact must be valid JSON without whitespace outside its strings, as this
// package's encoders and appendRaw write it; anything else is copied as it comes.
func appendIndented(dst, compact []byte, prefix, indent string) []byte {
	ind := indenter{line: append([]byte{'\n'}, prefix...), head: 1 + len(prefix), indent: indent}
	depth := 0
	open := false // after { or [: the next byte decides between {} and a new line
	for i := 0; i < len(compact); i++ {
		b := compact[i]
		if open && b != '}' && b != ']' {
			open = false
			depth++
			dst = ind.newline(dst, depth)
		}
		switch b {
		case '"':
			j := i + 1
			for ; j < len(compact) && compact[j] != '"'; j++ {
				if compact[j] == '\\' {
					j++
				}
			}
			j = min(j, len(compact)-1)
			dst = append(dst, compact[i:j+1]...)
			i = j
		case '{', '[':
			open = true
			dst = append(dst, b)
		case ',':
			dst = append(dst, ',')
			dst = ind.newline(dst, depth)
		case ':':
			dst = append(dst, ':', ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				dst = ind.newline(dst, depth)
			}
			dst = append(dst, b)
		default:
			dst = append(dst, b)
		}
	}
	return dst
}

// indenter writes new lines: a newline, the prefix and depth indents, from one buffer of them.
type indenter struct {
	line   []byte // a newline, the prefix, and as many indents as the deepest line so far
	head   int    // the newline and the prefix
	indent string
}

func (ind *indenter) newline(dst []byte, depth int) []byte {
	n := ind.head + max(depth, 0)*len(ind.indent)
	for len(ind.line) < n {
		ind.line = append(ind.line, ind.indent...)
	}
	return append(dst, ind.line[:n]...)
}

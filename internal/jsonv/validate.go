package jsonv

import "unsafe"

// valid reports whether data is one JSON value (RFC 8259, as encoding/json accepts it) nested at most
// MaxDepth deep, in one iterative pass: no recursion, so no input can exhaust the guest's small stack.
// It replaces a depth scan followed by gjson's recursive validator (two passes, about a third of a
// reconcile's time); on failure Validate runs those two for their exact error messages. tops, when not
// nil, gets where each member of a top-level object starts (its key), read in the same pass.
func valid(s []byte, tops *[]int) bool {
	var stack [MaxDepth]byte
	depth := 0
	i := ws(s, 0)
	for {
		// a value at i
		if i >= len(s) {
			return false
		}
		switch c := s[i]; {
		case c == '{' || c == '[':
			if depth == MaxDepth {
				return false
			}
			stack[depth] = c
			depth++
			i = ws(s, i+1)
			if i < len(s) && s[i] == c+2 { // empty: '}' and ']' are '{'+2 and '['+2
				depth--
				i++
				break
			}
			if c == '{' {
				if depth == 1 && tops != nil {
					*tops = append(*tops, i)
				}
				if i = key(s, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = str(s, i); i < 0 {
				return false
			}
		case c == 't':
			if i = lit(s, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = lit(s, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = lit(s, i, "null"); i < 0 {
				return false
			}
		default:
			if i = num(s, i); i < 0 {
				return false
			}
		}
		// after a value: close containers, or a comma and the next member or element
		for {
			i = ws(s, i)
			if depth == 0 {
				return i == len(s)
			}
			if i >= len(s) {
				return false
			}
			top := stack[depth-1]
			if s[i] == top+2 {
				depth--
				i++
				continue
			}
			if s[i] != ',' {
				return false
			}
			i = ws(s, i+1)
			if top == '{' {
				if depth == 1 && tops != nil {
					*tops = append(*tops, i)
				}
				if i = key(s, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

func ws(s []byte, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ':
			i = spacesEnd(Text(unsafe.String(unsafe.SliceData(s), len(s))), i+1)
		case '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// key checks `"name" :` at i and returns the index of the value after it, or -1.
func key(s []byte, i int) int {
	if i >= len(s) || s[i] != '"' {
		return -1
	}
	if i = str(s, i); i < 0 {
		return -1
	}
	if i = ws(s, i); i >= len(s) || s[i] != ':' {
		return -1
	}
	return ws(s, i+1)
}

// str checks the string literal at i and returns the index after it, or -1.
func str(s []byte, i int) int {
	for i++; i < len(s); i++ {
		i = validStop(s, i)
		if i >= len(s) {
			return -1
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(s) {
				return -1
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s) {
					return -1
				}
				for _, h := range s[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func lit(s []byte, i int, word string) int {
	if len(s)-i < len(word) || string(s[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// num checks the number at i: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func num(s []byte, i int) int {
	digits := func(i int) int {
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(i + 1)
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

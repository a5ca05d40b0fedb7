package firewall

import (
	"bytes"
	"encoding/json"
)

// keysPlainlyUnique is checkKeys' fast path, run on every object and patch of every plan: it reports true
// only when data is one valid JSON value whose objects' keys are plain (printable ASCII without escapes)
// and distinct but for ASCII case, which for such keys is exactly what checkKeys asks (foldKey of an ASCII
// key equates only A-Z with a-z). Anything else (invalid JSON, an escaped or non-ASCII key, a repeat)
// returns false and checkKeys decides, with its own words, by decoding token by token (which allocated
// on every token and was a tenth of a 1000-pod preview's host time).
func keysPlainlyUnique(data []byte) bool {
	if !json.Valid(data) {
		return false
	}
	var sc keyScan
	sc.data = data
	return sc.value()
}

// keyScan walks JSON already known to be valid.
type keyScan struct {
	data []byte
	i    int
	// keys are where the keys of the objects being walked are in data, innermost last, n of them: a
	// fixed stack, so the walk allocates nothing (deeper or wider, checkKeys decides).
	keys [64][2]int
	n    int
}

// value walks the value at i (after white space), leaving i past it; false: checkKeys must decide.
func (s *keyScan) value() bool {
	s.space()
	switch s.data[s.i] {
	case '{':
		return s.object()
	case '[':
		s.i++
		for s.space(); s.data[s.i] != ']'; s.space() {
			if !s.value() {
				return false
			}
			if s.space(); s.data[s.i] == ',' {
				s.i++
			}
		}
		s.i++
	case '"':
		s.str()
	default: // a number or a literal: up to the next delimiter
		for s.i < len(s.data) && !delimiter(s.data[s.i]) {
			s.i++
		}
	}
	return true
}

func (s *keyScan) object() bool {
	s.i++
	base := s.n
	for s.space(); s.data[s.i] != '}'; s.space() {
		from := s.i + 1
		if plain := s.str(); !plain {
			return false
		}
		key := s.data[from : s.i-1]
		for _, k := range s.keys[base:s.n] {
			if bytes.EqualFold(s.data[k[0]:k[1]], key) { // keys here are printable ASCII: A-Z folds to a-z only
				return false
			}
		}
		if s.n == len(s.keys) {
			return false
		}
		s.keys[s.n] = [2]int{from, s.i - 1}
		s.n++
		s.space()
		s.i++ // ':'
		if !s.value() {
			return false
		}
		if s.space(); s.data[s.i] == ',' {
			s.i++
		}
	}
	s.i++
	s.n = base
	return true
}

// str skips the string at i; plain: printable ASCII without escapes.
func (s *keyScan) str() (plain bool) {
	plain = true
	for s.i++; s.data[s.i] != '"'; s.i++ {
		c := s.data[s.i]
		if c == '\\' {
			plain = false
			s.i++ // the escaped character (a \u's digits are not quotes)
		} else if c < 0x20 || c >= 0x7f {
			plain = false
		}
	}
	s.i++
	return plain
}

func (s *keyScan) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func delimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

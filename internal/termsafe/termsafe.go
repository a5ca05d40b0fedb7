// Package termsafe makes text that a module or a scenario chose safe to print on a terminal: a reconcile
// module's event and error messages reach the user's terminal through `ordinal`'s text output and through
// the webhook's warnings, and an escape sequence in them could rewrite the screen, set the window title or
// hide what follows.
package termsafe

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character but newline and tab, and every Unicode bidirectional
// override, replaced by its Go escape (\x1b, \u202e); invalid UTF-8 becomes U+FFFD. Text without them is
// returned as it is.
func String(s string) string {
	if !needs(s) {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case (r >= 0x80 && r < 0xa0) || isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needs(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || isBidi(r) || r == '\uFFFD' {
			return true
		}
	}
	return false
}

// isBidi: the embedding, override and isolate controls (Trojan Source, CVE-2021-42574).
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// JSON returns a valid JSON document with the characters String would escape, and the noncharacters
// U+FFFE and U+FFFF, written as \u escapes instead: the same JSON value, safe on a terminal and readable by
// a YAML parser (which refuses all of them raw: -o yaml converts with one). (Raw control characters below
// 0x20 cannot appear in valid JSON; DEL, the C1 controls, the bidi overrides and the noncharacters can,
// inside strings, where a \u escape means the same.)
func JSON(doc []byte) []byte {
	if !jsonNeeds(doc) {
		return doc
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(string(doc), "\uFFFD") {
		if r == 0x7f || (r >= 0x80 && r < 0xa0) || isBidi(r) || r == 0xfffe || r == 0xffff {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return []byte(b.String())
}

// jsonNeeds reports whether JSON would write doc otherwise: whether doc holds a character String escapes
// (invalid UTF-8 included) or a noncharacter. Without a copy of doc, and through a table while its bytes
// are printable ASCII: -o json writes megabytes through it, nearly all ASCII.
func jsonNeeds(doc []byte) bool {
	for i := 0; i < len(doc); {
		c := doc[i]
		if plainASCII[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return true // a control character but newline and tab, or DEL
		}
		r, size := utf8.DecodeRune(doc[i:])
		if r < 0xa0 || isBidi(r) || r == utf8.RuneError || r == 0xfffe || r == 0xffff {
			return true
		}
		i += size
	}
	return false
}

// plainASCII marks the bytes String leaves as they are and that start no multi-byte character: printable
// ASCII, newline and tab.
var plainASCII = func() (t [256]bool) {
	for c := ' '; c < 0x7f; c++ {
		t[c] = true
	}
	t['\n'], t['\t'] = true, true
	return t
}()

// JSONWriter writes a JSON document to its writer as JSON escapes it, without holding the document: each
// run of whole lines as it arrives, the rest at Close. A newline is a character of its own and ends any run
// of invalid bytes, so JSON of the lines one after another is JSON of the whole.
type JSONWriter struct {
	w       io.Writer
	pending []byte // what came after the last newline written
}

// NewJSONWriter returns a JSONWriter to w; Close writes what follows the document's last newline.
func NewJSONWriter(w io.Writer) *JSONWriter { return &JSONWriter{w: w} }

func (j *JSONWriter) Write(p []byte) (int, error) {
	end := bytes.LastIndexByte(p, '\n')
	if end < 0 {
		j.pending = append(j.pending, p...)
		return len(p), nil
	}
	lines := p[:end+1]
	if len(j.pending) > 0 {
		// what is pending ends with p's first line, and is written with it alone: the rest is not copied
		first := bytes.IndexByte(lines, '\n') + 1
		j.pending = append(j.pending, lines[:first]...)
		if _, err := j.w.Write(JSON(j.pending)); err != nil {
			return 0, err
		}
		lines = lines[first:]
	}
	if len(lines) > 0 {
		if _, err := j.w.Write(JSON(lines)); err != nil {
			return 0, err
		}
	}
	j.pending = append(j.pending[:0], p[end+1:]...)
	return len(p), nil
}

// Close writes what came after the last newline.
func (j *JSONWriter) Close() error {
	if len(j.pending) == 0 {
		return nil
	}
	_, err := j.w.Write(JSON(j.pending))
	j.pending = j.pending[:0]
	return err
}

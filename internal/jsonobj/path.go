package jsonobj

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PathError is a path that cannot be read: the path, the character (counted from 1) where it goes wrong,
// and what is wrong there.
type PathError struct {
	Path   string
	Char   int
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("path %q, character %d: %s", e.Path, e.Char, e.Reason)
}

// ParsePath reads a path as kubectl's JSONPath writes one (without its braces): keys separated by dots,
// list indexes in brackets (spec.template.spec.containers[0].image), and a key that holds dots, slashes
// or brackets either quoted in brackets (metadata.annotations["example.com/approve"],
// metadata.annotations['a.b/c']) or with those characters escaped by a backslash
// (metadata.annotations.example\.com/approve). A leading dot (.spec.replicas) is allowed. It returns the
// keys (string) and list indexes (int); a malformed path is a *PathError. Wildcards, slices, negative
// indexes and filters address no one value and are refused.
func ParsePath(path string) ([]any, error) {
	p := pathReader{path: path}
	return p.read()
}

type pathReader struct {
	path string
	i    int // byte offset of the next character
	keys []any
}

func (p *pathReader) fail(format string, args ...any) error {
	return &PathError{Path: p.path, Char: utf8.RuneCountInString(p.path[:p.i]) + 1, Reason: fmt.Sprintf(format, args...)}
}

func (p *pathReader) more() bool { return p.i < len(p.path) }
func (p *pathReader) peek() byte { return p.path[p.i] }

// read is the path: members, each a key then its brackets, separated by dots.
func (p *pathReader) read() ([]any, error) {
	if p.path == "" {
		return nil, p.fail("the path is empty")
	}
	if p.peek() == '.' {
		p.i++ // kubectl's {.metadata.name}
	}
	for {
		if err := p.member(); err != nil {
			return nil, err
		}
		if !p.more() {
			return p.keys, nil
		}
		p.i++ // the dot member stopped at
	}
}

// member is one key (or, first in the path, a bracket) and the brackets after it, up to a dot or the end.
func (p *pathReader) member() error {
	if !p.more() {
		return p.fail("a key is missing after the dot")
	}
	if p.peek() != '[' || len(p.keys) > 0 {
		if err := p.bareKey(); err != nil {
			return err
		}
	}
	for p.more() {
		switch p.peek() {
		case '.':
			return nil
		case '[':
			if err := p.bracket(); err != nil {
				return err
			}
		default:
			return p.fail("%q after ]: want a dot or [", p.peek())
		}
	}
	return nil
}

// bareKey is a key up to a dot or bracket not escaped by a backslash.
func (p *pathReader) bareKey() error {
	start := p.i
	var key []byte
	for p.more() {
		c := p.peek()
		switch c {
		case '.', '[':
			if p.i == start {
				return p.fail("an empty key (%q where a key begins)", c)
			}
			p.keys = append(p.keys, string(key))
			return nil
		case ']':
			return p.fail("] without [")
		case '\\':
			p.i++
			if !p.more() {
				return p.fail("a backslash at the end escapes nothing")
			}
			switch e := p.peek(); e {
			case '.', '[', ']', '\\':
				key = append(key, e)
			default:
				return p.fail(`\%c: a backslash escapes only . [ ] and \ (quote the key in brackets instead)`, e)
			}
		default:
			key = append(key, c)
		}
		p.i++
	}
	p.keys = append(p.keys, string(key))
	return nil
}

// bracket is [N], a list index, or ['key'] / ["key"], a key.
func (p *pathReader) bracket() error {
	p.i++ // [
	if !p.more() {
		return p.fail("[ is not closed")
	}
	switch c := p.peek(); {
	case c == '\'' || c == '"':
		return p.quotedKey(c)
	case c >= '0' && c <= '9':
		return p.index()
	case c == '*' || c == '-' || c == ':' || c == '?':
		return p.fail("%q: wildcards, slices, negative indexes and filters address no one value; give a list index or a quoted key", c)
	default:
		return p.fail("%q after [: want a list index (0, 1, ...) or a quoted key ('key' or \"key\")", c)
	}
}

func (p *pathReader) index() error {
	start := p.i
	for p.more() && p.peek() >= '0' && p.peek() <= '9' {
		p.i++
	}
	digits := p.path[start:p.i]
	n, err := strconv.Atoi(digits)
	if err != nil {
		p.i = start
		return p.fail("list index %s is too large", digits)
	}
	if !p.more() || p.peek() != ']' {
		return p.fail("a list index is closed by ]")
	}
	p.i++
	p.keys = append(p.keys, n)
	return nil
}

// quotedKey is a key between quotes; a backslash escapes the quote or a backslash.
func (p *pathReader) quotedKey(quote byte) error {
	p.i++
	var key []byte
	for {
		if !p.more() {
			return p.fail("the quoted key is not closed by %c", quote)
		}
		c := p.peek()
		if c == quote {
			break
		}
		if c == '\\' && p.i+1 < len(p.path) && (p.path[p.i+1] == quote || p.path[p.i+1] == '\\') {
			p.i++
			c = p.peek()
		}
		key = append(key, c)
		p.i++
	}
	if len(key) == 0 {
		return p.fail("an empty key")
	}
	p.i++ // the closing quote
	if !p.more() || p.peek() != ']' {
		return p.fail("a quoted key is closed by %c]", quote)
	}
	p.i++
	p.keys = append(p.keys, string(key))
	return nil
}

// FormatPath writes keys (strings) and list indexes (ints) as a path ParsePath reads back: a key that
// holds a dot, bracket, backslash or quote in brackets and double quotes (an empty key, which no path
// may name, as [""]).
func FormatPath(keys []any) string {
	var b strings.Builder
	for _, k := range keys {
		switch key := k.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", key)
		case string:
			if key == "" || strings.ContainsAny(key, `.[]\"'`) {
				b.WriteString(`["` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"]`)
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(key)
		}
	}
	return b.String()
}

package yamljson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// A YAML library holds a whole document as nodes, then as maps, then as JSON: 30 times its size and more.
// The large documents Ordinal reads are a mapping whose bulk is a block sequence — a List's items, a
// snapshot's pods — which kubectl and every YAML emitter write one line per key, each sequence item
// starting with "- " at the sequence's indentation. byEntries converts such a document a piece at a time:
// each top-level entry on its own and each item of a top-level block sequence on its own, written straight
// into the JSON, so a List costs its size as YAML and as JSON plus one item's conversion.

// wholeBelow is the size below which a document is converted whole: small documents are cheap to read
// either way, and keep the library's own errors for everything.
const wholeBelow = 256 << 10

// retryWholeBelow is the largest document a failed piecewise conversion converts whole again (about 30
// times its size in memory): past it the piece's error stands.
const retryWholeBelow = 4 << 20

// entry is one top-level entry of a block mapping: bytes [start, end) of the document (start is its key
// line's); items, when its value is a block sequence, are the offsets where its items start.
type entry struct {
	start, end int
	key        string
	items      []int
}

// byEntries converts b a piece at a time when its shape allows (ok false: convert it whole): the same
// bytes as the library's whole conversion. Each piece is converted strictly, as a whole document would
// be, a key given twice at the top level is refused as the library refuses it, and an error names the
// line in b.
func byEntries(b []byte, aliases *aliasBudget) (js []byte, ok bool, err error) {
	entries, ok := topEntries(b)
	if !ok {
		return nil, false, nil
	}
	// the library writes a mapping's keys sorted (it goes through a Go map); plainKey's keys read as
	// themselves
	slices.SortStableFunc(entries, func(x, y entry) int { return strings.Compare(x.key, y.key) })
	for i := 1; i < len(entries); i++ {
		if entries[i].key == entries[i-1].key {
			later := max(entries[i].start, entries[i-1].start)
			return nil, true, fmt.Errorf("yaml: line %d: key %s already set in map", lineOf(b, later), strconv.Quote(entries[i].key))
		}
	}
	out := make([]byte, 0, len(b)+len(b)/8)
	out = append(out, '{')
	for i, e := range entries {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, e.key) // plainKey's characters need no escaping
		out = append(out, ':')
		if out, err = appendValue(out, b, e, aliases); err != nil {
			return nil, true, err
		}
	}
	return append(out, '}'), true, nil
}

// lineOf is the line (from 1) of b that offset is on.
func lineOf(b []byte, offset int) int { return bytes.Count(b[:offset], []byte{'\n'}) + 1 }

// lines calls fn with each line of b[from:to] (without its newline and a carriage return before it) and
// its offset; fn returns false to stop.
func lines(b []byte, from, to int, fn func(at int, l []byte) bool) {
	for at := from; at < to; {
		end := to
		if i := bytes.IndexByte(b[at:to], '\n'); i >= 0 {
			end = at + i
		}
		l := bytes.TrimSuffix(b[at:end], []byte{'\r'})
		if !fn(at, l) {
			return
		}
		at = end + 1
	}
}

// blank: a line of spaces only, or a comment.
func blank(l []byte) bool {
	t := bytes.TrimLeft(l, " ")
	return len(t) == 0 || t[0] == '#'
}

// notPlainKeys are the keys YAML 1.1 (the library's) reads as booleans and null, not as their text.
var notPlainKeys = map[string]bool{"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true,
	"no": true, "No": true, "NO": true, "true": true, "True": true, "TRUE": true, "false": true, "False": true,
	"FALSE": true, "on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true, "null": true, "Null": true, "NULL": true}

// plainKey reads a top-level key line, "key:" followed by a space, a comment or nothing: a key of the
// characters Kubernetes' field names and the snapshot's members use, starting with a letter, that the
// library reads as its text. Anything else (quoted keys, flow mappings, directives, document markers,
// numbers) is for the library (ok false). rest is what follows the colon.
func plainKey(l []byte) (key string, rest []byte, ok bool) {
	i := bytes.IndexByte(l, ':')
	if i <= 0 || !(l[0] >= 'a' && l[0] <= 'z' || l[0] >= 'A' && l[0] <= 'Z' || l[0] == '_') {
		return "", nil, false
	}
	for _, c := range l[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/') {
			return "", nil, false
		}
	}
	rest = l[i+1:]
	if len(rest) > 0 && rest[0] != ' ' {
		return "", nil, false
	}
	if notPlainKeys[string(l[:i])] {
		return "", nil, false
	}
	return string(l[:i]), rest, true
}

// isItem: l starts a block sequence item at indentation indent ("- " or a lone "-").
func isItem(l []byte, indent int) bool {
	if len(l) <= indent || len(bytes.TrimLeft(l[:indent], " ")) != 0 || l[indent] != '-' {
		return false
	}
	return len(l) == indent+1 || l[indent+1] == ' '
}

// topEntries reads the document's top-level entries in one pass: ok only for a block mapping every one of
// whose top-level lines is a plain key, and each of whose values that starts on the line after its key is
// either a block sequence, all of whose lines are indented past its items' indentation but the items'
// first lines, or anything else (then converted whole).
func topEntries(b []byte) ([]entry, bool) {
	var out []entry
	ok := true
	indent := -1      // the current entry's items' indentation; -1: not yet seen
	sequence := false // the current entry's value is a block sequence
	lines(b, 0, len(b), func(at int, l []byte) bool {
		if blank(l) {
			return true
		}
		lead := len(l) - len(bytes.TrimLeft(l, " "))
		if lead == 0 && !isItem(l, 0) { // a top-level key
			key, rest, isKey := plainKey(l)
			if !isKey {
				ok = false
				return false
			}
			if len(out) > 0 {
				out[len(out)-1].end = at
			}
			out = append(out, entry{start: at, end: len(b), key: key})
			indent, sequence = -1, blank(rest)
			return true
		}
		if len(out) == 0 || l[lead] == '\t' {
			ok = false // an indented document, a top-level sequence; tabs are the library's to refuse
			return false
		}
		e := &out[len(out)-1]
		if !sequence {
			return true // within a value converted whole
		}
		if indent < 0 {
			if !isItem(l, lead) {
				sequence = false // a block mapping: converted whole
				return true
			}
			indent = lead
		}
		switch {
		case lead == indent && isItem(l, indent):
			e.items = append(e.items, at)
		case lead <= indent:
			ok = false
			return false
		}
		return true
	})
	return out, ok && len(out) > 0
}

// appendValue appends e's value as JSON to out: its items one at a time, or the entry whole.
func appendValue(out, b []byte, e entry, aliases *aliasBudget) ([]byte, error) {
	if e.items == nil {
		one, err := piece(b, e.start, e.end, aliases)
		if err != nil {
			return out, err
		}
		var m map[string]json.RawMessage
		err = json.Unmarshal(one, &m)
		v, found := m[e.key]
		if err != nil || !found || len(m) != 1 {
			return out, fmt.Errorf("yaml: line %d: not one key and its value", lineOf(b, e.start))
		}
		return append(out, v...), nil
	}
	out = append(out, '[')
	for k, start := range e.items {
		end := e.end
		if k+1 < len(e.items) {
			end = e.items[k+1]
		}
		item, err := piece(b, start, end, aliases)
		if err != nil {
			return out, err
		}
		if len(item) < 2 || item[0] != '[' || item[len(item)-1] != ']' {
			return out, fmt.Errorf("yaml: line %d: not one sequence item", lineOf(b, start))
		}
		if k > 0 {
			out = append(out, ',')
		}
		out = append(out, item[1:len(item)-1]...)
	}
	return append(out, ']'), nil
}

// piece converts bytes [start, end) of b as a document of their own, its errors naming lines of b, its
// aliases weighed against aliases.
func piece(b []byte, start, end int, aliases *aliasBudget) ([]byte, error) {
	if end-start > retryWholeBelow {
		return nil, fmt.Errorf("yaml: line %d: one top-level entry or list item of %d bytes, more than the %d a piece may be (the YAML library reads a piece whole, at about 30 times its size)",
			lineOf(b, start), end-start, retryWholeBelow)
	}
	if err := aliases.spend(b[start:end]); err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSONStrict(b[start:end])
	if err != nil {
		return nil, located(err, lineOf(b, start)-1)
	}
	return j, nil
}

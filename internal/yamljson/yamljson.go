// Package yamljson is the one reading of YAML input as JSON (manifests, scenarios, snapshots, Lists,
// edits, `ordinal test` files): sigs.k8s.io/yaml's strict conversion, which refuses a key given twice.
// YAML requires a mapping's keys to be unique and JSON input refuses a repeated field, yet the lenient
// conversion kept the last one silently (issue 32, finding 8). Errors name the line in the file, also in
// the second and later documents of a stream.
package yamljson

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/internal/readlimit"
)

// YAML costs far more memory to read than JSON: the conversion holds the whole document as YAML nodes,
// then as maps, then as JSON. A kubectl List of pods peaked at 30 times its size as YAML (18 MB: 511 MB
// of heap, 750 MB allocated), at 3.3 times as JSON (issue 32, finding 3). So a YAML input may be an eighth
// of the size a JSON one may be: reading either costs at most about 4 times the input limit. The
// document is refused at its limit, before it is parsed; a List is one document, which no part of a YAML
// library converts a piece at a time, and JSON, which every kubectl writes (-o json), keeps the full limit.
const yamlShare = 8

// Limit is the most bytes of YAML read for an input whose limit (as JSON) is limit.
func Limit(limit int64) int64 { return limit / yamlShare }

// IsJSON tells a JSON document (its first byte after blanks and a UTF-8 byte order mark is '{') from YAML.
func IsJSON(b []byte) bool {
	t := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// sniffBytes of a document are read before the rest, to judge it: enough for any binary header.
const sniffBytes = 4096

// Read reads a JSON or YAML document from r like readlimit.Read, judging its first bytes before reading
// on: binary input (a NUL byte, which JSON and YAML text never holds: /dev/zero, a module, a compressed
// file) is refused at once (*readlimit.NotTextError), and YAML is read to Limit(limit) only.
func Read(r io.Reader, limit int64, what, raise string) ([]byte, error) {
	head := make([]byte, min(sniffBytes, limit+1))
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	head = head[:n]
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return nil, &readlimit.NotTextError{What: what, Offset: i, Want: "JSON or YAML"}
	}
	rest := readlimit.WithSizeHint(io.MultiReader(bytes.NewReader(head), r), readlimit.SizeHint(r))
	if IsJSON(head) {
		return readlimit.Read(rest, limit, what, raise)
	}
	b, err := readlimit.Read(rest, Limit(limit), what, raise)
	if tl, ok := err.(*readlimit.TooLargeError); ok {
		tl.Format = "YAML"
		tl.Note = fmt.Sprintf("YAML takes about 30 times its size in memory to read; as JSON (kubectl get -o json) it may be up to %s", sizeOf(limit))
	}
	return b, err
}

// ToJSONWithin is ToJSON for a document read with limit (Read): one larger than Limit(limit), which
// Read took for JSON yet must be read as YAML ({a: b} is YAML's, not JSON), is refused before it is parsed.
func ToJSONWithin(b []byte, limit int64, what string) ([]byte, error) {
	if int64(len(b)) > Limit(limit) {
		return nil, &readlimit.TooLargeError{What: what, Limit: Limit(limit), Format: "YAML",
			Note: "it is not valid JSON, and YAML takes about 30 times its size in memory to read"}
	}
	return ToJSON(b, limit)
}

// ReadFile reads the named file like Read (readlimit.File).
func ReadFile(path string, limit int64, what, raise string) ([]byte, error) {
	return readlimit.FileWith(path, limit, what, raise, Read)
}

func sizeOf(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ToJSON converts one YAML (or JSON) document, read with limit (Read), to JSON. Its aliases may not expand
// it past Limit(limit) (aliasBudget).
func ToJSON(b []byte, limit int64) ([]byte, error) { return toJSON(b, 0, newAliasBudget(limit)) }

// toJSON converts a document that starts after offset lines of its file: a large one a piece at a time
// where its shape allows (byEntries), the same bytes as whole; one that fails so is converted whole when
// that is affordable, for the library's verdict on it (an alias of an anchor in another item is valid
// YAML), else refused with the piece's error. What the library converts, whole or a piece, is first
// weighed with its aliases expanded against aliases.
func toJSON(b []byte, offset int, aliases *aliasBudget) ([]byte, error) {
	if len(b) >= wholeBelow {
		before := *aliases
		j, ok, err := byEntries(b, aliases)
		switch {
		case ok && err == nil:
			return j, nil
		case ok && isTooLarge(err):
			return nil, err
		case ok && len(b) > retryWholeBelow:
			return nil, fmt.Errorf("%w (a YAML document this large is read one top-level entry and list item at a time, which it does not allow: give it as JSON, kubectl get -o json)", located(err, offset))
		}
		*aliases = before // the pieces weighed are weighed again whole
	}
	if err := aliases.spend(b); err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		return nil, located(err, offset)
	}
	return j, nil
}

// Documents splits a YAML stream, read with limit (Read), into its non-empty documents, as JSON (a document
// of comments only is none). Their aliases together may not expand them past Limit(limit) (aliasBudget).
func Documents(b []byte, limit int64) ([][]byte, error) {
	aliases := newAliasBudget(limit)
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var docs [][]byte
	for i := 0; ; i++ {
		d, err := r.Read()
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(d)) == 0 {
			continue
		}
		j, err := toJSON(d, firstLine(b, i)-1, aliases)
		if err != nil {
			return nil, err
		}
		if string(j) == "null" {
			continue
		}
		docs = append(docs, j)
	}
}

// firstLine is the line of the file where the stream's document n (counted as YAMLReader returns them)
// starts: documents are the runs of lines between lines that start with "---".
func firstLine(b []byte, n int) int {
	in, doc := false, -1
	for line := 1; len(b) > 0; line++ {
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if bytes.HasPrefix(l, []byte("---")) {
			in = false
			continue
		}
		if !in {
			in, doc = true, doc+1
			if doc == n {
				return line
			}
		}
	}
	return 1
}

var lineRE = regexp.MustCompile(`line (\d+)`)

// located makes the YAML library's error one line, with its line numbers counted in the file (the
// document starts after offset lines): `yaml: line 4: key "metadata" already set in map`.
func located(err error, offset int) error {
	msg := strings.Replace(err.Error(), "unmarshal errors:\n  ", "", 1)
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	msg = lineRE.ReplaceAllStringFunc(msg, func(s string) string {
		n, _ := strconv.Atoi(s[len("line "):])
		return fmt.Sprintf("line %d", n+offset)
	})
	return fmt.Errorf("%s", msg)
}

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
)

// ToJSON converts one YAML (or JSON) document to JSON.
func ToJSON(b []byte) ([]byte, error) {
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		return nil, located(err, 0)
	}
	return j, nil
}

// Documents splits a YAML stream into its non-empty documents, as JSON (a document of comments only is
// none).
func Documents(b []byte) ([][]byte, error) {
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
		j, err := yaml.YAMLToJSONStrict(d)
		if err != nil {
			return nil, located(err, firstLine(b, i)-1)
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

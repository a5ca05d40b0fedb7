package yamljson

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// A document converted a piece at a time is the same JSON, byte for byte, as the library's whole
// conversion: every YAML file of the repository (scenarios, tests, manifests, the chart's templates aside)
// and the shapes a List and a snapshot take, including kubectl's unindented sequences, comments, blank
// lines, block scalars and values on the key's line.
func TestByEntriesIsTheWholeConversion(t *testing.T) {
	var docs []string
	for _, glob := range []string{"../../testdata/*/*.yaml", "../../testdata/*/*/*.yaml", "../../examples/*.yaml", "../../examples/deploy/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(b))
		}
	}
	if len(docs) < 20 {
		t.Fatalf("found %d YAML files to compare", len(docs))
	}
	docs = append(docs,
		podListYAML(3, false), podListYAML(3, true),
		"statefulSet:\n  metadata: {name: web}\npods:\n- metadata:\n    name: web-0\n  # a comment\n\n- metadata:\n    name: web-1\n    annotations:\n      note: |\n        - not an item\n        - nor this\nnow: \"2026-11-29T00:00:00Z\"\nabi: 1\n",
		"items: []\nkind: List\n",
		"items:\n\nkind: List\n",
		"b: 1\na:\n  - x\n  -\n    y: 2\n  - - nested\n    - list\n",
		"z: plain\n  continued\ny: 'quoted'\n",
	)
	pieces := 0
	for i, d := range docs {
		want, werr := yaml.YAMLToJSONStrict([]byte(d))
		got, ok, gerr := byEntries([]byte(d), newAliasBudget(1<<30))
		if !ok {
			continue // the library's alone
		}
		pieces++
		if (werr != nil) != (gerr != nil) || !bytes.Equal(want, got) {
			t.Errorf("document %d: whole %s (%v)\npieces %s (%v)\n%s", i, want, werr, got, gerr, d)
		}
	}
	if pieces < len(docs)/2 {
		t.Errorf("only %d of %d documents were converted a piece at a time", pieces, len(docs))
	}
}

// What the pieces cannot read as the whole is read (a document that is not a block mapping of plain keys)
// is left to the library, and what they read wrong is refused or converted whole: a key given twice at
// the top level, an alias of an anchor in another item.
func TestByEntriesLeavesOrRefuses(t *testing.T) {
	for _, d := range []string{"- a\n- b\n", "{a: 1}\n", "\"quoted key\": 1\n", "  indented: 1\n", "%YAML 1.2\n---\na: 1\n", "? complex\n: key\n", "yes: 1\n", "1: x\n", "a: 1\n\tb: 2\n"} {
		if _, ok, _ := byEntries([]byte(d), newAliasBudget(1<<30)); ok {
			t.Errorf("%q: read a piece at a time", d)
		}
	}
	_, ok, err := byEntries([]byte("kind: List\nitems:\n- a\nkind: Other\n"), newAliasBudget(1<<30))
	if !ok || err == nil || !strings.Contains(err.Error(), `line 4: key "kind" already set in map`) {
		t.Errorf("a key given twice: %v, %v", ok, err)
	}
	anchors := "items:\n- &first {a: 1}\n- *first\n"
	if _, ok, err := byEntries([]byte(anchors), newAliasBudget(1<<30)); !ok || err == nil {
		t.Errorf("an alias of another item's anchor: %v, %v", ok, err)
	}
	if j, err := ToJSON([]byte(anchors+strings.Repeat("# padding\n", wholeBelow/10)), 1<<30); err != nil || string(j) != `{"items":[{"a":1},{"a":1}]}` {
		t.Errorf("a document below retryWholeBelow is converted whole after all: %s, %v", j, err)
	}
	big := anchors + strings.Repeat("- b: 1\n", retryWholeBelow/7+1)
	if _, err := ToJSON([]byte(big), 1<<30); err == nil || !strings.Contains(err.Error(), "unknown anchor") || !strings.Contains(err.Error(), "as JSON") {
		t.Errorf("a large document the pieces cannot read: %v", err)
	}
}

// No piece is larger than retryWholeBelow: a large document whose bulk is one mapping, not a sequence, is
// refused (its memory would be the library's 30 times), naming the line where the piece starts.
func TestByEntriesBoundsAPiece(t *testing.T) {
	var b strings.Builder
	b.WriteString("kind: X\nspec:\n")
	for i := 0; b.Len() <= retryWholeBelow+100; i++ {
		fmt.Fprintf(&b, "  key%d: value\n", i)
	}
	_, err := ToJSON([]byte(b.String()), 1<<30)
	if err == nil || !strings.Contains(err.Error(), "line 2: one top-level entry or list item") || !strings.Contains(err.Error(), "as JSON") {
		t.Errorf("a 4 MiB mapping: %v", err)
	}
}

// Errors in a piece name the line of the file, in later documents of a stream too.
func TestByEntriesErrorsNameTheFilesLine(t *testing.T) {
	pad := strings.Repeat("- a: 1\n", retryWholeBelow/7+1)
	doc := "items:\n- a: 1\n- a: 1\n  a: 2\n" + pad
	_, err := Documents([]byte("kind: X\n---\n"+doc), 1<<30)
	if err == nil || !strings.Contains(err.Error(), "line 6") {
		t.Errorf("a duplicate key in an item, document 2: %v (want line 6)", err)
	}
}

// podListYAML is a kubectl List of n pods, its items at column 0 as kubectl writes them or indented.
func podListYAML(n int, indented bool) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nitems:\n")
	ind := ""
	if indented {
		ind = "  "
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s- apiVersion: v1\n%s  kind: Pod\n%s  metadata:\n%s    name: web-%d\n%s    labels: {app: web}\n%s  spec:\n%s    containers:\n%s    - name: nginx\n%s      image: nginx:1\n%s      args: [\"-\", \"- x\"]\n",
			ind, ind, ind, ind, i, ind, ind, ind, ind, ind, ind)
	}
	b.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	return b.String()
}

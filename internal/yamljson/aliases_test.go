package yamljson

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/readlimit"
)

// aliasBomb is a small YAML document whose aliases name one long string n times, with enough plain
// values beside them that the YAML library's own alias check (a document mostly alias expansion) passes
// it: about n*size bytes once converted.
func aliasBomb(size, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "s: &s %q\nl: [", strings.Repeat("x", size))
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("*s")
	}
	for range n/50 + 1 {
		b.WriteString(", 1")
	}
	b.WriteString("]\n")
	return b.String()
}

// A document whose aliases expand it past the YAML limit of its input is refused before it is converted,
// as a document that large is; the same aliases within the limit are converted, as are anchors used as
// people use them.
func TestAliasesCountAgainstTheYAMLLimit(t *testing.T) {
	const limit = 8 << 20          // YAML: 1 MiB
	bomb := aliasBomb(10000, 2000) // 20 MB expanded, 20 kB written
	_, err := ToJSON([]byte(bomb), limit)
	var tl *readlimit.TooLargeError
	if !errors.As(err, &tl) || err.Error() != "the document with its aliases expanded is larger than the 1 MiB limit for YAML; each alias (*name) repeats all its anchor (&name) holds" {
		t.Fatalf("ToJSON of an alias bomb: %v", err)
	}
	if _, err := Documents([]byte("a: 1\n---\n"+bomb), limit); !errors.As(err, &tl) {
		t.Fatalf("Documents with an alias bomb: %v", err)
	}
	if j, err := ToJSON([]byte(aliasBomb(1000, 500)), limit); err != nil || len(j) < 500*1000 {
		t.Fatalf("aliases within the limit: %d bytes, %v", len(j), err)
	}
	j, err := ToJSON([]byte("base: &b {image: x, env: [{name: A}]}\nc1: *b\nc2: {<<: *b, name: z}\n"), limit)
	if err != nil || string(j) != `{"base":{"env":[{"name":"A"}],"image":"x"},"c1":{"env":[{"name":"A"}],"image":"x"},"c2":{"env":[{"name":"A"}],"image":"x","name":"z"}}` {
		t.Fatalf("anchors as people use them: %s, %v", j, err)
	}
}

// A large document converted a piece at a time (byEntries) weighs its pieces' aliases against one budget:
// each item's few aliases are harmless, all of them together expand it past the limit.
func TestAliasesOfPiecesShareTheLimit(t *testing.T) {
	const limit = 8 << 20 // YAML: 1 MiB
	var b strings.Builder
	b.WriteString("kind: List\nitems:\n")
	item := fmt.Sprintf("- s: &s %q\n  l: [%s1]\n", strings.Repeat("x", 1000), strings.Repeat("*s, ", 10))
	for b.Len() < wholeBelow+len(item) {
		b.WriteString(item)
	}
	if _, ok, err := byEntries([]byte(b.String()), newAliasBudget(1<<30)); !ok || err != nil {
		t.Fatalf("the document is not read a piece at a time (%v, %v): the test tests nothing", ok, err)
	}
	_, err := ToJSON([]byte(b.String()), limit)
	if !isTooLarge(err) {
		t.Fatalf("%d items of 11 kB each: %v", strings.Count(b.String(), "\n- "), err)
	}
}

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
)

// reconcile refuses --policy, which it would ignore, and says so when the set names policies: its plan is
// the module's, before any policy.
func TestReconcileAndPolicies(t *testing.T) {
	snap, err := os.ReadFile(filepath.Join("..", "..", "internal", "conformance", "cases", "rolling-update", "ordered-p0-mu-unset.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, string(snap), "reconcile", "--policy", "x.wasm"); code != ExitUsage || stdout != "" ||
		!strings.Contains(stderr, "--policy: reconcile prints the module's plan") {
		t.Errorf("reconcile --policy: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal(snap, &v); err != nil {
		t.Fatal(err)
	}
	v["statefulSet"].(map[string]any)["metadata"].(map[string]any)["annotations"] = map[string]any{abi.AnnotationPolicies: "pdb"}
	named, _ := json.Marshal(v)
	code, stdout, stderr := run(t, string(named), "reconcile")
	if stdout == "" || !strings.Contains(stderr, "the set names policies (ordinal.dev/policies: pdb)") {
		t.Errorf("reconcile of a set naming policies: exit %d, stderr %q", code, stderr)
	}
	if _, _, stderr := run(t, string(snap), "reconcile"); strings.Contains(stderr, "policies") {
		t.Errorf("reconcile of a set naming none: %q", stderr)
	}
}

// annotationsOf is setAnnotations of doc's set as both readings find it: recognise's pass over a file read
// (readTop) and readSnapshotFile's over a snapshot the CLI built; they must find the same set.
func annotationsOf(t *testing.T, doc []byte) map[string]string {
	t.Helper()
	built := readSnapshotFile(doc)
	if read := recognise(doc, 1<<20); read.set != built.set {
		t.Errorf("%q: recognise found the set %q, readSnapshotFile %q", doc, read.set, built.set)
	}
	return setAnnotations(built.set)
}

// The set's annotations are read as the module and Go's decoder read them: string values only (the module
// refuses any other, so a set with one names no policies), a key given twice by its last value, escaped
// keys unescaped.
func TestSetAnnotations(t *testing.T) {
	snap := func(ann string) []byte {
		return []byte(`{"abi":1,"statefulSet":{"metadata":{"name":"pods","annotations":` + ann + `}},"pods":[]}`)
	}
	for _, c := range []struct{ ann, want string }{
		{`{"ordinal.dev/policies":"pdb"}`, "map[ordinal.dev/policies:pdb]"},
		{`{"ordinal.dev/policies":5,"ordinal.dev/module":["x"],"a":true,"b":null,"c":{"d":"e"}}`, "map[]"},
		{`{"ordinal.dev/policies":"a","ordinal.dev/policies":"b"}`, "map[ordinal.dev/policies:b]"},
		{`{"ordinal.dev/polic\u0069es":"\u0061"}`, "map[ordinal.dev/policies:a]"},
		{`null`, "map[]"},
		{`"x"`, "map[]"},
		{`["ordinal.dev/module","a"]`, "map[]"},
	} {
		if got := fmt.Sprint(annotationsOf(t, snap(c.ann))); got != c.want {
			t.Errorf("annotations %s: %s, want %s", c.ann, got, c.want)
		}
	}
	// the set the module reads: the last statefulSet member, whatever comes before or after it
	twice := `{"statefulSet":{"metadata":{"annotations":{"ordinal.dev/module":"nosuch"}}},"pods":[{"metadata":{"annotations":{"a":"b"}}}],` +
		`"statefulSet":{"metadata":{"name":"web","annotations":{"ordinal.dev/policies":"pdb"}}},"claims":[]}`
	if got := fmt.Sprint(annotationsOf(t, []byte(twice))); got != "map[ordinal.dev/policies:pdb]" {
		t.Errorf("two statefulSet members: %s, want the last one's", got)
	}
	// a snapshot that is not valid JSON names nothing: the module says what is wrong with it
	truncated := `{"abi":1,"statefulSet":{"metadata":{"annotations":{"ordinal.dev/module":"nosuch"}}},"pods":[`
	for _, doc := range []string{``, `not JSON`, `[]`, `{"abi":1}`, `{"statefulSet":1}`, truncated} {
		if got := annotationsOf(t, []byte(doc)); len(got) != 0 {
			t.Errorf("%q: %v", doc, got)
		}
	}
	if code, _, stderr := run(t, truncated, "reconcile"); code != ExitRejected || strings.Contains(stderr, "nosuch") {
		t.Errorf("reconcile of a truncated snapshot whose set names a module: exit %d, stderr %q (want the module's refusal)", code, stderr)
	}
	// reconcile names no policies for a set whose annotation is not a string: the module refuses the snapshot
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "conformance", "cases", "rolling-update", "ordered-p0-mu-unset.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	v["statefulSet"].(map[string]any)["metadata"].(map[string]any)["annotations"] = map[string]any{abi.AnnotationPolicies: 5}
	named, _ := json.Marshal(v)
	if code, _, stderr := run(t, string(named), "reconcile"); code != ExitRejected || strings.Contains(stderr, "names policies") {
		t.Errorf("reconcile of a set whose policies annotation is a number: exit %d, stderr %q", code, stderr)
	}
}

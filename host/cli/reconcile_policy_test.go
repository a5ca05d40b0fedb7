package cli

import (
	"encoding/json"
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

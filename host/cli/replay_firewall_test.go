package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/wasmbuild"
)

// Replays and previews run the module's plans through the controller's firewall: a module that deletes
// a pod of another set is a failed module (exit 4), and the write is not replayed.
func TestReplayAndPreviewRunTheFirewall(t *testing.T) {
	module := filepath.Join(t.TempDir(), "hostile.wasm")
	plan := `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"default","name":"other-0"}],"requeueAfterSeconds":0,"events":[]}`
	if err := os.WriteFile(module, wasmbuild.FixedOutput(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"replay", "../../examples/rolling-update.yaml", "--module", module},
		{"preview", "-f", "../../testdata/replay/preview/scale-down-delete.edit.yaml", "--scenario", "../../testdata/replay/preview/scale-down-delete.scenario.yaml", "--module", module},
	} {
		code, stdout, stderr := run(t, "", args...)
		if code != ExitModuleFailure || !strings.Contains(stderr, "firewall") || !strings.Contains(stderr, "other-0") {
			t.Errorf("%v: exit %d, want %d with the firewall's refusal; stderr %s", args[0], code, ExitModuleFailure, stderr)
		}
		if strings.Contains(stdout, "delete Pod other-0") {
			t.Errorf("%v: the refused write was replayed:\n%s", args[0], stdout)
		}
	}
}

package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const previewDir = "../../testdata/replay/preview"

// Previews of the trap cases: <case>.scenario.yaml builds the world, <case>.edit.yaml is the
// edited StatefulSet, <case>.preview.txt the expected output (-update rewrites it). Each case must
// also name its trap (lists of pods as runs: web-0..web-2), each warning once, before the steps, and end
// with their codes.
func TestPreviewTraps(t *testing.T) {
	mustMention := map[string][]string{
		"forced-rollback":               {"OrderedReady: web-2 not Running and Ready", "forced rollback", "outcome: stuck", "steps: none", "if A never becomes Ready: the rollout waits for web-2 (another revision)"},
		"scale-down-delete":             {"whenScaled=Delete", "data-web-2..data-web-4", "[web-4] -> [web-3] -> [web-2]", "outcome: complete"},
		"forced-rollback-recover-stuck": {"delete Pod web-2", "outcome: complete", "recover-stuck-after 1m deletes a pod not at the update revision", "if A never becomes Ready: the rollout stalls on web-2", "recovery configured: ordinal.dev/recover-stuck-after 1m"},
		"reserve-ordinals":              {"create Pod web-4", "delete Pod web-1", "reserve-ordinals \"1\" deletes these PVCs and their data: data-web-1", "outcome: complete"},
		"in-place":                      {"update Pod web-2 (revision B, in place)", "pods updated in place, in batches: [web-2] -> [web-1] -> [web-0]", "outcome: complete"},
		"in-place-mixed": {"pods updated, in batches: [web-4 web-3 in place; web-2 recreated] -> [web-1 web-0 recreated]",
			"recreated, not in place: web-0..web-2 (from A): Recreating Pod web-2 of StatefulSet web to move it to revision", "spec.containers[0].env changes, which a pod cannot change in place"},
		"in-place-only":         {"! StatefulSet \"web\" holds Pod web-2 at revision", "spec.containers[0].env changes, which a pod cannot change in place, and ordinal.dev/pod-update-policy is InPlaceOnly", "outcome: stuck after 0s: ordinal.dev/pod-update-policy InPlaceOnly holds web-0..web-2 (A) (condition InPlaceUpdateBlocked)"},
		"partition-unavailable": {"counts unavailable pods below the partition", "web-0", "held back by the partition: web-0..web-2", "[web-4] -> [web-3]", "if B never becomes Ready: the rollout stalls on web-0, web-4", "reverting the template recovers it: the controller replaces web-4"},
	}
	for name, wants := range mustMention {
		t.Run(name, func(t *testing.T) {
			base := filepath.Join(previewDir, name)
			p := previewCase(t, name)
			var got bytes.Buffer
			if err := p.WriteText(&got); err != nil {
				t.Fatal(err)
			}
			flat := strings.Join(strings.Fields(got.String()), " ") // lines wrap at textWidth
			for _, w := range wants {
				if !strings.Contains(flat, w) {
					t.Errorf("preview does not mention %q:\n%s", w, got.String())
				}
			}
			if n := strings.Count(got.String(), "\n  ! "); n != len(p.Warnings) || n > 0 && strings.Index(got.String(), "\n  ! ") > strings.Index(got.String(), "\nsteps") {
				t.Errorf("%d warnings, said %d times, want each once before the steps:\n%s", len(p.Warnings), n, got.String())
			}
			var codes []string
			for _, w := range p.Warnings {
				codes = append(codes, w.Code)
			}
			if end := "\nwarnings above: " + strings.Join(codes, ", ") + "\n"; len(codes) > 0 && !strings.HasSuffix(got.String(), end) {
				t.Errorf("preview does not end with %q:\n%s", end, got.String())
			}
			golden := base + ".preview.txt"
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (-update creates it)", err)
			}
			if !bytes.Equal(want, got.Bytes()) {
				t.Fatalf("preview differs from %s:\n%s", golden, lineDiff(string(want), got.String()))
			}
		})
	}
}

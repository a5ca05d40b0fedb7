package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// A preview from a live set's snapshot (a CI job's) goes at the pace its pods show, as `kubectl ordinal
// preview` of the same set does: before, it took the model's defaults, so a CI gate and a live preview of one
// edit gave different durations. Pods not of the set teach nothing; the tick model keeps the harness's pace.
func TestPreviewFromASnapshotLearnsItsPodsPace(t *testing.T) {
	b, err := os.ReadFile(webSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	pods := s["pods"].([]any)
	if len(pods) == 0 {
		t.Fatal("the snapshot has no pods to learn from")
	}
	// Each of the set's pods Running 7s after its creation and Ready 11s after that.
	for _, p := range pods {
		meta := p.(map[string]any)["metadata"].(map[string]any)
		st := p.(map[string]any)["status"].(map[string]any)
		meta["creationTimestamp"] = "2026-11-22T10:00:00Z"
		st["startTime"] = "2026-11-22T10:00:07Z"
		for _, c := range st["conditions"].([]any) {
			if c := c.(map[string]any); c["type"] == "Ready" {
				c["lastTransitionTime"] = "2026-11-22T10:00:18Z"
			}
		}
	}
	// A pod of another app, quick to start: not the set's, so not its pace.
	other := map[string]any{"metadata": map[string]any{"name": "cache-0", "namespace": "default", "uid": "c0", "resourceVersion": "9",
		"creationTimestamp": "2026-11-22T10:00:00Z", "labels": map[string]any{"app": "cache"}},
		"spec":   map[string]any{"containers": []any{map[string]any{"name": "c", "image": "c"}}},
		"status": map[string]any{"phase": "Running", "startTime": "2026-11-22T10:00:01Z", "conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-22T10:00:02Z"}}}}
	s["pods"] = append(pods, other)
	slow, _ := json.Marshal(s)
	snap := writeTemp(t, "slow.snapshot.json", slow)
	edit := "../../examples/ci/web-new-image.yaml"

	code, out, errs := run(t, "", "preview", "-f", edit, "--from", snap)
	want := "pace: a pod Running 7s after it is created, Ready 11s after that"
	if code != ExitOK || !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf("(learned from %d of the set's pods", len(pods))) {
		t.Errorf("exit %d; want %q, learned from the set's %d pods:\n%s%s", code, want, len(pods), out, errs)
	}
	code, out, errs = run(t, "", "preview", "-f", edit, "--from", snap, "--model", "tick")
	if code != ExitOK || strings.Contains(out, "learned") {
		t.Errorf("--model tick: exit %d; the harness's pace is not learned:\n%s%s", code, out, errs)
	}
}

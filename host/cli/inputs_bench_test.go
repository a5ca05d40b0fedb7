package cli

import (
	"encoding/json"
	"os"
	"testing"
)

// Recognising a 5000-pod snapshot is one validating pass over its top level, no decoding; reading it for
// unknown fields decodes one pod of each shape (fieldcheck.Shapes) and scans the rest: both run before
// every reconcile -f and preview --from.
func BenchmarkRecogniseSnapshot(b *testing.B) {
	raw, _ := os.ReadFile("../../examples/ci/web.snapshot.json")
	var s map[string]any
	json.Unmarshal(raw, &s)
	pods := s["pods"].([]any)
	for len(pods) < 5000 {
		pods = append(pods, pods[len(pods)%5])
	}
	s["pods"] = pods
	big, _ := json.Marshal(s)
	b.SetBytes(int64(len(big)))
	b.ReportAllocs()
	for b.Loop() {
		in := recognise(big, 256<<20)
		if _, err := snapshotInput(in, "x", setChoice{}, fieldValidation{}); err != nil || in.kind != inputSnapshot {
			b.Fatal(err)
		}
	}
}

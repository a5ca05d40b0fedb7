package replay

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// Every duration of the JSON outputs has its seconds beside its text ("duration": "1m35s",
// "durationSeconds": 95), so a program compares numbers and parses no "50m": a timeline's steps and outcome,
// a preview's steps, outcome, estimate and what-if outcomes. A preview cut short by its budget has them all.
func TestJSONDurationsHaveSeconds(t *testing.T) {
	base, set := neverReadyWorld(t, 20, "podManagementPolicy: OrderedReady", "", "")
	opts := testOptions()
	opts.Budget = Budget{Syncs: 30}
	p := previewOf(t, base, set, opts, newImage)
	if p.Estimate == nil || p.NeverReady == nil || p.NeverReady.Undo == nil {
		t.Fatalf("want a preview with an estimate and a what-if with its undo: %+v", p)
	}
	var pj, tj bytes.Buffer
	if err := p.WriteJSON(&pj); err != nil {
		t.Fatal(err)
	}
	if err := p.Timeline.WriteJSON(&tj); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, doc := range [][]byte{pj.Bytes(), tj.Bytes()} {
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		checkSeconds(t, "$", v, seen)
	}
	for _, key := range []string{"offset", "duration", "remainingDuration"} {
		if seen[key] == 0 {
			t.Errorf("no %q with its seconds in the outputs (seen %v)", key, seen)
		}
	}
}

// checkSeconds walks v: each duration key (offset, duration, remainingDuration) holding text has
// <key>Seconds beside it, the same duration as a number.
func checkSeconds(t *testing.T, path string, v any, seen map[string]int) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, el := range x {
			checkSeconds(t, path+"."+k, el, seen)
			text, ok := el.(string)
			if !ok || (k != "offset" && k != "duration" && k != "remainingDuration") {
				continue
			}
			d, err := time.ParseDuration(text)
			if err != nil {
				t.Errorf("%s.%s = %q: not a duration", path, k, text)
				continue
			}
			secs, ok := x[k+"Seconds"].(float64)
			if !ok || secs != d.Seconds() {
				t.Errorf("%s.%s = %q: %sSeconds is %v, want %v", path, k, text, k, x[k+"Seconds"], d.Seconds())
				continue
			}
			seen[k]++
		}
	case []any:
		for _, el := range x {
			checkSeconds(t, path+"[]", el, seen)
		}
	}
}

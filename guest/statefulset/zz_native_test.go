package statefulset

import (
	"encoding/json"
	"testing"
)

func BenchmarkZZSettledDelta(b *testing.B) {
	var whole map[string]any
	json.Unmarshal(genSnapshotSettled(1000), &whole)
	set := whole["statefulSet"].(map[string]any)
	spec := set["spec"].(map[string]any)
	c := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["image"] = "nginx:1.25"
	in, _ := json.Marshal(whole)
	pod := whole["pods"].([]any)[500].(map[string]any)
	pod["metadata"].(map[string]any)["resourceVersion"] = "999999"
	delta := map[string]any{}
	for k, v := range whole {
		delta[k] = v
	}
	delta["pods"], delta["revisions"], delta["claims"] = []any{pod}, []any{}, []any{}
	delta["delta"] = map[string]any{"removed": map[string]any{}, "counts": map[string]any{"pods": 1000, "revisions": len(whole["revisions"].([]any)), "claims": 1000}}
	byDelta, _ := json.Marshal(delta)
	var cache ObjectCache
	out := ReconcileCached(&cache, in)
	b.Logf("first: %.300s", out)
	out = ReconcileCached(&cache, byDelta)
	b.Logf("delta: %.300s", out)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ReconcileCached(&cache, byDelta)
	}
}

package firewall_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// BenchmarkCheck is the firewall's cost per sync for a set of n pods (decoding the snapshot's metadata
// and checking a plan of one delete per pod plus a status update).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{100, 1000} {
		var snap abi.Snapshot
		if err := json.Unmarshal([]byte(testSnapshot), &snap); err != nil {
			b.Fatal(err)
		}
		plan := &abi.Plan{}
		podJSON := snap.Pods[0]
		snap.Pods = nil
		for i := 0; i < n; i++ {
			var p map[string]any
			_ = json.Unmarshal(podJSON, &p)
			md := p["metadata"].(map[string]any)
			md["name"], md["uid"] = fmt.Sprintf("web-%d", i), fmt.Sprintf("uid-%d", i)
			p["spec"] = map[string]any{"containers": []any{map[string]any{"name": "c", "image": "registry.k8s.io/pause:3.10", "env": []any{map[string]any{"name": "A", "value": "some value of a typical size"}}}}}
			raw, _ := json.Marshal(p)
			snap.Pods = append(snap.Pods, raw)
			plan.Actions = append(plan.Actions, act(abi.VerbDelete, "Pod", "prod", fmt.Sprintf("web-%d", i), ""))
		}
		plan.Actions = append(plan.Actions, status())
		raw, _ := json.Marshal(&snap)
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for i := 0; i < b.N; i++ {
				s, err := firewall.ScopeFromSnapshot(raw)
				if err != nil {
					b.Fatal(err)
				}
				if err := firewall.Check(s, plan); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

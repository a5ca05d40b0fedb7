package replay

import (
	"reflect"
	"testing"

	"github.com/ordinal-dev/ordinal/host/firewall"
)

// The firewall's scope the replay builds from its world is the one decoding the snapshot bytes gives.
func TestScopeFromWorldEqualsScopeFromSnapshot(t *testing.T) {
	for _, f := range []string{
		"../../internal/conformance/cases/large/parallel-10-vct2-delete-delete-to-4.snapshot.json",
		"../../examples/web-fresh.snapshot.json",
	} {
		e := initialWorld(t, snapshotScenario(t, f))
		got, err := e.scope()
		if err != nil {
			t.Fatal(err)
		}
		want, err := firewall.ScopeFromSnapshot(e.snapshot())
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Pods)+len(got.Claims)+len(got.Revisions) == 0 && f != "../../examples/web-fresh.snapshot.json" {
			t.Fatalf("%s: empty scope", f)
		}
		// the pods' objects as each scope gives them, then the rest of the records
		for _, pods := range []map[string]*firewall.Object{got.Pods, want.Pods} {
			for name, o := range pods {
				c := *o
				if c.PodOf != nil {
					p, err := c.PodOf()
					if err != nil {
						t.Fatal(err)
					}
					c.Pod = p
				}
				c.PodOf = nil
				pods[name] = &c
			}
		}
		for name, pair := range map[string][2]any{
			"set":       {[]any{got.APIVersion, got.Kind, got.Namespace, got.Name, got.UID, got.Deleting, got.Start, got.Replicas, got.ClaimTemplates}, []any{want.APIVersion, want.Kind, want.Namespace, want.Name, want.UID, want.Deleting, want.Start, want.Replicas, want.ClaimTemplates}},
			"pods":      {got.Pods, want.Pods},
			"revisions": {got.Revisions, want.Revisions},
			"claims":    {got.Claims, want.Claims},
		} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				t.Errorf("%s: %s differ:\n world    %+v\n snapshot %+v", f, name, pair[0], pair[1])
			}
		}
	}
}

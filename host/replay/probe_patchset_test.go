package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Probe (branch probe-deadline): the replay's patchSet on malformed or hostile JSON patches (the
// firewall normally stops them first; this is the writer on its own): no panic, and a failing patch
// writes nothing.
func TestProbePatchSetMalformed(t *testing.T) {
	newAPI := func(t *testing.T) (*world.APIServer, *worldWriter) {
		api := world.NewAPIServer("ns", world.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)))
		set := Obj{"metadata": Obj{"name": "web", "namespace": "ns"}, "spec": Obj{
			"replicas": jsonobj.Num(1), "serviceName": "web", "selector": Obj{"matchLabels": Obj{"app": "web"}},
			"template": Obj{"metadata": Obj{"labels": Obj{"app": "web"}}, "spec": Obj{"containers": []any{Obj{"name": "c", "image": "i"}}}}}}
		if err := api.Create(world.KindSet, set); err != nil {
			t.Fatal(err)
		}
		return api, &worldWriter{api: api, set: api.StatefulSet()}
	}
	for _, p := range []string{
		``,
		`null`,
		`{}`,
		`[`,
		`[{"op":"test","path":"/metadata/generation","value":1},{"op":"replace","path":"/spec/template","value":{"metadata":{"labels":{"app":"other"}},"spec":{"containers":[{"name":"c","image":"j"}]}}}]`,
		`[{"op":"test","path":"/metadata/generation","value":9},{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"x"}]`,
		`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"x"},{"op":"test","path":"/metadata/generation","value":9}]`,
		`[{"op":"replace","path":"","value":[]}]`,
		`[{"op":"replace","path":"","value":null}]`,
		`[{"op":"replace","path":"","value":"str"}]`,
		`[{"op":"remove","path":"/metadata"}]`,
		`[{"op":"remove","path":"/spec"}]`,
		`[{"op":"replace","path":"/metadata/name","value":"db"}]`,
		`[{"op":"replace","path":"/metadata/uid","value":"x"}]`,
		`[{"op":"replace","path":"/metadata/generation","value":"x"}]`,
		`[{"op":"replace","path":"/status/replicas","value":99}]`,
		`[{"op":"copy","from":"/spec","path":"/spec/template/spec/x"}]`,
		`[{"op":"move","from":"/spec","path":"/spec/x"}]`,
		`[{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"d","image":"e"}}]`,
		`[{"op":"replace","path":"/spec/replicas","value":-1}]`,
		`[{"op":"replace","path":"/spec/template","value":{}}]`,
		`[{"op":"test","path":"/metadata/generation"}]`,
		`[{"op":"replace","path":"/metadata/resourceVersion","value":"1"}]`,
		`[{"op":"replace","path":"/metadata/deletionTimestamp","value":"2025-01-01T00:00:00Z"}]`,
		`[{"op":"replace","path":"/spec/selector/matchLabels/app","value":"zzz"}]`,
	} {
		t.Run(fmt.Sprintf("%.60s", p), func(t *testing.T) {
			api, w := newAPI(t)
			before := string(mustJSON(api.StatefulSet()))
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("PANIC: %v", r)
					}
				}()
				_, err = w.Write(context.Background(), &abi.Action{Verb: abi.VerbPatch, Kind: world.KindSet, Namespace: "ns", Name: "web",
					PatchType: "application/json-patch+json", Patch: json.RawMessage(p)}, "")
			}()
			after := string(mustJSON(api.StatefulSet()))
			t.Logf("err=%v changed=%v", err, before != after)
			if err != nil && before != after {
				t.Errorf("a failed patch changed the set:\n%s\n%s", before, after)
			}
			if err == nil && before != after {
				t.Logf("after: %s", after)
			}
		})
	}
}

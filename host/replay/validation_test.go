package replay

import (
	"errors"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The in-memory API server refuses a StatefulSet update kube-apiserver refuses, with its message (these
// are kube-apiserver v1.37.2's answers; e2e/validation_test.go checks the preview against the live one),
// and accepts what it accepts, a negative revisionHistoryLimit included.
func TestUpdateValidationIsTheAPIServers(t *testing.T) {
	base := `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"replicas":2,"serviceName":"web",
	 "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}},
	 "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}}`
	for _, c := range []struct {
		name string
		edit func(Obj)
		want string // "" = accepted
	}{
		{"serviceName", func(o Obj) { jsonobj.Set(o, "spec.serviceName", "other") }, `StatefulSet.apps "web" is invalid: spec.serviceName: Invalid value: "other": field is immutable`},
		{"two causes", func(o Obj) {
			jsonobj.Set(o, "spec.serviceName", "other")
			jsonobj.Set(o, "spec.replicas", jsonobj.Num(-1))
		},
			`StatefulSet.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.serviceName: Invalid value: "other": field is immutable]`},
		{"claim template storage spelled otherwise", func(o Obj) {
			jsonobj.Set(jsonobj.GetArr(o, "spec.volumeClaimTemplates")[0].(Obj), "spec.resources.requests.storage", "1024Mi")
		}, ""},
		{"claim template emptied", func(o Obj) { jsonobj.Set(o, "spec.volumeClaimTemplates", []any{}) },
			`StatefulSet.apps "web" is invalid: spec.volumeClaimTemplates: Invalid value: []: field is immutable`},
		{"maxUnavailable abc", func(o Obj) { jsonobj.Set(o, "spec.updateStrategy.rollingUpdate.maxUnavailable", "abc") },
			`StatefulSet.apps "web" is invalid: [spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "abc": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%'), spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "abc": cannot be 0]`},
		{"OnDelete with rollingUpdate", func(o Obj) { jsonobj.Set(o, "spec.updateStrategy.type", "OnDelete") },
			`StatefulSet.apps "web" is invalid: spec.updateStrategy.rollingUpdate: Invalid value: {"Partition":0,"MaxUnavailable":1}: only allowed for updateStrategy 'RollingUpdate'`},
		{"revisionHistoryLimit negative", func(o Obj) { jsonobj.Set(o, "spec.revisionHistoryLimit", jsonobj.Num(-3)) }, ""},
		{"template", func(o Obj) { jsonobj.Set(o, "spec.template.metadata.annotations", Obj{"v": "2"}) }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := world.NewAPIServer("default", world.NewClock(time.Unix(0, 0)))
			o, _ := jsonobj.DecodeObj([]byte(base))
			if err := api.Create(world.KindSet, o); err != nil {
				t.Fatal(err)
			}
			edited := jsonobj.CloneObj(api.Get(world.KindSet, "web"))
			c.edit(edited)
			err := api.Update(world.KindSet, edited)
			var ae *APIError
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (!errors.As(err, &ae) || ae.Reason != "Invalid" || ae.Message != c.want):
				t.Fatalf("got  %v\nwant %s", err, c.want)
			}
		})
	}
}

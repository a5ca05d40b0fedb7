package world

import (
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The in-memory API server's create stores what the real kube-apiserver v1.37.2 stored for every manifest
// of host/kube's corpus (its answers to server-side dry-run creates, made by `make apiserver-defaults`),
// less what its admission plugins add: host/kube's defaulting and validation (held to the same answers by
// its TestDefaultingMatchesRealAPIServer) and what a create adds to them, a pod's status and QoS class.
func TestCreateMatchesRealAPIServer(t *testing.T) {
	for _, fx := range kubetest.Fixtures(t, "../../kube/testdata/apiserver-defaults") {
		t.Run(fx.Name, func(t *testing.T) {
			in, want := fx.Input, fx.Answer
			// Through the in-memory API server's create, as replays and previews make objects.
			api := NewAPIServer(jsonobj.GetStr(in, "metadata.namespace"), NewClock(time.Unix(0, 0)))
			if err := api.Create(fx.Kind, jsonobj.CloneObj(in)); err != nil {
				t.Fatalf("in-memory API server refused what kube-apiserver accepted: %v", err)
			}
			got := api.Get(fx.Kind, jsonobj.GetStr(in, "metadata.name"))
			// Type meta is a property of the wire (informers drop it); the rest is server bookkeeping.
			for _, o := range []Obj{got, want} {
				delete(o, "apiVersion")
				delete(o, "kind")
				for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation"} {
					delete(jsonobj.GetObj(o, "metadata"), k)
				}
			}
			kubetest.WithoutAdmission(fx.Kind, in, want)
			if d := jsoncmp.Diff(kubetest.JSON(t, want), kubetest.JSON(t, got)); d != "" {
				t.Errorf("the stored object differs from kube-apiserver's answer (want = API server, got = host):\n%s", d)
			}
		})
	}
}

package kube

import (
	"testing"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The host's defaulting gives what the real kube-apiserver v1.37.2 stored for every manifest of the corpus
// in testdata/apiserver-defaults (its answers to server-side dry-run creates, made by `make
// apiserver-defaults`), less what its admission plugins add (kubetest.WithoutAdmission). Validation accepts
// every manifest kube-apiserver accepted. (host/replay's TestCreateMatchesRealAPIServer compares its
// in-memory API server's creates with the same answers, the status a create sets included.)

const fixturesDir = "testdata/apiserver-defaults"

func TestDefaultingMatchesRealAPIServer(t *testing.T) {
	for _, fx := range kubetest.Fixtures(t, fixturesDir) {
		t.Run(fx.Name, func(t *testing.T) {
			got, want := jsonobj.CloneObj(fx.Input), fx.Answer
			ns := jsonobj.GetStr(got, "metadata.namespace")
			var err error
			switch fx.Kind {
			case "StatefulSet":
				DefaultStatefulSet(got)
				err = ValidateStatefulSet(got, Gates{})
			case "Pod":
				err = ValidateObjectMeta("Pod", got)
				DefaultPod(got, ns)
				// A create's status is not defaulting: PrepareForCreate resets it (phase Pending, the QoS class).
				delete(got, "status")
				delete(want, "status")
			case "PersistentVolumeClaim":
				err = ValidateObjectMeta("PersistentVolumeClaim", got)
				DefaultClaim(got, ns)
			default:
				t.Fatalf("kind %q", fx.Kind)
			}
			if err != nil {
				t.Fatalf("refused what kube-apiserver accepted: %v", err)
			}
			// Type meta is a property of the wire (informers drop it); the rest is server bookkeeping.
			for _, o := range []jsonobj.Obj{got, want} {
				delete(o, "apiVersion")
				delete(o, "kind")
				for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation"} {
					delete(jsonobj.GetObj(o, "metadata"), k)
				}
			}
			kubetest.WithoutAdmission(fx.Kind, fx.Input, want)
			if d := jsoncmp.Diff(kubetest.JSON(t, want), kubetest.JSON(t, got)); d != "" {
				t.Errorf("defaulting differs from kube-apiserver's answer (want = API server, got = host):\n%s", d)
			}
		})
	}
}

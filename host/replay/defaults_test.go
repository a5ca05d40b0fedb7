package replay

import (
	"testing"

	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// A defaulted object is a fixed point, as API-server defaulting is: defaulting what kube-apiserver
// stored changes nothing, for every answer of the corpus.
func TestDefaultingIsIdempotent(t *testing.T) {
	for _, fx := range apiServerFixtures(t) {
		o := fx.Answer
		before := mustJSON(o)
		switch fx.Kind {
		case kindSet:
			defaultStatefulSet(o)
		case kindPod:
			defaultPod(o, jsonobj.GetStr(o, "metadata.namespace"))
		case kindClaim:
			defaultClaim(o, jsonobj.GetStr(o, "metadata.namespace"))
		}
		if d := jsoncmp.Diff(before, mustJSON(o)); d != "" {
			t.Errorf("%s: %s", fx.Name, d)
		}
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]string{
		"nginx": "Always", "nginx:latest": "Always", "nginx:1.2": "IfNotPresent",
		"example.com:5000/x": "Always", "example.com:5000/x:v1": "IfNotPresent", "x@sha256:ab": "IfNotPresent",
	} {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("%s: %s, want %s", image, got, want)
		}
	}
}

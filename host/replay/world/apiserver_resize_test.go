package world

import (
	"errors"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// A resize that would change the pod's QoS class is refused as kube-apiserver refuses it (Invalid, its
// message), and the pod is left as it was; a resize within the class goes through. Before, the in-memory API
// server took any resize a supplied module sent, so a replay showed a rollout the cluster refuses.
func TestResizeThatChangesTheQoSClassIsInvalid(t *testing.T) {
	pod := func(req, lim string) Obj {
		o, err := jsonobj.DecodeObj([]byte(`{"metadata":{"name":"web-0"},"spec":{"containers":[{"name":"app","image":"a:1","resources":{` +
			`"requests":{"cpu":"` + req + `","memory":"1Gi"},"limits":{"cpu":"` + lim + `","memory":"1Gi"}}}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	api := NewAPIServer("default", NewClock(time.Unix(0, 0)))
	if err := api.Create(KindPod, pod("1", "1")); err != nil {
		t.Fatal(err)
	}
	if got := jsonobj.GetStr(api.Get(KindPod, "web-0"), "status.qosClass"); got != "Guaranteed" {
		t.Fatalf("created with QoS class %q", got)
	}
	rv := jsonobj.GetStr(api.Get(KindPod, "web-0"), "metadata.resourceVersion")
	err := api.Resize(pod("500m", "1"))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Reason != "Invalid" ||
		ae.Message != `Pod "web-0" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing` {
		t.Fatalf("resize to Burstable: %v", err)
	}
	if p := api.Get(KindPod, "web-0"); jsonobj.GetStr(p, "metadata.resourceVersion") != rv || jsonobj.GetStr(jsonobj.GetArr(p, "spec.containers")[0], "resources.requests.cpu") != "1" {
		t.Errorf("the refused resize changed the pod: %v", p)
	}
	if err := api.Resize(pod("2", "2")); err != nil {
		t.Errorf("resize within Guaranteed: %v", err)
	}
}

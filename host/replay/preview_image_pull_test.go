package replay

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A preview of the edit that fixes a broken release (an image that cannot be pulled) of an OrderedReady set
// said "outcome: complete after 0s": its model started the live broken pod, which came up Ready, so the
// controller replaced it at once; on the cluster that pod stays in ImagePullBackOff and the controller waits
// on it for good (the preview's own OrderedReadyBlocked warning said so). A pod whose image pull failed now
// stays Pending in the model, and the outcome says the rollout does not finish.
func TestPreviewKeepsAPodThatCannotPullItsImagePending(t *testing.T) {
	sc, err := LoadScenario(filepath.Join("..", "..", "testdata", "scenarios", "forced-rollback-trap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc.Events = sc.Events[:1] // the broken release: web-2 at revision B
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var snap map[string]any
	if err := json.Unmarshal(tl.Final, &snap); err != nil {
		t.Fatal(err)
	}
	for _, v := range snap["pods"].([]any) {
		pod := v.(map[string]any)
		md := pod["metadata"].(map[string]any)
		if md["name"] != "web-2" {
			continue
		}
		delete(md, "annotations") // the scenario's never-ready marker: a live pod has none, its image fails
		pod["status"] = map[string]any{"phase": "Pending", "containerStatuses": []any{map[string]any{"name": "nginx", "ready": false,
			"image": "registry.k8s.io/nginx-slim:0.28", "state": map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff"}}}}}
	}
	for _, c := range []struct {
		reason string
		want   string
	}{
		{"ImagePullBackOff", "stuck"},
		{"ContainerCreating", "complete"}, // a pod on its way up still comes up
	} {
		web2 := snap["pods"].([]any)[2].(map[string]any)
		web2["status"].(map[string]any)["containerStatuses"].([]any)[0].(map[string]any)["state"] = map[string]any{"waiting": map[string]any{"reason": c.reason}}
		b, _ := json.Marshal(snap)
		world, err := ScenarioFromSnapshot(b)
		if err != nil {
			t.Fatal(err)
		}
		world.Kubelet = sc.Kubelet
		set := snap["statefulSet"].(map[string]any)
		fixed := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "web", "namespace": "default"}, "spec": set["spec"]}
		b, _ = json.Marshal(fixed)
		edit := strings.Replace(string(b), `"oracle.test/never-ready":"true"`, `"fixed":"true"`, 1)
		edit = strings.Replace(edit, "nginx-slim:0.28", "nginx-slim:0.29", 1)
		p, err := PreviewEdit(context.Background(), world, []byte(edit), testOptions())
		if err != nil {
			t.Fatal(err)
		}
		if p.Outcome.Result != c.want {
			t.Errorf("web-2 waiting %s: the fixing edit's preview ends %s (%s), want %s", c.reason, p.Outcome.Result, p.Outcome.Summary, c.want)
		}
	}
}

package rollout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

func extendedModule(t *testing.T) *wasm.Module {
	t.Helper()
	m, err := wasm.Load(context.Background(), embedded.ExtendedModule(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// midInPlaceUpdate is the world of a 3-pod OrderedReady set with InPlaceIfPossible on the extended module
// just after the controller updated web-2 in place to a new image, before the kubelet restarted it: the
// replay stopped there (its time limit), and web-2's container status reports the old image, as a kubelet's
// does until the restart (the replay's kubelet writes none).
func midInPlaceUpdate(t *testing.T, m *wasm.Module) []byte {
	t.Helper()
	return midInPlaceUpdateReporting(t, m, "registry.k8s.io/nginx-slim:0.27")
}

// midInPlaceUpdateReporting is midInPlaceUpdate with web-2's container status naming image.
func midInPlaceUpdateReporting(t *testing.T, m *wasm.Module, image string) []byte {
	t.Helper()
	final := inPlaceReplay(t, m, "InPlaceIfPossible", "21s", `{"spec.template.spec.containers[0].image": "registry.k8s.io/nginx-slim:0.28"}`)
	var s map[string]any
	if err := json.Unmarshal(final, &s); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range s["pods"].([]any) {
		pod := p.(map[string]any)
		md := pod["metadata"].(map[string]any)
		if md["name"] != "web-2" {
			continue
		}
		found = md["annotations"].(map[string]any)[abi.AnnotationInPlaceUpdate] == md["labels"].(map[string]any)["controller-revision-hash"]
		pod["status"].(map[string]any)["containerStatuses"] = []any{map[string]any{"name": "nginx", "image": image,
			"ready": true, "restartCount": 0, "state": map[string]any{"running": map[string]any{"startedAt": "2026-01-01T00:00:00Z"}}}}
	}
	if !found {
		t.Fatalf("the replay did not stop with web-2 updated in place:\n%s", final)
	}
	b, _ := json.Marshal(s)
	return b
}

// inPlaceReplay replays a 3-pod OrderedReady set on the extended module with pod-update-policy policy, edited
// at 20s by set (a scenario's set: event), for limit; it gives the world as the replay ends.
func inPlaceReplay(t *testing.T, m *wasm.Module, policy, limit, set string) []byte {
	t.Helper()
	sc, err := replay.ParseScenario([]byte(`name: in-place
limits: {duration: ` + limit + `}
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: web
      namespace: default
      annotations: {ordinal.dev/module: extended, ordinal.dev/pod-update-policy: ` + policy + `}
    spec:
      replicas: 3
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: nginx, image: "registry.k8s.io/nginx-slim:0.27"}]}
events:
  - at: 20s
    set: ` + set + `
`))
	if err != nil {
		t.Fatal(err)
	}
	named := func(context.Context, string) (plan.Reconciler, error) { return m, nil }
	tl, err := replay.Run(context.Background(), sc, replay.Options{Module: module, NamedModule: named})
	if err != nil {
		t.Fatal(err)
	}
	return tl.Final
}

// statusWith is `kubectl ordinal status` on a snapshot: the module's plan, the status read as a module with
// extension in-place-update (or without) reads pods.
func statusWith(t *testing.T, m *wasm.Module, snapshot []byte, inPlace bool) *rollout.Status {
	t.Helper()
	raw, err := m.Reconcile(context.Background(), snapshot)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	st, err := rollout.OfWith(snapshot, p, rollout.Reading{InPlace: inPlace})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// `kubectl ordinal status` of a set mid in-place update: the pod the controller updated in place, whose
// container status still reports the old image, is shown as the module reads it (Running, not Ready, however
// its Ready condition reads), with what it waits for; the reason the rollout waits names it; -o json has it
// typed. Read as upstream reads pods (a module without the extension), it is Ready.
func TestStatusShowsAPodMidInPlaceUpdate(t *testing.T) {
	m := extendedModule(t)
	snap := midInPlaceUpdate(t, m)
	st := statusWith(t, m, snap, true)
	var web2 rollout.Pod
	for _, p := range st.Pods {
		if p.Name == "web-2" {
			web2 = p
		}
	}
	want := rollout.InPlaceUpdate{Waiting: "image", Container: "nginx", Has: "registry.k8s.io/nginx-slim:0.27", Want: "registry.k8s.io/nginx-slim:0.28"}
	if web2.State != "Running" || web2.InPlace == nil || *web2.InPlace != want {
		t.Fatalf("web-2: %+v (in place %+v), want Running, %+v", web2, web2.InPlace, want)
	}
	reasons := strings.Join(st.Reasons, "; ")
	if st.State != rollout.StateWaiting || !strings.Contains(reasons, "OrderedReady: waiting for web-2 (B, Running, updating in place (container nginx: image registry.k8s.io/nginx-slim:0.27 → registry.k8s.io/nginx-slim:0.28)) to be Running and Ready") {
		t.Errorf("state %s: %s", st.State, reasons)
	}
	var b bytes.Buffer
	if err := st.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flat(b.String()), "web-2 B Running, updating in place (container nginx: image registry.k8s.io/nginx-slim:0.27 → registry.k8s.io/nginx-slim:0.28)") {
		t.Errorf("text:\n%s", b.String())
	}
	t.Logf("kubectl ordinal status, mid-update:\n%s", b.String())
	var js bytes.Buffer
	if err := json.NewEncoder(&js).Encode(st); err != nil || !strings.Contains(js.String(), `"inPlace":{"waiting":"image","container":"nginx","has":"registry.k8s.io/nginx-slim:0.27","want":"registry.k8s.io/nginx-slim:0.28"}`) {
		t.Errorf("JSON (%v): %s", err, js.String())
	}
	if up := statusWith(t, m, snap, false); up.Pods[2].State != "Ready" || up.Pods[2].InPlace != nil {
		t.Errorf("read as upstream reads pods, web-2 is %+v, want Ready", up.Pods[2])
	}
}

// A pod whose status names its image by a tag of the spec's repository that no revision has (nginx-slim:latest
// for nginx-slim:0.28: containerd reports an image's first tag) waits, as the module reads it (the pod's
// status cannot tell it from a container not restarted yet), and status says so, and how to get out: the
// line said only "image nginx-slim:latest → nginx-slim:0.28", which read as a kubelet that never restarts.
func TestStatusSaysAnImageReportedByAnotherTagWaits(t *testing.T) {
	m := extendedModule(t)
	st := statusWith(t, m, midInPlaceUpdateReporting(t, m, "registry.k8s.io/nginx-slim:latest"), true)
	web2 := st.Pods[2]
	want := rollout.InPlaceUpdate{Waiting: "image", Container: "nginx", Has: "registry.k8s.io/nginx-slim:latest", Want: "registry.k8s.io/nginx-slim:0.28", OtherTag: true}
	if web2.Name != "web-2" || web2.State != "Running" || web2.InPlace == nil || *web2.InPlace != want {
		t.Fatalf("web-2: %+v (in place %+v), want Running, %+v", web2, web2.InPlace, want)
	}
	var b bytes.Buffer
	if err := st.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flat(b.String()), "image registry.k8s.io/nginx-slim:latest → registry.k8s.io/nginx-slim:0.28; registry.k8s.io/nginx-slim:latest is no revision's image: "+
		"the runtime may name registry.k8s.io/nginx-slim:0.28 by another of its tags, which the pod's status cannot tell from a container not restarted yet, "+
		"so it waits until you pin the image by digest or delete the pod)") {
		t.Errorf("text:\n%s", b.String())
	}
	// the old revision's own tag is the ordinary wait: no such words
	if st := statusWith(t, m, midInPlaceUpdate(t, m), true); st.Pods[2].InPlace == nil || st.Pods[2].InPlace.OtherTag {
		t.Errorf("web-2 reporting the old revision's image: %+v", st.Pods[2].InPlace)
	}
}

// A 1000-pod set mid in-place update (Parallel, maxUnavailable 100) prints a screen: the pods updated in place
// waiting for the same restart share a line.
func TestStatusFoldsPodsMidInPlaceUpdate(t *testing.T) {
	st := &rollout.Status{Namespace: "ns", Name: "web", State: rollout.StateWaiting}
	for i := 0; i < 1000; i++ {
		p := rollout.Pod{Name: fmt.Sprintf("web-%d", i), Ordinal: i, Revision: "1", State: "Ready"}
		if i >= 900 {
			p.Revision, p.State = "2", "Running"
			p.InPlace = &rollout.InPlaceUpdate{Waiting: "image", Container: "app", Has: "a:1", Want: "a:2"}
		}
		st.Pods = append(st.Pods, p)
	}
	var b bytes.Buffer
	if err := st.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flat(b.String()), "web-900..web-999 2 Running, updating in place (container app: image a:1 → a:2)") {
		t.Errorf("text:\n%s", b.String())
	}
	if n := strings.Count(b.String(), "\n"); n > 20 {
		t.Errorf("%d lines for 1000 pods", n)
	}
}

// The host's reading of a pod updated in place is the module's: on each fixture, web-2 of the mid-update world
// changed, `kubectl ordinal status` calls it Ready (Available) exactly when the extended module's status
// counts it ready (available). Both go through internal/inplaceready.Judge; this holds their readings of the
// pod (the guest's of its JSON, kube.InPlacePod's of client-go's types) to the same answers.
func TestHostAndModuleAgreeOnPodsUpdatedInPlace(t *testing.T) {
	m := extendedModule(t)
	base := midInPlaceUpdate(t, m)
	now := "2026-01-01T00:10:00Z"
	runningAs := func(name, image, started string) map[string]any {
		return map[string]any{"name": name, "image": image, "ready": true, "restartCount": 1,
			"state": map[string]any{"running": map[string]any{"startedAt": started}}}
	}
	running := func(image, started string) map[string]any { return runningAs("nginx", image, started) }
	for _, c := range []struct {
		name     string
		minReady int
		edit     func(pod map[string]any)
	}{
		{"old image", 0, func(map[string]any) {}},
		{"no status", 0, func(p map[string]any) { delete(status(p), "containerStatuses") }},
		{"restarted", 0, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("registry.k8s.io/nginx-slim:0.28", "2026-01-01T00:09:00Z")}
		}},
		{"restarted, spelled by the runtime", 0, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("docker.io/library/x:1", "2026-01-01T00:09:00Z")}
			spec(p)["containers"].([]any)[0].(map[string]any)["image"] = "x:1"
		}},
		{"resize pending", 0, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("registry.k8s.io/nginx-slim:0.28", "2026-01-01T00:09:00Z")}
			status(p)["conditions"] = append(status(p)["conditions"].([]any), map[string]any{"type": "PodResizePending", "status": "True"})
		}},
		{"resources not yet", 0, func(p map[string]any) {
			cs := running("registry.k8s.io/nginx-slim:0.28", "2026-01-01T00:09:00Z")
			cs["resources"] = map[string]any{"requests": map[string]any{"cpu": "100m"}}
			status(p)["containerStatuses"] = []any{cs}
			spec(p)["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"cpu": "0.2"}}
		}},
		{"resources done", 0, func(p map[string]any) {
			cs := running("registry.k8s.io/nginx-slim:0.28", "2026-01-01T00:09:00Z")
			cs["resources"] = map[string]any{"requests": map[string]any{"cpu": "200m", "memory": "1Gi"}}
			status(p)["containerStatuses"] = []any{cs}
			spec(p)["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"cpu": "0.2"}}
		}},
		{"sidecar not restarted", 0, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("registry.k8s.io/nginx-slim:0.28", "2026-01-01T00:09:00Z")}
			spec(p)["initContainers"] = []any{map[string]any{"name": "side", "image": "s:2", "restartPolicy": "Always"}}
			status(p)["initContainerStatuses"] = []any{runningAs("side", "s:1", "2026-01-01T00:00:00Z")}
		}},
		{"completed init container not waited for", 0, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("registry.k8s.io/nginx-slim:0.28", "2026-01-01T00:09:00Z")}
			spec(p)["initContainers"] = []any{map[string]any{"name": "init", "image": "i:2"}}
			status(p)["initContainerStatuses"] = []any{map[string]any{"name": "init", "image": "i:1", "state": map[string]any{"terminated": map[string]any{"exitCode": 0}}}}
		}},
		{"restarted, not Ready yet", 0, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("registry.k8s.io/nginx-slim:0.28", "2026-01-01T00:09:00Z")}
			for _, c := range status(p)["conditions"].([]any) {
				if c.(map[string]any)["type"] == "Ready" {
					c.(map[string]any)["status"] = "False"
				}
			}
		}},
		{"old container by its image's ID, status behind the pod's generation", 0, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("sha256:1111111111111111111111111111111111111111111111111111111111111111", "2026-01-01T00:00:00Z")}
			p["metadata"].(map[string]any)["generation"] = 2
			status(p)["observedGeneration"] = 1
		}},
		{"restarted, by its image's ID, status of the pod's generation", 0, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("sha256:2222222222222222222222222222222222222222222222222222222222222222", "2026-01-01T00:09:00Z")}
			p["metadata"].(map[string]any)["generation"] = 2
			status(p)["observedGeneration"] = 2
		}},
		{"pinned by digest, reported by a tag of the image", 0, func(p map[string]any) {
			digest := "sha256:" + strings.Repeat("d", 64)
			cs := running("docker.io/library/nginx:1.27", "2026-01-01T00:09:00Z")
			cs["imageID"] = "docker.io/library/nginx@" + digest
			status(p)["containerStatuses"] = []any{cs}
			spec(p)["containers"].([]any)[0].(map[string]any)["image"] = "nginx@" + digest
		}},
		{"record names another revision", 0, func(p map[string]any) {
			p["metadata"].(map[string]any)["annotations"].(map[string]any)[abi.AnnotationInPlaceUpdate] = "web-other"
		}},
		{"restarted within minReadySeconds", 120, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("registry.k8s.io/nginx-slim:0.28", "2026-01-01T00:09:00Z")}
		}},
		{"restarted past minReadySeconds", 30, func(p map[string]any) {
			status(p)["containerStatuses"] = []any{running("registry.k8s.io/nginx-slim:0.28", "2026-01-01T00:09:00Z")}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s map[string]any
			if err := json.Unmarshal(base, &s); err != nil {
				t.Fatal(err)
			}
			s["now"] = now
			set := s["statefulSet"].(map[string]any)
			set["spec"].(map[string]any)["minReadySeconds"] = c.minReady
			// a status the module must rewrite, so its plan says what it counts
			set["status"].(map[string]any)["readyReplicas"], set["status"].(map[string]any)["availableReplicas"] = 99, 99
			var pod map[string]any
			for _, p := range s["pods"].([]any) {
				if p.(map[string]any)["metadata"].(map[string]any)["name"] == "web-2" {
					pod = p.(map[string]any)
				}
				for _, cond := range status(p.(map[string]any))["conditions"].([]any) { // Ready long before now
					cond.(map[string]any)["lastTransitionTime"] = "2026-01-01T00:00:00Z"
				}
			}
			c.edit(pod)
			snap, _ := json.Marshal(s)

			// the module's reading: its status counts web-2 or not (web-0 and web-1 run their spec, Ready)
			raw, err := m.Reconcile(context.Background(), snap)
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Status struct{ ReadyReplicas, AvailableReplicas int } `json:"status"`
			}
			for _, a := range p.Actions {
				if a.Verb == abi.VerbUpdateStatus {
					_ = json.Unmarshal(a.Object, &out)
				}
			}
			moduleReady, moduleAvailable := out.Status.ReadyReplicas == 3, out.Status.AvailableReplicas == 3
			if out.Status.ReadyReplicas < 2 {
				t.Fatalf("the module's status %+v (plan %s)", out.Status, raw)
			}

			// the host's reading
			st, err := rollout.OfWith(snap, p, rollout.Reading{InPlace: true})
			if err != nil {
				t.Fatal(err)
			}
			state := st.Pods[2].State
			hostReady := state == "Ready" || state == "Available"
			hostAvailable := state == "Available" || c.minReady == 0 && state == "Ready"
			if hostReady != moduleReady || hostAvailable != moduleAvailable {
				t.Errorf("host: web-2 %s (in place %+v); module: ready %v, available %v", state, st.Pods[2].InPlace, moduleReady, moduleAvailable)
			}
			var typed corev1.Pod
			b, _ := json.Marshal(pod)
			if err := json.Unmarshal(b, &typed); err != nil {
				t.Fatal(err)
			}
			v, applies := kube.InPlace(&typed)
			t.Logf("module ready %v available %v; host %s; verdict %+v (applies %v)", moduleReady, moduleAvailable, state, v, applies)
		})
	}
}

// flat is text with its runs of spaces (a table's columns) made one.
func flat(text string) string { return strings.Join(strings.Fields(text), " ") }

func status(p map[string]any) map[string]any { return p["status"].(map[string]any) }

// `kubectl ordinal status` of a set InPlaceOnly holds (a change that also edits env) says why the rollout
// stands still and how to move it on, from the set's InPlaceUpdateBlocked condition, where it said only that
// the next sync deletes no pod.
func TestStatusSaysInPlaceOnlyHoldsTheRollout(t *testing.T) {
	m := extendedModule(t)
	final := inPlaceReplay(t, m, "InPlaceOnly", "40s",
		`{"spec.template.spec.containers[0].image": "registry.k8s.io/nginx-slim:0.28", "spec.template.spec.containers[0].env": [{name: MODE, value: fast}]}`)
	st := statusWith(t, m, final, true)
	reasons := strings.Join(st.Reasons, "; ")
	if st.State != rollout.StateWaiting ||
		!strings.Contains(reasons, `StatefulSet "web" holds Pod web-2 at revision`) ||
		!strings.Contains(reasons, "spec.containers[0].env changes") ||
		!strings.Contains(reasons, "is InPlaceOnly. To go on: change the template back") || strings.Contains(reasons, "deletes no pod") {
		t.Errorf("state %s: %s", st.State, reasons)
	}
}

// `kubectl ordinal status` of a set another controller runs (kube-controller-manager keeps its status) while it
// names ordinal.dev/ annotations: the first reason says that controller ignores them, and that the next sync
// shown is Ordinal's; -o json names the manager. The same set read with no other controller says nothing of it.
func TestStatusSaysAnotherControllerIgnoresTheAnnotations(t *testing.T) {
	m := extendedModule(t)
	snap := midInPlaceUpdate(t, m)
	raw, err := m.Reconcile(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	st, err := rollout.OfWith(snap, p, rollout.Reading{InPlace: true, OtherController: "kube-controller-manager"})
	if err != nil {
		t.Fatal(err)
	}
	// conditional (a set that settled under kube-controller-manager keeps it as its status writer after Ordinal's
	// controller takes it over), and the way to hand the set over
	if len(st.Reasons) < 2 || !strings.HasPrefix(st.Reasons[0], `"kube-controller-manager" last wrote this set's status, not Ordinal`) ||
		!strings.Contains(st.Reasons[0], "if it runs the set") || !strings.Contains(st.Reasons[0], "not what the next sync shown here does") ||
		!strings.Contains(st.Reasons[0], "kubectl ordinal migrate statefulset/web --to ordinal") {
		t.Errorf("reasons %q: want the other controller first, then why the rollout waits", st.Reasons)
	}
	js, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"otherController":"kube-controller-manager"`)) {
		t.Errorf("-o json does not name the other controller: %s", js)
	}
	if plain := statusWith(t, m, snap, true); plain.OtherController != "" || strings.Contains(strings.Join(plain.Reasons, " "), "last wrote this set's status") {
		t.Errorf("no other controller, yet: %q", plain.Reasons)
	}
}

package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/replay/world"
)

// previewCase previews testdata/replay/preview's <name>.edit.yaml on the world <name>.scenario.yaml settles in.
func previewCase(t *testing.T, name string) *Preview {
	t.Helper()
	return previewCaseWith(t, name, nil)
}

// previewCaseWith is previewCase with the preview's kubelet model kubelet instead of the scenario's (nil: the
// scenario's).
func previewCaseWith(t *testing.T, name string, kubelet *KubeletConfig) *Preview {
	t.Helper()
	c := settledPreviewCase(t, name)
	if kubelet != nil {
		c.kubelet = *kubelet
	}
	return c.preview(t, c.edit)
}

// settledPreview is a preview case's scenario replayed to its end: the world a preview starts from, with the
// scenario's kubelet model, and the case's edit (YAML).
type settledPreview struct {
	final   json.RawMessage
	kubelet KubeletConfig
	edit    []byte
}

// settledPreviewCase replays testdata/replay/preview's <name>.scenario.yaml and reads <name>.edit.yaml.
func settledPreviewCase(t *testing.T, name string) settledPreview {
	t.Helper()
	base := filepath.Join(previewDir, name)
	sc, err := LoadScenario(base + ".scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	edit, err := os.ReadFile(base + ".edit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return settledPreview{final: tl.Final, kubelet: sc.Kubelet, edit: edit}
}

// preview previews edit (YAML) on a world of its own, built from the settled end.
func (c settledPreview) preview(t *testing.T, edit []byte) *Preview {
	t.Helper()
	world, err := ScenarioFromSnapshot(c.final)
	if err != nil {
		t.Fatal(err)
	}
	world.Kubelet = c.kubelet
	js, err := yamlToJSON(edit)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PreviewEdit(context.Background(), world, js, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Extension in-place-update, previewed as typed data: each batch's pods with how each moves (in place, or
// recreated with the module's reason: its RecreatingPod event reports the delete, by index), the writes
// marked in place, and a pod InPlaceOnly holds as a warning of its own code. -o json carries all of it.
func TestPreviewInPlaceIsTyped(t *testing.T) {
	p := previewCase(t, "in-place-mixed")
	type u struct {
		pod, from string
		inPlace   bool
		why       bool
	}
	var got [][]u
	for _, b := range p.Updates {
		var bt []u
		for _, x := range b {
			bt = append(bt, u{x.Pod, x.From, x.InPlace, strings.Contains(x.Why, "Recreating Pod "+x.Pod+" ") && strings.Contains(x.Why, "spec.containers[0].env")})
		}
		got = append(got, bt)
	}
	want := [][]u{{{"web-4", "B", true, false}, {"web-3", "B", true, false}, {"web-2", "A", false, true}}, {{"web-1", "A", false, true}, {"web-0", "A", false, true}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("updates %+v, want %+v", got, want)
	}
	if in, re := p.UpdateCounts(); in != 2 || re != 3 {
		t.Errorf("counts %d in place, %d recreated; want 2 and 3", in, re)
	}
	if r := p.Recreations(); len(r) != 1 || r[0].From != "A" || strings.Join(r[0].Pods, " ") != "web-0 web-1 web-2" {
		t.Errorf("recreations %+v, want web-0..web-2 from A", r)
	}
	var marked []string
	for _, st := range p.Timeline.Steps {
		for _, a := range st.Actions {
			if a.InPlace {
				marked = append(marked, a.Verb+" "+a.Name)
			}
			if a.Why != "" && (a.Verb != "delete" || !strings.Contains(a.Why, a.Name)) {
				t.Errorf("%s %s %s: why %q", a.Verb, a.Kind, a.Name, a.Why)
			}
		}
	}
	if strings.Join(marked, ", ") != "update web-4, update web-3" {
		t.Errorf("writes marked in place: %v", marked)
	}
	var js bytes.Buffer
	if err := p.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Updates [][]PodUpdate `json:"updates"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || !reflect.DeepEqual(back.Updates, p.Updates) {
		t.Errorf("-o json updates %+v (%v), want %+v", back.Updates, err, p.Updates)
	}

	held := previewCase(t, "in-place-only")
	if len(held.Updates) != 0 {
		t.Errorf("InPlaceOnly: updates %+v, want none", held.Updates)
	}
	found := false
	for _, w := range held.Warnings {
		found = found || w.Code == WarnInPlaceBlocked && strings.Contains(w.Message, "holds Pod web-2") && strings.Contains(w.Message, "spec.containers[0].env")
	}
	if !found {
		t.Errorf("InPlaceOnly: warnings %+v, want %s naming web-2 and the field", held.Warnings, WarnInPlaceBlocked)
	}

	// a set without pod-update-policy: no updates, its deletions the batches as before
	plain := previewCase(t, "scale-down-delete")
	if plain.Updates != nil {
		t.Errorf("a set without pod-update-policy: updates %+v", plain.Updates)
	}
}

// A 1000-pod in-place rollout (Parallel, maxUnavailable 10%) and its recreation under a change a pod cannot
// take stay a screen: the batches' runs folded, the reason said once for the pods of a revision.
func TestPreviewInPlaceFoldsAThousandPods(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 1000-pod replay")
	}
	sc, err := ParseScenario([]byte(`name: thousand-in-place
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: web
      namespace: default
      annotations: {ordinal.dev/module: extended, ordinal.dev/pod-update-policy: InPlaceIfPossible}
    spec:
      replicas: 1000
      podManagementPolicy: Parallel
      serviceName: web
      selector: {matchLabels: {app: web}}
      updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: "10%"}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: nginx, image: "registry.k8s.io/nginx-slim:0.27"}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	world, err := ScenarioFromSnapshot(tl.Final)
	if err != nil {
		t.Fatal(err)
	}
	world.Kubelet = sc.Kubelet
	for _, c := range []struct {
		name, from, to string
		mentions       []string
	}{
		{"in place", `"image":"registry.k8s.io/nginx-slim:0.27"`, `"image":"registry.k8s.io/nginx-slim:0.28"`,
			[]string{"update Pod web-999 (revision B, in place);", "pods updated in place, in batches: [web-999..web-900] ->",
				"... 8 more, 100 ordinals lower each time ... -> [web-99..web-0]"}},
		{"recreated", `"image":"registry.k8s.io/nginx-slim:0.27"`, `"image":"registry.k8s.io/nginx-slim:0.28","env":[{"name":"MODE","value":"fast"}]`,
			[]string{"delete Pod web-999;", "pods recreated (not in place), in batches: [web-999..web-900] ->", "[web-99..web-0]",
				"recreated, not in place: web-0..web-999 (from A): Recreating Pod web-999 of StatefulSet web"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			edit := []byte(strings.Replace(string(sc.Manifests[0]), c.from, c.to, 1))
			if string(edit) == string(sc.Manifests[0]) {
				t.Fatalf("no %s in %s", c.from, sc.Manifests[0])
			}
			p, err := PreviewEdit(context.Background(), world, edit, testOptions())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := p.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			screen(t, "preview", text.String(), 40, c.mentions...)
			n := 0
			for _, b := range p.Updates {
				n += len(b)
			}
			if len(p.Updates) != 10 || n != 1000 {
				t.Errorf("the JSON keeps every batch and pod: %d batches, %d pods", len(p.Updates), n)
			}
		})
	}
}

// A write is marked in place by abi/inplace's judgement, not by its record alone: the controller's later
// repair of a pod it updated in place (its identity labels, here) keeps the revision and the record, and is
// no in-place update; nor does it make the pod a batch of a rollout.
func TestRepairOfAPodUpdatedInPlaceIsNotInPlace(t *testing.T) {
	base, err := os.ReadFile(filepath.Join(previewDir, "in-place.scenario.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseScenario(append(base, `events:
  - settled: true
    after: 10s
    set: {"spec.template.spec.containers[0].image": "registry.k8s.io/nginx-slim:0.28"}
  - settled: true
    after: 10s
    labelPod: {pod: web-2, labels: {statefulset.kubernetes.io/pod-name: null}}
`...))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var inPlace, repairs []string
	for _, st := range tl.Steps {
		for _, a := range st.Actions {
			if a.Kind != "Pod" || a.Verb != "update" {
				continue
			}
			if a.InPlace {
				inPlace = append(inPlace, a.Name)
			} else {
				repairs = append(repairs, a.Name+" ("+a.Detail+")")
			}
		}
	}
	if strings.Join(inPlace, " ") != "web-2 web-1 web-0" || strings.Join(repairs, " ") != "web-2 (revision B)" {
		t.Errorf("pod updates in place %v, others %v: want the rollout's three in place, the repair of web-2 not", inPlace, repairs)
	}
}

// An in-place update keeps a pod's containers down for the kubelet model's restart delay (the start delay
// unless given): a 3-pod OrderedReady in-place rollout takes three restart delays longer with a restart delay
// of 30 s than with none, and a per-pod rule's restart delay overrides the set's.
func TestInPlaceRestartsTakeTheRestartDelay(t *testing.T) {
	took := func(kc KubeletConfig) time.Duration {
		t.Helper()
		p := previewCaseWith(t, "in-place", &kc)
		if p.Outcome.Result != "complete" {
			t.Fatalf("outcome %+v", p.Outcome)
		}
		if in, re := p.UpdateCounts(); in != 3 || re != 0 {
			t.Fatalf("%d in place, %d recreated: want every pod in place", in, re)
		}
		return p.Outcome.Duration.D()
	}
	zero, thirty := Duration(0), Duration(30*time.Second)
	fast := took(KubeletConfig{StartDelay: &thirty, RestartDelay: &zero})
	slow := took(KubeletConfig{StartDelay: &thirty, RestartDelay: &thirty})
	if slow-fast != 3*30*time.Second {
		t.Errorf("restart delay 30 s took %s, 0 s took %s: want 90 s between them (three pods, one after another)", slow, fast)
	}
	ruled := took(KubeletConfig{StartDelay: &thirty, RestartDelay: &zero, Pods: []PodBehavior{{RestartDelay: &thirty}}})
	if ruled != slow {
		t.Errorf("a rule's restart delay of 30 s took %s, want %s as the set's", ruled, slow)
	}
	if def := took(KubeletConfig{StartDelay: &thirty}); def != slow {
		t.Errorf("no restart delay took %s, want the start delay's %s", def, slow)
	}
}

// Pods recreated from one revision for different reasons are not one group under the first pod's reason: each
// reason has its group, and pods whose events differ only in the pod they name share one.
func TestRecreationsGroupByReason(t *testing.T) {
	why := func(pod, field string) string {
		return "Recreating Pod " + pod + " of StatefulSet web to move it to revision web-c: " + field + " changes, which a pod cannot change in place"
	}
	p := &Preview{Updates: [][]PodUpdate{
		{{Pod: "web-4", From: "B", InPlace: true}, {Pod: "web-3", From: "A", Why: why("web-3", "spec.containers[0].env")}},
		{{Pod: "web-2", From: "A", Why: why("web-2", "spec.volumes")}, {Pod: "web-1", From: "A", Why: why("web-1", "spec.containers[0].env")}},
		{{Pod: "web-0", From: "B", Why: why("web-0", "spec.volumes")}},
	}}
	type group struct{ from, pods, why string }
	var got []group
	for _, r := range p.Recreations() {
		got = append(got, group{r.From, strings.Join(r.Pods, " "), r.Why})
	}
	want := []group{
		{"A", "web-1 web-3", why("web-3", "spec.containers[0].env")},
		{"A", "web-2", why("web-2", "spec.volumes")},
		{"B", "web-0", why("web-0", "spec.volumes")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recreations:\n%+v\nwant\n%+v", got, want)
	}
}

// A set with a native sidecar (an init container with restartPolicy Always) and an ordinary init container
// rolls out in place to the end: the replay's kubelet reports the init containers' statuses as a kubelet
// does (the sidecar running its spec, restarted with the pod's other containers; the init container
// completed with the image it ran), which the module reads for the sidecar. Without them every in-place
// rollout of such a set stopped after its first pod, "stuck", exit 6.
func TestInPlaceWithASidecarCompletes(t *testing.T) {
	sc, err := ParseScenario([]byte(`
name: in-place-sidecar
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: web
      namespace: default
      annotations: {ordinal.dev/module: extended, ordinal.dev/pod-update-policy: InPlaceIfPossible}
    spec:
      replicas: 3
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          initContainers:
            - {name: init, image: "busybox:1", command: ["true"]}
            - {name: proxy, image: "envoy:1", restartPolicy: Always}
          containers:
            - {name: app, image: "nginx:1"}
events:
  - settled: true
    set: {"spec.template.spec.containers[0].image": "nginx:2"}
  - settled: true
    set: {"spec.template.spec.initContainers[1].image": "envoy:2"}
`))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if tl.Outcome.Result != "complete" || !strings.Contains(tl.Outcome.Summary, "revision C") {
		t.Fatalf("outcome %+v, want the second in-place rollout complete at C", tl.Outcome)
	}
	inPlace := 0
	for _, st := range tl.Steps {
		for _, a := range st.Actions {
			if a.Kind == "Pod" && a.Verb == "delete" {
				t.Errorf("step %d deletes %s: want every pod updated in place", st.Index, a.Name)
			}
			if a.Kind == "Pod" && a.Verb == "update" && a.InPlace {
				inPlace++
			}
		}
	}
	if inPlace != 6 {
		t.Errorf("%d in-place updates, want 6 (3 pods, two rollouts)", inPlace)
	}
}

// A resize of a resource whose resizePolicy is RestartContainer restarts the container, as the kubelet does:
// the replay's kubelet restarted none, so a preview had the pods Ready throughout and the rollout as fast as a
// live resize. Under NotRequired (the default) no container restarts.
func TestInPlaceResizeRestartsUnderRestartContainer(t *testing.T) {
	restarts := func(policy string) (restarted, resized int) {
		t.Helper()
		sc, err := ParseScenario([]byte(`
name: resize-policy
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: web
      namespace: default
      annotations: {ordinal.dev/module: extended, ordinal.dev/pod-update-policy: InPlaceIfPossible}
    spec:
      replicas: 3
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
            - name: app
              image: "nginx:1"
              resizePolicy: [{resourceName: memory, restartPolicy: ` + policy + `}]
              resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 100m, memory: 64Mi}}
events:
  - settled: true
    set: {"spec.template.spec.containers[0].resources": {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 100m, memory: 128Mi}}}
`))
		if err != nil {
			t.Fatal(err)
		}
		tl, err := Run(context.Background(), sc, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		if tl.Outcome.Result != "complete" {
			t.Fatalf("%s: outcome %+v", policy, tl.Outcome)
		}
		for _, st := range tl.Steps {
			for _, w := range st.World {
				switch w.Reason {
				case world.ReasonRestarted:
					restarted++
				case world.ReasonResized:
					resized++
				}
			}
		}
		return restarted, resized
	}
	if r, z := restarts("RestartContainer"); r != 3 || z != 0 {
		t.Errorf("RestartContainer: %d pods restarted, %d resized live; want 3 restarted", r, z)
	}
	if r, z := restarts("NotRequired"); r != 0 || z != 3 {
		t.Errorf("NotRequired: %d pods restarted, %d resized live; want 3 resized live", r, z)
	}
}

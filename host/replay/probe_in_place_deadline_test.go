package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Probes of extensions in-place-update and progress-deadline through previews (branch probe47).

// probeWorld is a settled 3-pod OrderedReady set on the extended module with these annotations (YAML flow
// pairs), and an edit of it to image img: the world a preview starts from, and the edit.
func probeWorld(t *testing.T, annotations, img string) (*Scenario, []byte) {
	t.Helper()
	set := fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: default
  annotations: {ordinal.dev/module: extended, %s}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - {name: app, image: "%%s"}
`, annotations)
	var ind strings.Builder
	for _, l := range strings.Split(fmt.Sprintf(set, "nginx:1"), "\n") {
		ind.WriteString("    " + l + "\n")
	}
	sc, err := ParseScenario([]byte("name: probe\nmanifests:\n  -\n" + ind.String()))
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
	edit, err := yamlToJSON([]byte(fmt.Sprintf(set, img)))
	if err != nil {
		t.Fatal(err)
	}
	return world, edit
}

func probePreview(t *testing.T, annotations, img string) *Preview {
	t.Helper()
	world, edit := probeWorld(t, annotations, img)
	p, err := PreviewEdit(context.Background(), world, edit, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A rollout takes as long with a progress deadline as without: the deadline's requeue, which finds nothing
// to do after the rollout completed, is not part of it. It was: a 30 s rollout previewed "complete after
// 10m1s" under ordinal.dev/progress-deadline-seconds: "600".
func TestProbeDurationIsNotTheDeadlinesRequeue(t *testing.T) {
	for _, policy := range []string{"ReCreate", "InPlaceIfPossible"} {
		plain := probePreview(t, "ordinal.dev/pod-update-policy: "+policy, "nginx:2")
		timed := probePreview(t, `ordinal.dev/pod-update-policy: `+policy+`, ordinal.dev/progress-deadline-seconds: "600"`, "nginx:2")
		if plain.Outcome.Result != "complete" || timed.Outcome.Result != "complete" {
			t.Fatalf("%s: outcomes %+v and %+v", policy, plain.Outcome, timed.Outcome)
		}
		if timed.Outcome.Duration != plain.Outcome.Duration {
			t.Errorf("%s: complete after %s with a 600 s deadline, %s without", policy, timed.Outcome.Duration, plain.Outcome.Duration)
		}
	}
}

// A preview whose edit the module rolls back (ordinal.dev/on-progress-deadline: Rollback, past a deadline
// shorter than a pod's restart) says the edit's revision is the one it leads to, warns that the deadline
// passed and the edit was rolled back, and asks "what if it never becomes Ready?" of that revision. It said
// "revision A -> A", no warning, exit 0, and asked the what-if of A, the revision rolled back to.
func TestProbePreviewOfAnEditRolledBack(t *testing.T) {
	for _, policy := range []string{"ReCreate", "InPlaceIfPossible"} {
		p := probePreview(t, `ordinal.dev/pod-update-policy: `+policy+`, ordinal.dev/progress-deadline-seconds: "3", ordinal.dev/on-progress-deadline: Rollback`, "nginx:2")
		if p.From.Label != "A" || p.To.Label != "B" {
			t.Errorf("%s: revision %s -> %s, want A -> B", policy, p.From.Label, p.To.Label)
		}
		w, ok := warned(p, WarnProgressDeadlineExceeded)
		if !ok || !strings.Contains(w.Message, "rolled back") {
			t.Errorf("%s: warnings %+v, want %s saying it is rolled back", policy, p.Warnings, WarnProgressDeadlineExceeded)
		}
		if n := p.NeverReady; n == nil || n.Revision.Label != "B" {
			t.Errorf("%s: never-Ready %+v, want it asked of B", policy, n)
		}
	}
}

// The never-Ready what-if's undo names the pods the controller moves after the revert, those it moves back in
// place too: of a mixed in-place rollout it named only web-0 and web-1 (recreated, Ready all along) as how
// reverting recovers, and not web-2..web-4, the never-Ready pods it updates back in place.
func TestProbeUndoNamesThePodsMovedBackInPlace(t *testing.T) {
	p := previewCase(t, "in-place-mixed")
	n := p.NeverReady
	if n == nil || n.Undo == nil || !n.Undo.Recovers {
		t.Fatalf("never-Ready %+v, want an undo that recovers", n)
	}
	if got := strings.Join(n.Undo.InPlace, ","); got != "web-2,web-3,web-4" {
		t.Errorf("undo moved in place %q, want web-2,web-3,web-4 (deleted %v)", got, n.Undo.Deleted)
	}
	if !strings.Contains(n.Summary, "web-2..web-4 in place") {
		t.Errorf("summary %q does not name the pods moved back in place", n.Summary)
	}
}

// A world taken mid in-place update (kubectl ordinal preview, the webhook, preview --from a snapshot) holds a
// pod whose containers the kubelet has not restarted yet: its status reports the old image (or a resize in
// progress, or a status of the pod's generation before the update). The replay's kubelet carries that update
// out as it carries out its own; it left the pod as it was, and every such replay ended "stuck after 0s".
func TestProbeReplayFromAWorldMidInPlaceUpdate(t *testing.T) {
	const anotherTag = "image reported by another tag"
	sc, err := ParseScenario([]byte(`
name: mid-in-place
kubelet: {restartDelay: 10m}
limits: {duration: 1m}
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
            - {name: app, image: "nginx:1", resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 100m, memory: 64Mi}}}
events:
  - settled: true
    set:
      "spec.template.spec.containers[0].image": "nginx:2"
      "spec.template.spec.containers[0].resources": {requests: {cpu: 200m, memory: 64Mi}, limits: {cpu: 200m, memory: 64Mi}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}, "limits": map[string]any{"cpu": "100m", "memory": "64Mi"}}
	for name, status := range map[string]map[string]any{
		"old image": {"containerStatuses": []any{map[string]any{"name": "app", "image": "docker.io/library/nginx:1", "ready": true, "resources": old,
			"state": map[string]any{"running": map[string]any{"startedAt": "2026-11-22T10:00:05Z"}}}}},
		"resize in progress, status behind the pod's generation": {"observedGeneration": 1, "containerStatuses": []any{map[string]any{"name": "app", "image": "nginx:2", "ready": true, "resources": old,
			"state": map[string]any{"running": map[string]any{"startedAt": "2026-11-22T10:00:05Z"}}}},
			"conditions": []any{map[string]any{"type": "PodResizeInProgress", "status": "True"}, map[string]any{"type": "Ready", "status": "True"}}},
		// a tag no revision has: the runtime may name nginx:2 so (containerd: an image's first tag), which
		// the pod cannot tell from a container not restarted yet; the replay restarts it, and says the
		// cluster may wait for good
		anotherTag: {"containerStatuses": []any{map[string]any{"name": "app", "image": "docker.io/library/nginx:latest", "ready": true, "resources": old,
			"state": map[string]any{"running": map[string]any{"startedAt": "2026-11-22T10:00:05Z"}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			var w map[string]any
			if err := json.Unmarshal(tl.Final, &w); err != nil {
				t.Fatal(err)
			}
			moved := 0
			for _, p := range w["pods"].([]any) {
				pod := p.(map[string]any)
				md := pod["metadata"].(map[string]any)
				if ann, _ := md["annotations"].(map[string]any); ann["ordinal.dev/in-place-update"] == nil {
					continue
				}
				moved++
				md["generation"] = 2
				st := pod["status"].(map[string]any)
				for k, v := range status {
					if k == "conditions" {
						v = append(st["conditions"].([]any), v.([]any)[0])
					}
					st[k] = v
				}
			}
			if moved != 1 {
				t.Fatalf("%d pods updated in place when the replay stopped, want 1", moved)
			}
			b, _ := json.Marshal(w)
			world, err := ScenarioFromSnapshot(b)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Run(context.Background(), world, testOptions())
			if err != nil {
				t.Fatal(err)
			}
			if out.Outcome.Result != "complete" {
				t.Errorf("outcome %+v, want the rollout carried on to the end", out.Outcome)
			}
			said := false
			for _, n := range out.Steps[0].World {
				said = said || n.Reason == "ImageReportedByAnotherTag" && strings.Contains(n.Message,
					"container app reports image docker.io/library/nginx:latest, no revision's image, for nginx:2: the replay restarts it; on the cluster")
			}
			if said != (name == anotherTag) {
				t.Errorf("first step's world notes %+v: a note of the other tag %v, want %v", out.Steps[0].World, said, name == anotherTag)
			}
			if name != anotherTag {
				return
			}
			// a preview of an edit of that world says it in its first step
			set := w["statefulSet"].(map[string]any)
			set["spec"].(map[string]any)["replicas"] = 4
			edit, _ := json.Marshal(set)
			p, err := PreviewEdit(context.Background(), world, edit, testOptions())
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Steps) == 0 || len(p.Steps[0].World) == 0 || p.Steps[0].World[0].Reason != ReasonImageByAnotherTag {
				t.Errorf("preview steps %+v: want the first to say the image is reported by another tag", p.Steps)
			}
		})
	}
}

// A rollout that ends held by ordinal.dev/paused says so, as one InPlaceOnly holds does: it ended "nothing more
// happens, yet not updated", which reads as a fault, with no word of the pause asked for.
func TestProbeOutcomeNamesThePause(t *testing.T) {
	world, edit := probeWorld(t, `ordinal.dev/pod-update-policy: InPlaceIfPossible`, "nginx:2")
	var o map[string]any
	_ = json.Unmarshal(edit, &o)
	o["metadata"].(map[string]any)["annotations"].(map[string]any)["ordinal.dev/paused"] = "true"
	edit, _ = json.Marshal(o)
	p, err := PreviewEdit(context.Background(), world, edit, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if p.Outcome.Result != "stuck" || !strings.Contains(p.Outcome.Summary, `ordinal.dev/paused "true" holds web-0..web-2 (A)`) {
		t.Errorf("outcome %+v, want the pause named", p.Outcome)
	}
}

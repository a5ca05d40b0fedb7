package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestReplayPrintsTimeline(t *testing.T) {
	code, out, errs := run(t, "", "replay", "../../examples/rolling-update.yaml")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"revisions: A=web-6cbd9df98d (1) B=web-54cb854cf9 (2)", "pods: 0..4:A/Ready",
		"delete Pod web-4\n  delete Pod web-3", "== complete"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestReplayGolden(t *testing.T) {
	golden := "../../testdata/scenarios/rolling-update.timeline.txt"
	code, out, errs := run(t, "", "replay", "../../testdata/scenarios/rolling-update.yaml", "--golden", golden)
	if code != ExitOK || !strings.Contains(out, "matches") {
		t.Fatalf("exit %d, out %q, stderr %s", code, out, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(bad, []byte("something else\n"), 0o644)
	code, _, errs = run(t, "", "replay", "../../testdata/scenarios/rolling-update.yaml", "--golden", bad)
	if code != ExitGoldenDiffers || !strings.Contains(errs, "line 1") {
		t.Fatalf("exit %d (want %d), stderr %s", code, ExitGoldenDiffers, errs)
	}
	code, _, errs = run(t, "", "replay", "../../testdata/scenarios/rolling-update.yaml", "--golden", bad, "--update")
	if code != ExitOK {
		t.Fatalf("--update: exit %d: %s", code, errs)
	}
	want, _ := os.ReadFile(golden)
	got, _ := os.ReadFile(bad)
	if string(want) != string(got) {
		t.Fatal("--update did not write the timeline")
	}
}

func TestReplayJSONAndHTML(t *testing.T) {
	page := filepath.Join(t.TempDir(), "t.html")
	code, out, errs := run(t, "", "replay", "../../testdata/scenarios/create-parallel.yaml", "-o", "json", "--html", page)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var tl struct {
		Steps   []json.RawMessage       `json:"steps"`
		Outcome struct{ Result string } `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(out), &tl); err != nil || len(tl.Steps) == 0 || tl.Outcome.Result != "complete" {
		t.Fatalf("bad JSON timeline (%v): %.300s", err, out)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), `id="timeline-data"`) {
		t.Fatalf("no HTML page written: %v", err)
	}
	// where the page went is said on stderr, once, with its size; stdout stays the JSON (checked above)
	if want := fmt.Sprintf("wrote replay picture to %s (%d KB)\n", page, (len(b)+1023)/1024); errs != want {
		t.Errorf("stderr %q, want %q", errs, want)
	}
}

// The size a written file is reported with: never "0 KB" for a small file.
func TestFileSize(t *testing.T) {
	for n, want := range map[int]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KB", 1025: "2 KB", 10<<20 - 1: "10240 KB", 10 << 20: "10 MB", 10<<20 + 1: "11 MB"} {
		if got := fileSize(n); got != want {
			t.Errorf("fileSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// preview --html draws the previewed rollout with replay's renderer: the page's data is the replay of the
// edit (its subtitle says so; its pods end at the edit's revision), not the scenario the world came from.
func TestPreviewHTML(t *testing.T) {
	page := filepath.Join(t.TempDir(), "p.html")
	code, out, errs := run(t, "", "preview", "--scenario", "../../examples/rolling-update.yaml", "-f", "../../examples/rolling-update-next.yaml", "--html", page)
	if code != ExitOK {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("no page written: %v", err)
	}
	if said := "wrote preview picture to " + page + " ("; !strings.Contains(errs, said) || strings.Contains(out, said) {
		t.Errorf("where the page went is not said on stderr alone (%q):\nstderr: %s\nstdout: %s", said, errs, out)
	}
	const open, end = `<script type="application/json" id="timeline-data">`, `</script>`
	_, rest, ok := strings.Cut(string(b), open)
	data, _, _ := strings.Cut(rest, end)
	var d struct {
		Description string `json:"description"`
		Revisions   []struct{ Name string }
		Steps       []json.RawMessage
	}
	if !ok || json.Unmarshal([]byte(data), &d) != nil {
		t.Fatalf("page lacks the timeline data: %.300s", b)
	}
	if !strings.Contains(d.Description, "preview: the edited StatefulSet web applied at +0s: ~ spec.template.spec.containers[nginx].image") {
		t.Errorf("page's subtitle %q does not say it is the preview of the edit", d.Description)
	}
	if last := d.Revisions[len(d.Revisions)-1].Name; len(d.Steps) == 0 || !strings.Contains(out, last) {
		t.Errorf("page's revisions %v, %d steps: not the preview's (%s)", d.Revisions, len(d.Steps), out)
	}
	// a picture that cannot be written fails the preview before its text is printed: neither is left
	if code, out, errs := run(t, "", "preview", "--scenario", "../../examples/rolling-update.yaml", "-f", "../../examples/rolling-update-next.yaml",
		"--html", filepath.Join(t.TempDir(), "no", "such", "dir", "p.html")); code != ExitUsage || !strings.Contains(errs, "--html") || out != "" {
		t.Errorf("--html into a missing directory: exit %d, stderr %s, stdout %.200q", code, errs, out)
	}
}

func TestReplayBadScenario(t *testing.T) {
	f := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(f, []byte("name: x\nmanifests: []\nevents: [{at: 1s, deletPod: web-0}]\n"), 0o644)
	code, _, errs := run(t, "", "replay", f)
	if code != ExitUsage || !strings.Contains(errs, "deletPod") {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
}

func TestPreviewForcedRollbackTrap(t *testing.T) {
	dir := "../../testdata/replay/preview/"
	code, out, errs := run(t, "", "preview", "-f", dir+"forced-rollback.edit.yaml", "--scenario", dir+"forced-rollback.scenario.yaml")
	if code != ExitStuck || !strings.Contains(errs, "the rollout is stuck") {
		t.Fatalf("exit %d (want %d, the rollout never completes): %s", code, ExitStuck, errs)
	}
	if code, _, errs := run(t, "", "preview", "-f", dir+"forced-rollback.edit.yaml", "--scenario", dir+"forced-rollback.scenario.yaml", "--fail-on", "none"); code != ExitOK {
		t.Fatalf("--fail-on none: exit %d: %s", code, errs)
	}
	want, _ := os.ReadFile(dir + "forced-rollback.preview.txt")
	if out != string(want) {
		t.Fatalf("preview differs from the library's golden:\n%s", out)
	}
}

// --fail-on unrecoverable gates on the forced-rollback trap predicted before apply: an OrderedReady image change
// whose new revision, were it never Ready, would stall on web-4 with no way back but deleting it exits 8 and
// names the pod; by default (stuck,limit) the same preview passes, its -o json has the neverReady answer; a
// scale-down, which makes no new revision, does not trip it.
func TestPreviewFailOnUnrecoverable(t *testing.T) {
	const snap = "../../examples/ci/web.snapshot.json"
	code, out, errs := run(t, "", "preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", snap, "--fail-on", "unrecoverable")
	if code != ExitFailOn || !strings.Contains(errs, "--fail-on: Unrecoverable: ") || !strings.Contains(errs, "stalls on web-4") || !strings.Contains(out, "kubectl delete pod web-4") {
		t.Fatalf("exit %d, want %d naming web-4: %s\n%s", code, ExitFailOn, errs, out)
	}
	code, out, errs = run(t, "", "preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", snap, "-o", "json")
	var p struct {
		NeverReady *struct {
			Result  string   `json:"result"`
			WaitsOn []string `json:"waitsOn"`
			Undo    *struct {
				Recovers bool `json:"recovers"`
			} `json:"undo"`
			Recovery struct{ Kind string } `json:"recovery"`
		} `json:"neverReady"`
	}
	if code != ExitOK {
		t.Fatalf("default --fail-on: exit %d: %s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.NeverReady == nil || p.NeverReady.Result != "stalls" ||
		len(p.NeverReady.WaitsOn) != 1 || p.NeverReady.WaitsOn[0] != "web-4" || p.NeverReady.Undo == nil || p.NeverReady.Undo.Recovers || p.NeverReady.Recovery.Kind != "manual" {
		t.Fatalf("-o json neverReady (%v): %+v\n%.600s", err, p.NeverReady, out)
	}
	if code, _, errs := run(t, "", "preview", "-f", "../../examples/ci/web-scale-down.yaml", "--from", snap, "--fail-on", "unrecoverable"); code != ExitOK {
		t.Fatalf("scale-down: exit %d: %s", code, errs)
	}
	if code, _, errs := run(t, "", "replay", "../../examples/rolling-update.yaml", "--fail-on", "unrecoverable"); code != ExitUsage || !strings.Contains(errs, "a preview warning") {
		t.Fatalf("replay --fail-on unrecoverable: exit %d: %s", code, errs)
	}
}

func TestPreviewFromSnapshot(t *testing.T) {
	edit := filepath.Join(t.TempDir(), "edit.json")
	snap, err := os.ReadFile("../../examples/web-fresh.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ StatefulSet map[string]any }
	json.Unmarshal(snap, &s)
	s.StatefulSet["spec"].(map[string]any)["replicas"] = 2
	b, _ := json.Marshal(s.StatefulSet)
	os.WriteFile(edit, b, 0o644)
	code, out, errs := run(t, "", "preview", "-f", edit, "--from", "../../examples/web-fresh.snapshot.json", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var p struct {
		Outcome struct{ Result string } `json:"outcome"`
		Steps   []json.RawMessage       `json:"steps"`
		// the settings typed: the edited replicas a number, the strategy's fields their own
		Settings struct {
			Replicas      *int `json:"replicas"`
			RollingUpdate *struct {
				MaxUnavailablePods int `json:"maxUnavailablePods"`
			} `json:"rollingUpdate"`
		} `json:"settings"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Outcome.Result != "complete" || len(p.Steps) == 0 {
		t.Fatalf("bad preview (%v): %.500s", err, out)
	}
	if p.Settings.Replicas == nil || *p.Settings.Replicas != 2 || p.Settings.RollingUpdate == nil || p.Settings.RollingUpdate.MaxUnavailablePods != 1 {
		t.Errorf("settings not typed: %.800s", out)
	}
	code, _, errs = run(t, "", "preview", "-f", edit)
	if code != ExitUsage {
		t.Fatalf("missing --from: exit %d %s", code, errs)
	}
}

// Replay's exit codes judge the rollout, so CI can gate on them.
func TestReplayExitCodesForCI(t *testing.T) {
	dir := t.TempDir()
	scenario := func(name, extra string) string {
		p := filepath.Join(dir, name+".yaml")
		os.WriteFile(p, []byte(`name: `+name+`
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default}
    spec:
      replicas: 3
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers: [{name: nginx, image: "nginx:1.24"}]
`+extra), 0o644)
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		want int
		says string
	}{
		{"complete", []string{scenario("ok", "")}, ExitOK, ""},
		{"stuck", []string{"../../testdata/scenarios/create-never-ready.yaml"}, ExitStuck, "the rollout is stuck"},
		{"stuck, not asked", []string{"../../testdata/scenarios/create-never-ready.yaml", "--fail-on", "limit"}, ExitOK, ""},
		{"limit", []string{scenario("limit", "limits: {steps: 2}\n")}, ExitLimit, "reached its limit"},
		{"data loss not asked", []string{"../../testdata/scenarios/scale-delete-delete.yaml"}, ExitOK, ""},
		{"data loss", []string{"../../testdata/scenarios/scale-delete-delete.yaml", "--fail-on", "stuck,limit,data-loss"}, ExitFailOn, "data-web-"},
		{"typo in a set path", []string{scenario("typo", "events:\n  - settled: true\n    set: {\"spec.template.spec.container[0].image\": \"nginx:1.25\"}\n")}, ExitUsage, `events[0].set.spec.template.spec.container: unknown field; did you mean containers?`},
		{"unknown field", []string{scenario("unknown", "events:\n  - settled: true\n    set: {\"spec.replicsa\": 2}\n")}, ExitUsage, `events[0].set.spec.replicsa: unknown field; did you mean replicas?`},
		{"missing pod", []string{scenario("nopod", "events:\n  - settled: true\n    deletePod: web-7\n")}, ExitUsage, `pods "web-7" not found`},
		{"unknown model", []string{scenario("m", ""), "--model", "foo"}, ExitUsage, `--model "foo"`},
		{"unknown --fail-on", []string{scenario("f", ""), "--fail-on", "dataloss"}, ExitUsage, `--fail-on "dataloss"`},
		{"a preview warning", []string{scenario("w", ""), "--fail-on", "on-delete"}, ExitUsage, "a preview warning"},
	} {
		code, _, errs := run(t, "", append([]string{"replay"}, tc.args...)...)
		if code != tc.want || !strings.Contains(errs, tc.says) {
			t.Errorf("%s: exit %d, want %d; stderr %q should say %q", tc.name, code, tc.want, errs, tc.says)
		}
	}
}

// -o text|json|yaml everywhere; the old --json still works, deprecated.
func TestOutputFlag(t *testing.T) {
	for _, args := range [][]string{
		{"replay", "../../testdata/scenarios/create-parallel.yaml"},
		{"preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", "../../examples/ci/web.snapshot.json"},
		{"version"},
	} {
		code, js, errs := run(t, "", append(args, "-o", "json")...)
		if code != ExitOK || !json.Valid([]byte(js)) {
			t.Errorf("%v -o json: exit %d %s", args, code, errs)
		}
		code, y, errs := run(t, "", append(args, "-o", "yaml")...)
		var fromYAML, fromJSON any
		if err := yaml.Unmarshal([]byte(y), &fromYAML); code != ExitOK || err != nil {
			t.Errorf("%v -o yaml: exit %d %v %s", args, code, err, errs)
		}
		json.Unmarshal([]byte(js), &fromJSON)
		if !reflect.DeepEqual(fromJSON, fromYAML) {
			t.Errorf("%v: -o yaml is not -o json as YAML", args)
		}
		if code, old, errs := run(t, "", append(args, "--json")...); code != ExitOK || old != js || !strings.Contains(errs, "use -o json") {
			t.Errorf("%v --json: exit %d, same output %v, stderr %q", args, code, old == js, errs)
		}
		if code, _, errs := run(t, "", append(args, "-o", "xml")...); code != ExitUsage || !strings.Contains(errs, "-o/--output") {
			t.Errorf("%v -o xml: exit %d %s", args, code, errs)
		}
	}
}

// A scenario cut off at its limit leaves pods mid-start; previewing from it would call them stuck. The
// preview refuses it and says why (the same scenario with room to settle previews).
func TestPreviewRefusesAScenarioStoppedAtItsLimit(t *testing.T) {
	b, err := os.ReadFile("../../testdata/scenarios/rolling-update.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	limited := filepath.Join(dir, "limited.yaml")
	if err := os.WriteFile(limited, []byte(strings.Replace(string(b), "\nevents:", "\nlimits: {steps: 4}\nevents:", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := filepath.Join(dir, "edit.yaml")
	if err := os.WriteFile(edit, []byte(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "registry.k8s.io/nginx-slim:0.29"}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "preview", "-f", edit, "--scenario", limited)
	if code != ExitUsage || !strings.Contains(errs, "stopped at its limit (step limit (4 syncs) reached; the set's status: ") {
		t.Errorf("preview from a scenario stopped at its limit: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := run(t, "", "preview", "-f", edit, "--scenario", "../../testdata/scenarios/rolling-update.yaml"); code != 0 {
		t.Errorf("preview from the settled scenario: exit %d\n%s%s", code, out, errs)
	}
}

// Issue 32, finding 6: pods that carry the set's labels without being its own (db-0, web--1; another
// controller's) made replay and preview call a complete rollout stuck (exit 6, failing a CI gate) and were
// drawn at ordinals in the pod grid. Upstream's controller counts only the pods it claims: controlled by
// the set, or orphans it adopts, named <set>-<ordinal>; an orphan web-0 is adopted and so is the set's.
func TestPodsTheSetDoesNotOwnNeverMakeItStuck(t *testing.T) {
	dir := t.TempDir()
	pod := func(name, extra string) string {
		return `  - apiVersion: v1
    kind: Pod
    metadata:
      name: ` + name + `
      namespace: default
      labels: {app: web}
      annotations: {"oracle.test/never-ready": "true"}` + extra + `
    spec:
      containers: [{name: nginx, image: "nginx:1.24"}]
`
	}
	other := `
      ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: other, uid: 5d0e1b8c-0000-4000-8000-000000000001, controller: true}]`
	scenario := filepath.Join(dir, "not-owned.yaml")
	os.WriteFile(scenario, []byte(`name: not-owned
manifests:
`+pod("db-0", "")+pod("web--1", "")+pod("web-7", other)+`  - apiVersion: v1
    kind: Pod
    metadata: {name: web-0, namespace: default, labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.24"}]
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default}
    spec:
      replicas: 2
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers: [{name: nginx, image: "nginx:1.25"}]
`), 0o644)
	code, out, errs := run(t, "", "replay", scenario, "-o", "json")
	if code != ExitOK {
		t.Fatalf("replay: exit %d, want 0 (db-0, web--1 and web-7 are not web's): %s", code, errs)
	}
	var tl struct {
		Steps []struct {
			Pods []struct {
				Name    string
				Ordinal int
			}
		}
		Outcome struct{ Result string }
	}
	if err := json.Unmarshal([]byte(out), &tl); err != nil || tl.Outcome.Result != "complete" || len(tl.Steps) == 0 {
		t.Fatalf("replay (%v): %.500s", err, out)
	}
	for i, st := range tl.Steps {
		for _, p := range st.Pods {
			if p.Name != "web-0" && p.Name != "web-1" {
				t.Errorf("step %d draws %s at ordinal %d in the grid", i, p.Name, p.Ordinal)
			}
		}
	}
	// the orphan web-0 is the set's from the start: adopted, at ordinal 0
	if first := tl.Steps[0].Pods; len(first) != 1 || first[0].Name != "web-0" || first[0].Ordinal != 0 {
		t.Errorf("the first step's grid should be the orphan web-0 at 0 (adopted): %+v", first)
	}

	// preview: a snapshot holding the same strangers, OrderedReady; no OrderedReady trap, not stuck
	snap, err := os.ReadFile("../../examples/web-fresh.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	json.Unmarshal(snap, &doc)
	var pods []any
	for _, name := range []string{"db-0", "web--1"} {
		pods = append(pods, map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": "default", "uid": "0c7a2d4e-0000-4000-8000-00000000000" + string(rune('1'+len(pods))),
				"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"oracle.test/never-ready": "true"}},
			"spec":   map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.24"}}},
			"status": map[string]any{"phase": "Running"}})
	}
	doc["pods"] = pods
	from := filepath.Join(dir, "snapshot.json")
	b, _ := json.Marshal(doc)
	os.WriteFile(from, b, 0o644)
	edit := filepath.Join(dir, "edit.json")
	b, _ = json.Marshal(doc["statefulSet"])
	os.WriteFile(edit, b, 0o644)
	code, out, errs = run(t, "", "preview", "-f", edit, "--from", from, "--fail-on", "stuck,limit,ordered-ready-blocked")
	if code != ExitOK || strings.Contains(out, "db-0") || strings.Contains(out, "web--1") {
		t.Fatalf("preview: exit %d, want 0 and neither db-0 nor web--1 named: %s\n%s", code, errs, out)
	}
}

// Issue 32, finding 7 (first half): replay and preview had no wall-clock bound a CI job could set (a
// 1000-replica OrderedReady replay ran 7 minutes). --replay-timeout bounds the whole command with the
// engine's own deadline (the webhook's Budget): reached, the replay stops at the next sync as at its step
// limit, outcome "limit", exit 7, the rollout so far printed whole and the summary saying how far it got.
// The deadline is 1ns, passed before the first sync ends whatever the machine: no time is measured.
func TestReplayTimeoutStopsAsALimit(t *testing.T) {
	for _, args := range [][]string{
		{"replay", "../../examples/rolling-update.yaml"},
		{"replay", "../../examples/rolling-update.yaml", "-o", "json"},
		{"preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", "../../examples/ci/web.snapshot.json"},
		{"preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", "../../examples/ci/web.snapshot.json", "-o", "json"},
	} {
		code, out, errs := run(t, "", append(args, "--replay-timeout", "1ns")...)
		const why = "wall-clock limit (--replay-timeout 1ns) reached after 1 syncs; the set's status: replicas="
		if code != ExitLimit || !strings.Contains(errs, why) {
			t.Errorf("%v: exit %d, stderr %q; want exit 7 saying %q", args, code, errs, why)
			continue
		}
		if args[len(args)-1] != "json" {
			if !strings.Contains(out, "limit after") || !strings.Contains(out, why) {
				t.Errorf("%v: the output does not say how far the replay got:\n%s", args, out)
			}
			continue
		}
		var doc struct {
			Outcome struct{ Result, Summary string }
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil { // printed whole
			t.Fatalf("%v: %v", args, err)
		}
		if doc.Outcome.Result != "limit" || !strings.Contains(doc.Outcome.Summary, why) {
			t.Errorf("%v: outcome %+v", args, doc.Outcome)
		}
	}
	// Without the flag the same replay settles; a negative limit is refused.
	if code, _, errs := run(t, "", "replay", "../../examples/rolling-update.yaml"); code != ExitOK {
		t.Errorf("without --replay-timeout: exit %d: %s", code, errs)
	}
	if code, _, errs := run(t, "", "replay", "../../examples/rolling-update.yaml", "--replay-timeout", "-1s"); code != ExitUsage || !strings.Contains(errs, "--replay-timeout -1s") {
		t.Errorf("--replay-timeout -1s: exit %d: %s", code, errs)
	}
}

// Issue 32, finding 7 (second half): a 100,000-replica Parallel replay ran the module out of memory and
// ended as a module failure (exit 4). A set beyond what the module's memory limit holds
// (replay.MaxReplicas: 32 replicas a MiB, at most 32,768) is refused before its first sync, exit 1 (a
// world the replay refuses, as a too large input is), naming the limit and how to raise it.
func TestReplayRefusesSetsBeyondTheModulesMemory(t *testing.T) {
	dir := t.TempDir()
	manifest := func(replicas int) string {
		f := filepath.Join(dir, fmt.Sprintf("web-%d.yaml", replicas))
		doc := fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: %d
  podManagementPolicy: Parallel
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: nginx:1.25}]}
`, replicas)
		if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	edit, err := os.ReadFile("../../examples/ci/web-new-image.yaml")
	if err != nil {
		t.Fatal(err)
	}
	scaled := filepath.Join(dir, "scaled.yaml")
	if err := os.WriteFile(scaled, []byte(strings.Replace(string(edit), "replicas: 5", "replicas: 100000", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", manifest(100_000)}, "the set has 100000 replicas, more than the 8192 a replay takes with the module's 256 MiB memory limit (32 a MiB, at most 32768; raise it with --memory-limit-mib)"},
		{[]string{"replay", manifest(8193)}, "more than the 8192 a replay takes with the module's 256 MiB memory limit"},
		{[]string{"replay", manifest(100_000), "--memory-limit-mib", "512"}, "more than the 16384 a replay takes with the module's 512 MiB memory limit"},
		{[]string{"replay", manifest(100_000), "--memory-limit-mib", "4096"}, "more than the 32768 a replay takes"},
		{[]string{"preview", "-f", scaled, "--from", "../../examples/ci/web.snapshot.json"}, "more than the 8192 a replay takes"},
	} {
		code, out, errs := run(t, "", tc.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %.200q, stderr %q; want exit 1 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}

// `make demo` (the README's first command) replays examples/rolling-update.yaml and previews
// examples/rolling-update-next.yaml on the world it ends in: both must work, and the preview is one screen.
// The two call each revision by one letter, its number's (A=1, B=2, the edit's new C=3), and each says once
// what its letters mean.
func TestDemoCommands(t *testing.T) {
	code, replayed, errs := run(t, "", "replay", "../../examples/rolling-update.yaml")
	if code != ExitOK || !strings.Contains(replayed, "== complete") {
		t.Fatalf("replay: exit %d\n%s%s", code, replayed, errs)
	}
	code, out, errs := run(t, "", "preview", "--scenario", "../../examples/rolling-update.yaml", "-f", "../../examples/rolling-update-next.yaml")
	if code != ExitOK || !strings.Contains(out, "outcome: complete") || strings.Count(out, "\n") > 31 {
		t.Fatalf("preview: exit %d, %d lines\n%s%s", code, strings.Count(out, "\n"), out, errs)
	}
	const before = "A=web-6cbd9df98d (1) B=web-54cb854cf9 (2)"
	if !strings.Contains(replayed, "revisions: "+before+"\n") || strings.Count(replayed, "revisions: ") != 1 {
		t.Errorf("replay's legend is not %q once:\n%.400s", before, replayed)
	}
	if !strings.Contains(out, "preview: StatefulSet web, revision B -> C\nrevisions: "+before+" C=web-55fcf954f4 (3)\n") || strings.Count(out, "revisions: ") != 1 {
		t.Errorf("preview does not call the revisions as the replay does, with its legend once:\n%s", out)
	}
}

// --fail-on gates on what a set's ordinal.dev/ annotations ask that its module will not do: a misspelt key
// (unknown-annotation) and an extension the faithful module lacks (extension-ignored) each exit 8 naming the
// key; the same preview passes by default (the warnings are still printed), and replay refuses them (it never
// checks the annotations).
func TestPreviewFailOnAnnotations(t *testing.T) {
	const snap = "../../examples/ci/web.snapshot.json"
	b, err := os.ReadFile("../../examples/ci/web-new-image.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const meta = "metadata: {name: web, namespace: default, labels: {app: web}}"
	if !strings.Contains(string(b), meta) {
		t.Fatalf("examples/ci/web-new-image.yaml has no line %q to annotate", meta)
	}
	edit := filepath.Join(t.TempDir(), "web.yaml")
	annotated := strings.Replace(string(b), meta, `metadata: {name: web, namespace: default, labels: {app: web}, annotations: {ordinal.dev/pasued: "true", ordinal.dev/recover-stuck-after: 5m}}`, 1)
	if err := os.WriteFile(edit, []byte(annotated), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, code, key string }{
		{"unknown-annotation", "UnknownAnnotation", "ordinal.dev/pasued is unknown"},
		{"extension-ignored", "ExtensionIgnored", "ordinal.dev/recover-stuck-after: \"5m\" is ignored"},
		{"UnknownAnnotation", "UnknownAnnotation", "ordinal.dev/pasued is unknown"}, // the JSON's code
	} {
		code, _, errs := run(t, "", "preview", "-f", edit, "--from", snap, "--fail-on", c.name)
		if code != ExitFailOn || !strings.Contains(errs, "--fail-on: "+c.code+": "+c.key) {
			t.Errorf("--fail-on %s: exit %d, want %d naming %q: %s", c.name, code, ExitFailOn, c.key, errs)
		}
	}
	code, out, errs := run(t, "", "preview", "-f", edit, "--from", snap)
	if code != ExitOK || !strings.Contains(out, "ordinal.dev/pasued is unknown") {
		t.Errorf("default --fail-on: exit %d, want %d with the warning shown: %s\n%s", code, ExitOK, errs, out)
	}
	if code, _, errs := run(t, "", "preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", snap, "--fail-on", "unknown-annotation,extension-ignored,invalid-extension-value"); code != ExitOK {
		t.Errorf("no ordinal.dev/ annotation: exit %d: %s", code, errs)
	}
	if code, _, errs := run(t, "", "replay", "../../examples/rolling-update.yaml", "--fail-on", "unknown-annotation"); code != ExitUsage || !strings.Contains(errs, "a preview warning") {
		t.Errorf("replay --fail-on unknown-annotation: exit %d: %s", code, errs)
	}
}

// replay takes its input as kubectl takes a file, with -f (or -f - for standard input), as reconcile and
// preview do, and still as its argument; never both, and -f leaves the argument to name the set.
func TestReplayTakesItsInputWithF(t *testing.T) {
	const scenario = "../../examples/rolling-update.yaml"
	_, want, _ := run(t, "", "replay", scenario)
	stdin, err := os.ReadFile(scenario)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, stdin string
		args        []string
	}{
		{"-f FILE", "", []string{"replay", "-f", scenario}},
		{"--filename FILE", "", []string{"replay", "--filename", scenario}},
		{"-f -", string(stdin), []string{"replay", "-f", "-"}},
	} {
		code, out, errs := run(t, c.stdin, c.args...)
		if code != ExitOK || out != want {
			t.Errorf("%s: exit %d, stderr %s; output differs from the argument's: %v", c.name, code, errs, out != want)
		}
	}
	code, out, errs := run(t, "", "replay", "-f", "../../examples/lists/prod.yaml", "-n", "prod", "statefulset/web")
	if code != ExitOK || !strings.HasPrefix(out, "replay prod/web") {
		t.Errorf("-f LIST statefulset/NAME: exit %d, stderr %s, output %.80q", code, errs, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay"}, "no input: give a scenario, snapshot, List or manifest as the argument or with -f; usage: ordinal replay [-f] "},
		{[]string{"replay", "-f", scenario, scenario}, "-f and " + scenario + ": replay takes one input, as the argument or with -f; usage: "},
		{[]string{"replay", "-f", scenario, "statefulset/web", "statefulset/db"}, "2 arguments with -f: want at most one statefulset/NAME; usage: "},
		{[]string{"replay", scenario, "statefulset/web", "x"}, "3 arguments: want the input and at most one statefulset/NAME; usage: "},
	} {
		code, _, errs := run(t, "", c.args...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d saying %q", c.args, code, errs, ExitUsage, c.want)
		}
	}
}

// An edit the API server would refuse (here a changed serviceName, which is immutable) is said to be that,
// with the API server's message, and exits 1: the world it was previewed against is not what is wrong.
func TestPreviewOfARefusedEditSaysTheAPIServerWouldRefuseIt(t *testing.T) {
	b, err := os.ReadFile("../../examples/ci/web-new-image.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edit := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(edit, []byte(strings.Replace(string(b), "serviceName: web", "serviceName: other", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "preview", "-f", edit, "--from", "../../examples/ci/web.snapshot.json")
	want := `ordinal: the API server would refuse this edit: StatefulSet.apps "web" is invalid: spec.serviceName: Invalid value: "other": field is immutable` + "\n"
	if code != ExitUsage || errs != want || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and stderr %q", code, out, errs, ExitUsage, want)
	}
}

// A template whose resources kube-apiserver refuses (a negative quantity, a request above its limit: core
// pod-template validation, which apps/v1 runs on a StatefulSet) is a refused edit, exit 1 with the API
// server's message, in a preview's edit and a scenario's set: event alike; it was replayed as valid.
func TestATemplateWithInvalidResourcesIsRefused(t *testing.T) {
	b, err := os.ReadFile("../../examples/ci/web-new-image.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct{ resources, want string }{
		{"{limits: {cpu: '-1'}}", `spec.template.spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"{requests: {memory: 2Gi}, limits: {memory: 1Gi}}", `spec.template.spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`},
	} {
		edit := filepath.Join(dir, "web.yaml")
		bad := strings.Replace(string(b), "          ports:", "          resources: "+c.resources+"\n          ports:", 1)
		if err := os.WriteFile(edit, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := run(t, "", "preview", "-f", edit, "--from", "../../examples/ci/web.snapshot.json")
		want := `ordinal: the API server would refuse this edit: StatefulSet.apps "web" is invalid: ` + c.want + "\n"
		if code != ExitUsage || errs != want || out != "" {
			t.Errorf("preview: exit %d, stdout %.80q, stderr %q; want exit %d and stderr %q", code, out, errs, ExitUsage, want)
		}
		scenario := filepath.Join(dir, "s.yaml")
		var set []string // the manifest as the scenario's one manifest
		for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if !strings.HasPrefix(l, "#") {
				set = append(set, map[bool]string{true: "  - ", false: "    "}[i == 1]+l)
			}
		}
		sc := "name: s\nmanifests:\n" + strings.Join(set, "\n") +
			"\nevents:\n  - at: 1s\n    set:\n      \"spec.template.spec.containers[0].resources\": " + c.resources + "\n"
		if err := os.WriteFile(scenario, []byte(sc), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs = run(t, "", "replay", scenario)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("replay set: exit %d, stderr %q; want exit %d saying %q", code, errs, ExitUsage, c.want)
		}
	}
}

// --html FILE in a directory that does not exist is refused before anything is replayed, naming the
// directory: the page is written last, and the error once came after the whole replay and named FILE.tmp.
func TestHTMLInAMissingDirectoryIsRefusedFirst(t *testing.T) {
	page := filepath.Join(t.TempDir(), "no-such-dir", "x.html")
	want := "ordinal: --html " + page + ": no directory " + filepath.Dir(page) + " to write the page in\n"
	for _, args := range [][]string{
		{"replay", "../../examples/rolling-update.yaml", "--html", page},
		{"preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", "../../examples/ci/web.snapshot.json", "--html", page},
	} {
		code, out, errs := run(t, "", args...)
		if code != ExitUsage || errs != want || out != "" {
			t.Errorf("%s: exit %d, stdout %.60q, stderr %q; want exit %d and %q", args[0], code, out, errs, ExitUsage, want)
		}
	}
}

// --fail-on progress-deadline-exceeded gates on an edit the set's progress deadline stops or rolls back: a
// healthy image change under a 3 s deadline with on-progress-deadline Rollback ends "complete" at the old
// revision, which the default gate passes, as the revision the edit leads to and with the module's warning.
func TestPreviewFailOnProgressDeadlineExceeded(t *testing.T) {
	dir := t.TempDir()
	set := `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: default
  annotations: {ordinal.dev/module: extended, ordinal.dev/progress-deadline-seconds: "3", ordinal.dev/on-progress-deadline: Rollback}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: "nginx:%s"}]
`
	scenario := "name: deadline\nmanifests:\n  - " + strings.ReplaceAll(fmt.Sprintf(set, "1"), "\n", "\n    ") + "\n"
	if err := os.WriteFile(dir+"/s.yaml", []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/edit.yaml", []byte(fmt.Sprintf(set, "2")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "preview", "-f", dir+"/edit.yaml", "--scenario", dir+"/s.yaml")
	if code != ExitOK || !strings.Contains(out, "revision A -> B") || !strings.Contains(out, "rolled back") {
		t.Fatalf("default --fail-on: exit %d, want %d with the edit's revision and the rollback warned: %s\n%s", code, ExitOK, errs, out)
	}
	code, _, errs = run(t, "", "preview", "-f", dir+"/edit.yaml", "--scenario", dir+"/s.yaml", "--fail-on", "progress-deadline-exceeded")
	if code != ExitFailOn || !strings.Contains(errs, "--fail-on: ProgressDeadlineExceeded: ") {
		t.Fatalf("exit %d, want %d: %s", code, ExitFailOn, errs)
	}
}

// A pod whose annotations hold a number (no API server stores one) is a snapshot the module rejects, exit 2
// naming the field, from reconcile, replay and preview alike: with the extended module's in-place update it
// was exit 4, the firewall unable to decode the pod the module sent back.
func TestNonStringPodAnnotationIsARejectedSnapshot(t *testing.T) {
	var snap map[string]any
	b, err := os.ReadFile("../../examples/ci/web.snapshot.json")
	if err != nil || json.Unmarshal(b, &snap) != nil {
		t.Fatal(err)
	}
	md := snap["statefulSet"].(map[string]any)["metadata"].(map[string]any)
	md["annotations"] = map[string]any{"ordinal.dev/module": "extended", "ordinal.dev/pod-update-policy": "InPlaceIfPossible"}
	for _, p := range snap["pods"].([]any) {
		p.(map[string]any)["metadata"].(map[string]any)["annotations"] = map[string]any{"a": 5}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "snapshot.json")
	b, _ = json.Marshal(snap)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	edit, err := os.ReadFile("../../examples/ci/web-new-image.yaml")
	if err != nil {
		t.Fatal(err)
	}
	editFile := filepath.Join(dir, "web.yaml")
	annotated := strings.Replace(string(edit), "labels: {app: web}}", "labels: {app: web}, annotations: {ordinal.dev/module: extended, ordinal.dev/pod-update-policy: InPlaceIfPossible}}", 1)
	if err := os.WriteFile(editFile, []byte(annotated), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "pods[0].metadata.annotations.a: expected string, got number"
	for _, args := range [][]string{{"reconcile", "-f", file}, {"replay", file}, {"preview", "-f", editFile, "--from", file}} {
		code, _, errs := run(t, "", args...)
		if code != ExitRejected || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d saying %q", args[0], code, errs, ExitRejected, want)
		}
	}
}

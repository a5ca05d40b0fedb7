package cli

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/yamljson"
)

// Issue "A newcomer's first hour", item 4: an unknown or misspelt key is named, by its path, with the key
// meant, in every format the commands read. In Ordinal's own formats (a snapshot's envelope, a scenario, a
// test file) it is an error whatever --validate says; in Kubernetes objects (a snapshot's, a List's, a
// scenario's, a manifest) a warning on stderr by default, an error under --validate=strict, nothing under
// ignore; warn and ignore drop the field, as kube-apiserver does.

const webSnapshot = "../../examples/ci/web.snapshot.json"

// edited returns the JSON document of file with each path set to its value (decoded from JSON).
func edited(t *testing.T, file string, set map[string]string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yamljson.ToJSON(b, replay.MaxScenarioBytes)
	if err != nil {
		t.Fatal(err)
	}
	o, err := jsonobj.DecodeObj(j)
	if err != nil {
		t.Fatal(err)
	}
	for path, v := range set {
		val, err := jsonobj.Decode([]byte(v))
		if err != nil {
			t.Fatal(err)
		}
		if err := jsonobj.Set(o, path, val); err != nil {
			t.Fatal(err)
		}
	}
	out, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A misspelt field of a snapshot's objects: a warning by default (on stderr, -o json's output untouched),
// an error under --validate=strict, nothing under ignore; dropped, so the plan is the plan without it (the
// module would otherwise carry a template's into the revision and the pods it creates).
func TestSnapshotObjectUnknownFields(t *testing.T) {
	typo := writeTemp(t, "typo.json", edited(t, webSnapshot, map[string]string{
		"statefulSet.spec.podManagmentPolicy":                    `"Parallel"`,
		"statefulSet.spec.template.spec.containers[0].imagee":    `"x"`,
		"statefulSet.spec.template.metadata.annotations.changed": `"yes"`, // a new revision: the plan writes the template
	}))
	clean := writeTemp(t, "clean.json", edited(t, webSnapshot, map[string]string{
		"statefulSet.spec.template.metadata.annotations.changed": `"yes"`,
	}))
	warnings := "Warning: " + typo + ": statefulSet.spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?\n" +
		"Warning: " + typo + ": statefulSet.spec.template.spec.containers[0].imagee: unknown field; did you mean image?\n"

	_, want, _ := run(t, "", "reconcile", "-f", clean, "-o", "json")
	code, got, errs := run(t, "", "reconcile", "-f", typo, "-o", "json")
	if code != ExitOK || errs != warnings {
		t.Errorf("default (warn): exit %d, stderr %q; want 0 and\n%s", code, errs, warnings)
	}
	if got != want || !json.Valid([]byte(got)) || strings.Contains(got, "imagee") {
		t.Errorf("the plan with the fields dropped is not the plan without them:\n%s", got)
	}
	code, got, errs = run(t, "", "reconcile", "-f", typo, "-o", "json", "--validate=ignore")
	if code != ExitOK || errs != "" || got != want {
		t.Errorf("--validate=ignore: exit %d, stderr %q, same plan %v", code, errs, got == want)
	}
	for _, strict := range []string{"--validate=strict", "--validate", "--validate=true"} {
		code, out, errs := run(t, "", "reconcile", "-f", typo, strict)
		if code != ExitUsage || out != "" || !strings.Contains(errs, "ordinal: "+typo+": 2 unknown fields:\n  statefulSet.spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?\n") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", strict, code, out, errs)
		}
	}
	// replay and preview --from read the same snapshot the same way.
	if code, _, errs := run(t, "", "replay", typo); code != ExitOK || errs != warnings {
		t.Errorf("replay: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "", "preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", typo, "--validate=strict"); code != ExitUsage || !strings.Contains(errs, "statefulSet.spec.podManagmentPolicy: unknown field") {
		t.Errorf("preview --from --validate=strict: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "", "reconcile", "-f", typo, "--validate=yes"); code != ExitUsage || !strings.Contains(errs, `--validate "yes": must be one of strict (or true), warn, ignore (or false)`) {
		t.Errorf("--validate=yes: exit %d, stderr %q", code, errs)
	}
}

// A value of the wrong type (one the module does not read) hides no misspelt field beside it: the decoder
// names no field of an object that does not decode, so the pod's passed --validate=strict unseen.
func TestUnknownFieldBesideAWrongValue(t *testing.T) {
	typo := writeTemp(t, "typo.json", edited(t, webSnapshot, map[string]string{
		"pods[0].metadata.managedFields": `5`,
		"pods[0].metadata.lables":        `{"a":"b"}`,
	}))
	code, out, errs := run(t, "", "reconcile", "-f", typo, "--validate=strict")
	if code != ExitUsage || out != "" || !strings.Contains(errs, "pods[0].metadata.lables: unknown field; did you mean labels?") {
		t.Errorf("--validate=strict: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	want := "Warning: " + typo + ": pods[0].metadata.lables: unknown field; did you mean labels?\n"
	if code, _, errs := run(t, "", "reconcile", "-f", typo, "-o", "json"); code != ExitOK || errs != want {
		t.Errorf("default (warn): exit %d, stderr %q; want 0 and %q", code, errs, want)
	}
}

// A manifest's set is named by its metadata without its unknown fields: encoding/json took a misspelt
// "Name" given after name for the name -n and statefulset/NAME are checked against.
func TestManifestNameNotAMisspeltOne(t *testing.T) {
	b, err := os.ReadFile("../../examples/rolling-update-next.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	m := writeTemp(t, "web.json", []byte(strings.Replace(string(j), `"name":"web"`, `"name":"web","Name":"evil"`, 1)))
	if !strings.Contains(string(j), `"metadata":{"labels":{"app":"web"},"name":"web"`) {
		t.Fatalf("the manifest's metadata is not as this test edits it: %s", j)
	}
	if code, _, errs := run(t, "", "replay", m, "statefulset/web", "--validate=ignore"); code != ExitOK {
		t.Errorf("replay statefulset/web: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "", "replay", m, "statefulset/evil", "--validate=ignore"); code != ExitUsage || !strings.Contains(errs, "the manifest's StatefulSet is default/web, not statefulset/evil") {
		t.Errorf("replay statefulset/evil: exit %d, stderr %q", code, errs)
	}
}

// A misspelt member of a snapshot itself is an error from every command, whatever --validate says: it was
// "the snapshot's StatefulSet is /" or the module's "no statefulSet".
func TestSnapshotEnvelopeUnknownFields(t *testing.T) {
	b, _ := os.ReadFile(webSnapshot)
	typo := writeTemp(t, "typo.json", []byte(strings.Replace(string(b), `"statefulSet"`, `"statefullSet"`, 1)))
	want := "ordinal: " + typo + ": statefullSet: unknown field; did you mean statefulSet?\n"
	for _, args := range [][]string{
		{"reconcile", "-f", typo, "-n", "default", "statefulset/web"},
		{"reconcile", "-f", typo, "--validate=ignore"},
		{"replay", typo},
		{"preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", typo},
	} {
		if code, out, errs := run(t, "", args...); code != ExitUsage || out != "" || errs != want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", args, code, out, errs, want)
		}
	}
}

// A kubectl List's objects are Kubernetes objects: by their paths in the List.
func TestListUnknownFields(t *testing.T) {
	var s struct {
		StatefulSet json.RawMessage
		Pods        []json.RawMessage
	}
	b, _ := os.ReadFile(webSnapshot)
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	items := []json.RawMessage{s.StatefulSet}
	for i, p := range s.Pods {
		if i == 1 {
			p = json.RawMessage(strings.Replace(string(p), `"hostname"`, `"hostnme"`, 1))
			if !strings.Contains(string(p), "hostnme") {
				t.Fatal("the pod has no hostname to misspell")
			}
		}
		items = append(items, json.RawMessage(`{"apiVersion":"v1","kind":"Pod",`+string(p)[1:]))
	}
	list, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	f := writeTemp(t, "list.json", list)
	code, _, errs := run(t, "", "reconcile", "-f", f)
	if want := "Warning: " + f + ": items[2].spec.hostnme: unknown field; did you mean hostname?\n"; code != ExitOK || errs != want {
		t.Errorf("exit %d, stderr %q; want %q", code, errs, want)
	}
	if code, _, errs := run(t, "", "reconcile", "-f", f, "--validate=strict"); code != ExitUsage || !strings.Contains(errs, "items[2].spec.hostnme: unknown field") {
		t.Errorf("--validate=strict: exit %d, stderr %q", code, errs)
	}
}

// A scenario's own keys are errors; its Kubernetes objects' are --validate's; the same from replay,
// preview --scenario and ordinal test.
func TestScenarioUnknownFields(t *testing.T) {
	b, err := os.ReadFile("../../examples/rolling-update.yaml")
	if err != nil {
		t.Fatal(err)
	}
	own := writeTemp(t, "own.yaml", []byte(strings.Replace(string(b), "\nevents:", "\nevnts:", 1)))
	for _, args := range [][]string{{"replay", own, "--validate=ignore"}, {"preview", "-f", "../../examples/rolling-update-next.yaml", "--scenario", own}} {
		if code, _, errs := run(t, "", args...); code != ExitUsage || errs != "ordinal: "+own+": evnts: unknown field; did you mean events?\n" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if code, _, errs := run(t, string(b[:strings.Index(string(b), "events:")])+"evnts: []\n", "replay", "-"); code != ExitUsage || errs != "ordinal: scenario on standard input: evnts: unknown field; did you mean events?\n" {
		t.Errorf("replay -: exit %d, stderr %q", code, errs)
	}

	obj := writeTemp(t, "obj.yaml", []byte(strings.Replace(string(b), "      serviceName: web\n", "      serviceName: web\n      podManagmentPolicy: Parallel\n", 1)))
	warning := "Warning: " + obj + ": manifests[0].spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?\n"
	code, out, errs := run(t, "", "replay", obj, "-o", "json")
	if code != ExitOK || errs != warning || !json.Valid([]byte(out)) {
		t.Errorf("replay (warn): exit %d, stderr %q", code, errs)
	}
	if strings.Contains(out, "podManagmentPolicy") {
		t.Errorf("the misspelt field reached the world")
	}
	if code, _, errs := run(t, "", "replay", obj, "--validate=ignore"); code != ExitOK || errs != "" {
		t.Errorf("replay --validate=ignore: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "", "replay", obj, "--validate=strict"); code != ExitUsage || !strings.HasPrefix(errs, "ordinal: "+obj+": manifests[0].spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?\n") {
		t.Errorf("replay --validate=strict: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "", "preview", "-f", "../../examples/rolling-update-next.yaml", "--scenario", obj); code != ExitOK || errs != warning {
		t.Errorf("preview --scenario: exit %d, stderr %q", code, errs)
	}
}

// A manifest: preview -f, a manifest replayed as its creation, a test's edit, kubectl ordinal preview -f.
func TestManifestUnknownFields(t *testing.T) {
	b, err := os.ReadFile("../../examples/rolling-update-next.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := writeTemp(t, "web.yaml", []byte(strings.Replace(string(b), "  serviceName: web\n", "  serviceName: web\n  podManagmentPolicy: Parallel\n", 1)))
	warning := "Warning: " + m + ": spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?\n"
	code, out, errs := run(t, "", "preview", "-f", m, "--scenario", "../../examples/rolling-update.yaml", "-o", "json")
	if code != ExitOK || errs != warning || !json.Valid([]byte(out)) {
		t.Errorf("preview -f (warn): exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "", "preview", "-f", m, "--scenario", "../../examples/rolling-update.yaml", "--validate=strict"); code != ExitUsage || !strings.HasPrefix(errs, "ordinal: "+m+": spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?\n") {
		t.Errorf("preview -f --validate=strict: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, string(b), "preview", "-f", "-", "--scenario", "../../examples/rolling-update.yaml", "--validate=ignore"); code != ExitOK || errs != "" {
		t.Errorf("preview -f - --validate=ignore: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "", "replay", m); code != ExitOK || errs != warning {
		t.Errorf("replay MANIFEST: exit %d, stderr %q", code, errs)
	}

	// kubectl ordinal preview -f: refused under strict before the cluster is asked; named under warn.
	kc := kubeconfigFor(t, "http://"+closedPort(t))
	if code, _, errs := plug("preview", "-f", m, "--kubeconfig", kc, "--validate=strict"); code != ExitUsage || !strings.HasPrefix(errs, "error: "+m+": spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?\n") {
		t.Errorf("kubectl ordinal preview --validate=strict: exit %d, stderr %q", code, errs)
	}
	if _, _, errs := plug("preview", "-f", m, "--kubeconfig", kc); !strings.HasPrefix(errs, warning) {
		t.Errorf("kubectl ordinal preview: stderr %q, want it to start with %q", errs, warning)
	}
}

// An `ordinal test` file's own keys are errors; its edits are manifests.
func TestTestFileUnknownFields(t *testing.T) {
	abs, _ := filepath.Abs("../../testdata/scenarios/rolling-update.yaml")
	own := writeTemp(t, "own.test.yaml", []byte("tests:\n  - name: x\n    scenaro: "+abs+"\n    expect: {outcom: complete}\n"))
	want := "ordinal: " + own + ": 2 unknown fields:\n  tests[0].expect.outcom: unknown field; did you mean outcome?\n  tests[0].scenaro: unknown field; did you mean scenario?\n"
	if code, _, errs := run(t, "", "test", own, "--validate=ignore"); code != ExitUsage || errs != want {
		t.Errorf("exit %d, stderr %q; want %q", code, errs, want)
	}
	b, _ := os.ReadFile("../../examples/rolling-update-next.yaml")
	dir := t.TempDir()
	edit := filepath.Join(dir, "edit.yaml")
	os.WriteFile(edit, []byte(strings.Replace(string(b), "  serviceName: web\n", "  serviceName: web\n  podManagmentPolicy: Parallel\n", 1)), 0o644)
	abs, _ = filepath.Abs("../../examples/rolling-update.yaml")
	tf := filepath.Join(dir, "edit.test.yaml")
	os.WriteFile(tf, []byte("tests:\n  - name: x\n    scenario: "+abs+"\n    edit: edit.yaml\n    expect: {outcome: complete}\n"), 0o644)
	if code, _, errs := run(t, "", "test", tf); code != ExitOK || errs != "Warning: "+edit+": spec.podManagmentPolicy: unknown field; did you mean podManagementPolicy?\n" {
		t.Errorf("a test's edit: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "", "test", tf, "--validate=strict"); code != ExitUsage || !strings.Contains(errs, "spec.podManagmentPolicy: unknown field") {
		t.Errorf("a test's edit under strict: exit %d, stderr %q", code, errs)
	}
}

// No false positives: every snapshot, List (each of its sets), manifest, scenario and test file committed to the repository
// (examples, testdata, the conformance cases, every package's testdata) reads without an unknown field,
// through the same readers the commands use, under --validate=strict; and so does every Pod, claim,
// ControllerRevision and budget among them. Each format must be found: a sweep that finds none fails.
func TestNoUnknownFieldsInCommittedFiles(t *testing.T) {
	strict := fieldValidation{mode: validateStrict}
	found := map[string]int{}
	root := "../.."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch rel {
			case ".git", "scripts", "build", "bin", "node_modules", "examples/node-host/node_modules",
				"host/kube/testdata/apiserver-defaults": // {kind, input, answer}: host/kube's TestUnknownFieldsNoneInWhatKubeAPIServerStored
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".plan.json") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".test.yaml") {
			found["test file"]++
			if _, err := readTestFile(p); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
			return nil
		}
		in := recognise(b, replay.MaxScenarioBytes)
		switch in.kind {
		case inputSnapshot, inputList:
			found[string(in.kind)]++
			for _, choice := range listSetChoices(in.json) { // a List of several sets: each of them
				if _, err := snapshotInput(in, rel, choice, strict); err != nil {
					t.Errorf("%s: %v", rel, err)
				}
			}
		case inputManifest:
			found[string(in.kind)]++
			if _, err := strict.manifest(in.json, rel, "StatefulSet"); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		case inputScenario:
			found[string(in.kind)]++
			sc, err := replay.ParseScenario(b)
			if err == nil {
				err = strict.report(rel, sc.UnknownFields)
			}
			if err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		default:
			if in.json == nil {
				return nil
			}
			var tm struct{ Kind string }
			_ = json.Unmarshal(in.json, &tm)
			switch tm.Kind {
			case "Pod", "PersistentVolumeClaim", "ControllerRevision", "PodDisruptionBudget", "Node":
				found["a "+tm.Kind]++
				if us := kube.UnknownFields(tm.Kind, in.json); len(us) > 0 {
					t.Errorf("%s: %v", rel, us)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read without an unknown field: %v", found)
	for _, f := range []string{string(inputSnapshot), string(inputManifest), string(inputScenario), "test file", "a Pod", "a PersistentVolumeClaim"} {
		if found[f] == 0 {
			t.Errorf("no %s found in the repository: the sweep is looking in the wrong places", f)
		}
	}
}

// listSetChoices is a choice of each StatefulSet a List holds (namespace and name, as -n and statefulset/NAME
// pick it), or the one empty choice for a document that is not a List of several.
func listSetChoices(doc []byte) []setChoice {
	var l struct {
		Items []struct {
			Kind     string                           `json:"kind"`
			Metadata struct{ Namespace, Name string } `json:"metadata"`
		} `json:"items"`
	}
	var out []setChoice
	if json.Unmarshal(doc, &l) == nil {
		for _, it := range l.Items {
			if it.Kind == "StatefulSet" {
				out = append(out, setChoice{namespace: it.Metadata.Namespace, name: it.Metadata.Name})
			}
		}
	}
	if len(out) < 2 {
		return []setChoice{{}}
	}
	return out
}

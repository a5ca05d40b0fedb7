package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Every command, given a snapshot, a StatefulSet manifest, a scenario or a kubectl List, in YAML or in
// JSON, either takes it or says which command does.
func TestInputsAreRecognised(t *testing.T) {
	dir := t.TempDir()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	snapshot := read("../../examples/ci/web.snapshot.json")
	var s map[string]json.RawMessage
	json.Unmarshal(snapshot, &s)
	items := []map[string]any{}
	add := func(raw json.RawMessage, kind, apiVersion string) {
		var o map[string]any
		json.Unmarshal(raw, &o)
		o["kind"], o["apiVersion"] = kind, apiVersion
		items = append(items, o)
	}
	add(s["statefulSet"], "StatefulSet", "apps/v1")
	for key, k := range map[string][2]string{"pods": {"Pod", "v1"}, "revisions": {"ControllerRevision", "apps/v1"}, "claims": {"PersistentVolumeClaim", "v1"}} {
		var l []json.RawMessage
		json.Unmarshal(s[key], &l)
		for _, o := range l {
			add(o, k[0], k[1])
		}
	}
	list, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	docs := map[string][]byte{
		"snapshot": snapshot,
		"manifest": read("../../examples/ci/web-new-image.yaml"),
		"scenario": read("../../testdata/scenarios/rolling-update.yaml"),
		"list":     list,
	}
	files := map[string]string{}
	for name, js := range docs {
		y, err := yaml.JSONToYAML(js)
		if err != nil {
			t.Fatal(err)
		}
		files[name+".json"] = filepath.Join(dir, name+".json")
		files[name+".yaml"] = filepath.Join(dir, name+".yaml")
		os.WriteFile(files[name+".json"], js, 0o644)
		os.WriteFile(files[name+".yaml"], y, 0o644)
	}
	manifest := files["manifest.yaml"]
	for _, format := range []string{"json", "yaml"} {
		f := func(name string) string { return files[name+"."+format] }
		for _, tc := range []struct {
			args []string
			want int    // exit code
			says string // on stderr, for a refusal: the command that takes it
		}{
			{[]string{"reconcile", "-f", f("snapshot")}, ExitOK, ""},
			{[]string{"reconcile", "-f", f("list")}, ExitOK, ""},
			{[]string{"reconcile", "-f", f("manifest")}, ExitUsage, "is a StatefulSet manifest, not a snapshot: `ordinal preview -f"},
			{[]string{"reconcile", "-f", f("scenario")}, ExitUsage, "is a replay scenario, not a snapshot: `ordinal replay"},
			{[]string{"replay", f("scenario")}, ExitOK, ""},
			{[]string{"replay", f("snapshot")}, ExitOK, ""},
			{[]string{"replay", f("list")}, ExitOK, ""},
			{[]string{"replay", f("manifest")}, ExitOK, ""},
			{[]string{"preview", "-f", f("manifest"), "--from", f("snapshot")}, ExitOK, ""},
			{[]string{"preview", "-f", f("manifest"), "--from", f("list")}, ExitOK, ""},
			{[]string{"preview", "-f", manifest, "--from", f("manifest")}, ExitUsage, "is a StatefulSet manifest, not a snapshot"},
			{[]string{"preview", "-f", manifest, "--from", f("scenario")}, ExitUsage, "`ordinal preview -f EDITED --scenario"},
			{[]string{"preview", "-f", f("snapshot"), "--from", f("snapshot")}, ExitUsage, "is a snapshot, not a StatefulSet manifest (-f)"},
			{[]string{"preview", "-f", f("list"), "--from", f("snapshot")}, ExitUsage, "`ordinal preview --from"},
			{[]string{"preview", "-f", f("scenario"), "--from", f("snapshot")}, ExitUsage, "is a replay scenario, not a StatefulSet manifest"},
		} {
			code, _, errs := run(t, "", tc.args...)
			if code != tc.want || !strings.Contains(errs, tc.says) {
				t.Errorf("%s: exit %d (want %d), stderr %q should say %q", strings.Join(tc.args, " "), code, tc.want, errs, tc.says)
			}
		}
	}
}

// Documents that are none of the four, or several in one file, are refused with what is wrong, never
// cut to their first document; standard input works for every reader, once per command.
func TestInputsThatAreRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	newImage, _ := os.ReadFile("../../examples/ci/web-new-image.yaml")
	scaleDown, _ := os.ReadFile("../../examples/ci/web-scale-down.yaml")
	service := "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {clusterIP: None, selector: {app: web}}\n"
	twoSets := write("two.yaml", string(newImage)+"\n---\n"+string(scaleDown))
	svcFirst := write("svc-first.yaml", service+"---\n"+string(scaleDown))
	snap := "../../examples/ci/web.snapshot.json"
	scenario, _ := os.ReadFile("../../testdata/scenarios/rolling-update.yaml")
	for _, tc := range []struct {
		args  []string
		stdin string
		want  int
		says  string
	}{
		{[]string{"preview", "-f", twoSets, "--from", snap}, "", ExitUsage, "holds 2 YAML documents, 2 of them StatefulSets"},
		{[]string{"replay", twoSets}, "", ExitUsage, "holds 2 YAML documents"},
		// kubectl apply -f's layout: the one StatefulSet is the manifest (here: a scale-down deleting claims)
		{[]string{"preview", "-f", svcFirst, "--from", snap, "--fail-on", "data-loss"}, "", ExitFailOn, "ClaimsDeleted"},
		{[]string{"reconcile", "-f", write("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")}, "", ExitUsage, "is a Deployment, not a snapshot"},
		{[]string{"reconcile", "-f", write("broken.yaml", "abi: 1\nnow: x\n  statefulSet: {\n")}, "", ExitUsage, "yaml: line"},
		{[]string{"reconcile", "-f", write("empty.yaml", "# nothing\n")}, "", ExitUsage, "empty"},
		{[]string{"replay", write("bad-name.yaml", strings.Replace(string(scenario), "name: web", "name: Web_1", 1))}, "", ExitUsage, `metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain`},
		{[]string{"replay", "-"}, string(scenario), ExitOK, ""},
		{[]string{"replay", write("dup.json", `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"replicas":5,"replicas":2,"serviceName":"web","selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`)}, "", ExitUsage, `duplicate field "spec.replicas"`},
		{[]string{"preview", "-f", "-", "--from", snap}, string(newImage), ExitOK, ""},
		{[]string{"preview", "-f", "-", "--from", "-"}, string(newImage), ExitUsage, "only one of -f, --from and --scenario can be -"},
		{[]string{"preview", "-f", "../../examples/ci/web-scale-down.yaml", "--from", snap, "--fail-on", ""}, "", ExitUsage, "--fail-on is empty"},
		{[]string{"preview", "-f", "../../examples/ci/web-scale-down.yaml", "--from", snap, "--fail-on", "none,data-loss"}, "", ExitUsage, "none excludes"},
	} {
		code, _, errs := run(t, tc.stdin, tc.args...)
		if code != tc.want || !strings.Contains(errs, tc.says) {
			t.Errorf("%s: exit %d (want %d), stderr %q should say %q", strings.Join(tc.args, " "), code, tc.want, errs, tc.says)
		}
	}
}

// Issue 32, finding 8: a key given twice was refused in JSON but silently last-wins in YAML (`metadata`
// twice: the preview went on with the second name). Every YAML input (a manifest, a scenario, a snapshot,
// a stream's StatefulSet, standard input, an `ordinal test` file and its edit) is read by the one strict
// reader, which names the key and its line in the file.
func TestYAMLDuplicateKeysRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	snap := "../../examples/ci/web.snapshot.json"
	manifest := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nmetadata: {name: evil}\nspec: {replicas: 2}\n"
	scenario, _ := os.ReadFile("../../testdata/scenarios/rolling-update.yaml")
	dupScenario := strings.Replace(string(scenario), "name: ", "name: again\nname: ", 1)
	js, _ := os.ReadFile(snap)
	snapYAML, err := yaml.JSONToYAML(js)
	if err != nil {
		t.Fatal(err)
	}
	scenarioFile, _ := filepath.Abs("../../testdata/scenarios/rolling-update.yaml")
	edit := write("edit.yaml", manifest)
	for _, tc := range []struct {
		args  []string
		stdin string
		says  string
	}{
		{[]string{"preview", "-f", write("m.yaml", manifest), "--from", snap}, "", `m.yaml: yaml: line 4: key "metadata" already set in map`},
		{[]string{"preview", "-f", "-", "--from", snap}, manifest, `line 4: key "metadata"`},
		{[]string{"replay", write("m2.yaml", manifest)}, "", `line 4: key "metadata"`},
		{[]string{"replay", write("s.yaml", dupScenario)}, "", `s.yaml: yaml: line 2: key "name" already set in map`},
		{[]string{"replay", "-"}, dupScenario, `line 2: key "name"`},
		{[]string{"reconcile", "-f", write("snap.yaml", string(snapYAML)+"abi: 1\n")}, "", `key "abi" already set in map`},
		// the line is the file's, in the stream's second document too
		{[]string{"preview", "-f", write("stream.yaml", "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\n"+manifest), "--from", snap}, "", `stream.yaml: yaml: line 9: key "metadata"`},
		{[]string{"test", write("t.yaml", "tests:\n  - name: x\n    name: y\n    scenario: "+scenarioFile+"\n")}, "", `t.yaml: yaml: line 3: key "name" already set in map`},
		{[]string{"test", write("t2.yaml", "tests:\n  - name: x\n    scenario: "+scenarioFile+"\n    edit: "+edit+"\n")}, "", `line 4: key "metadata"`},
	} {
		code, _, errs := run(t, tc.stdin, tc.args...)
		if code != ExitUsage || !strings.Contains(errs, tc.says) {
			t.Errorf("%s: exit %d (want %d), stderr %q should say %q", strings.Join(tc.args, " "), code, ExitUsage, errs, tc.says)
		}
	}
}

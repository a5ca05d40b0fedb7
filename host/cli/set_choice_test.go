package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -n and statefulset/NAME pick one set of a List holding the same set in two namespaces (kubectl get
// ... -A -o yaml), and must name a snapshot's or a manifest's own set; scenarios name their own objects.
func TestNamespaceChoosesTheSet(t *testing.T) {
	b, err := os.ReadFile("../../examples/ci/web.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	add := func(raw json.RawMessage, kind, apiVersion string) {
		for _, ns := range []string{"default", "other"} {
			var o map[string]any
			if err := json.Unmarshal(raw, &o); err != nil {
				t.Fatal(err)
			}
			o["kind"], o["apiVersion"] = kind, apiVersion
			o["metadata"].(map[string]any)["namespace"] = ns
			items = append(items, o)
		}
	}
	add(s["statefulSet"], "StatefulSet", "apps/v1")
	var pods []json.RawMessage
	if err := json.Unmarshal(s["pods"], &pods); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		add(p, "Pod", "v1")
	}
	var revs []json.RawMessage
	if err := json.Unmarshal(s["revisions"], &revs); err != nil {
		t.Fatal(err)
	}
	for _, r := range revs {
		add(r, "ControllerRevision", "apps/v1")
	}
	list, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	dir := t.TempDir()
	listFile := filepath.Join(dir, "list.json")
	if err := os.WriteFile(listFile, list, 0o644); err != nil {
		t.Fatal(err)
	}
	snapFile := "../../examples/ci/web.snapshot.json"
	noSet := filepath.Join(dir, "no-set.json") // JSON, but no snapshot: it read as "the snapshot's StatefulSet is /"
	if err := os.WriteFile(noSet, []byte(`{"abi":1,"pods":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := "../../examples/ci/web-new-image.yaml" // namespace default
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"reconcile", "-f", listFile}, 1, "the List holds 2 StatefulSets (default/web, other/web); a snapshot is about exactly one: " +
			"name it after the file, e.g. `statefulset/web -n default`"}, // the choice it names works, below
		{[]string{"reconcile", "-f", listFile, "-n", "other"}, 0, "StatefulSet other/web"},
		{[]string{"reconcile", "-f", listFile, "statefulset/web", "--namespace", "default"}, 0, "StatefulSet default/web"},
		{[]string{"reconcile", "-f", listFile, "-n", "nope"}, 1, "the List holds no StatefulSet in namespace nope (it holds 2: default/web, other/web)"},
		{[]string{"reconcile", "-f", listFile, "sts/db", "-n", "other"}, 1, "no StatefulSet statefulset/db in namespace other"},
		{[]string{"reconcile", "-f", snapFile, "-n", "other"}, 1, "the snapshot's StatefulSet is default/web, not in namespace other"},
		{[]string{"reconcile", "-f", snapFile, "web", "-n", "default"}, 0, "StatefulSet default/web"},
		{[]string{"reconcile", "-f", snapFile, "deployment/web"}, 1, "want statefulset/NAME"},
		{[]string{"replay", listFile, "-n", "other"}, 0, "replay other/web"},
		{[]string{"replay", manifest, "-n", "other"}, 1, "the manifest's StatefulSet is default/web, not in namespace other"},
		{[]string{"replay", "../../testdata/scenarios/rolling-update.yaml", "-n", "x"}, 1, "a scenario names its own objects"},
		{[]string{"preview", "-f", manifest, "--from", listFile}, 0, "preview: StatefulSet web"},
		{[]string{"preview", "-f", manifest, "--from", listFile, "-n", "other"}, 1, `namespace "default" does not match -n "other"`},
		{[]string{"preview", "-f", manifest, "--from", noSet}, 1, noSet + `: it names no StatefulSet (a snapshot has a "statefulSet" with a metadata.name), so it is no snapshot of statefulset/web`},
		{[]string{"reconcile", "-f", noSet, "statefulset/web"}, 1, "it names no StatefulSet"},
	} {
		code, out, errs := run(t, "", c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("%s: exit %d, want %d with %q\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, firstN(out, 600), errs)
		}
	}
}

func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// A List holding an apps/v1 and an ordinal.dev/v1 StatefulSet of the same name: the argument's kind picks
// one (osts/web, statefulset/web), a bare name picks neither; the ordinal.dev set's snapshot is its kind's.
func TestSetArgumentKindChoosesTheSet(t *testing.T) {
	b, err := os.ReadFile("../../examples/ci/web.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	for _, apiVersion := range []string{"apps/v1", "ordinal.dev/v1"} {
		var o map[string]any
		if err := json.Unmarshal(s["statefulSet"], &o); err != nil {
			t.Fatal(err)
		}
		o["kind"], o["apiVersion"] = "StatefulSet", apiVersion
		items = append(items, o)
	}
	list, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	listFile := filepath.Join(t.TempDir(), "list.json")
	if err := os.WriteFile(listFile, list, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg        string
		code       int
		want, lack string
	}{
		{"web", 1, "the List holds 2 StatefulSets (default/web, StatefulSet.ordinal.dev default/web); a snapshot is about exactly one: " +
			"name it after the file, e.g. `statefulset/web -n default`", ""},
		{"osts/web", 0, `"apiVersion":"ordinal.dev/v1"`, ""},
		{"statefulsets.ordinal.dev/web", 0, `"apiVersion":"ordinal.dev/v1"`, ""},
		{"statefulset/web", 0, `"apiVersion":"apps/v1"`, "ordinal.dev/v1"},
	} {
		code, out, errs := run(t, "", "reconcile", "-f", listFile, c.arg, "-o", "json")
		if code == 0 {
			// the plan's owner references name the set's kind
			out = strings.ReplaceAll(out, " ", "")
		}
		if code != c.code || !strings.Contains(out+errs, c.want) || (c.lack != "" && strings.Contains(out, c.lack)) {
			t.Errorf("reconcile %s: exit %d, want %d with %q\n%s%s", c.arg, code, c.code, c.want, firstN(out, 600), errs)
		}
	}
}

// -n, statefulset/NAME and the text output read the snapshot's set as the module reads it: each key as
// spelt (encoding/json would take "Name" for name), the last of a key given twice (encoding/json would merge
// two metadata objects), no namespace as "default".
func TestSnapshotSetReadAsTheModuleReadsIt(t *testing.T) {
	b, err := os.ReadFile("../../examples/ci/web.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	var s, set map[string]json.RawMessage
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(s["statefulSet"], &set); err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(set["metadata"], &meta); err != nil {
		t.Fatal(err)
	}
	delete(meta, "namespace") // default, to the module
	m, _ := json.Marshal(meta)
	dir := t.TempDir()
	write := func(name, metadata string) string {
		doc := `{"apiVersion":"apps/v1","kind":"StatefulSet",` + metadata + `,"spec":` + string(set["spec"]) + `,"status":` + string(set["status"]) + `}`
		s["statefulSet"] = json.RawMessage(doc)
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	twice := write("twice.json", `"metadata":{"namespace":"prod","name":"web"},"metadata":`+string(m))
	// "Name" beside a value of the wrong type the module does not read: an unknown field, dropped, and were
	// it not, the set's reading takes name as spelt (TestSnapshotFileSetMeta)
	folded := write("folded.json", `"metadata":`+strings.TrimSuffix(string(m), "}")+`,"managedFields":5,"Name":"evil"}`)
	noNamespace := write("no-namespace.json", `"metadata":`+string(m))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"reconcile", "-f", twice, "-n", "prod"}, 1, "the snapshot's StatefulSet is default/web, not in namespace prod"},
		{[]string{"reconcile", "-f", twice, "-n", "default"}, 0, "StatefulSet default/web: 0 writes"},
		{[]string{"reconcile", "-f", folded, "statefulset/evil"}, 1, "the snapshot's StatefulSet is default/web, not statefulset/evil"},
		{[]string{"reconcile", "-f", folded, "statefulset/web"}, 0, "StatefulSet default/web: 0 writes"},
		{[]string{"reconcile", "-f", noNamespace, "-n", "default"}, 0, "StatefulSet default/web: 0 writes"},
	} {
		code, out, errs := run(t, "", c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("%s: exit %d, want %d with %q\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, firstN(out, 600), errs)
		}
	}
	// the status the text output compares the plan's with: the last one given, not two merged
	f := readSnapshotFile([]byte(`{"statefulSet":{"status":{"replicas":1,"readyReplicas":1},"Status":{},"status":{"replicas":3}}}`))
	if got := fmt.Sprint(f.setStatus()); got != "map[replicas:3]" {
		t.Errorf("status given twice: %s, want map[replicas:3]", got)
	}
}

// setMeta reads keys as spelt and the last of each: "Name" is not name, the second metadata replaces the first.
func TestSnapshotFileSetMeta(t *testing.T) {
	for doc, want := range map[string]string{
		`{"statefulSet":{"apiVersion":"apps/v1","metadata":{"name":"web","Name":"evil","namespace":"a"}}}`: "apps/v1 a web",
		`{"statefulSet":{"metadata":{"namespace":"prod","name":"web"},"metadata":{"name":"db"}}}`:          " default db",
		`{"statefulSet":{"metadata":{"name":5}}}`:                                                          " default ",
		`{"statefulSet":[]}`: "  ",
		`{"statefulSet":{"metadata":{"name":"a"}},"statefulSet":{"apiVersion":"ordinal.dev/v1","metadata":{"name":"b"}}}`: "ordinal.dev/v1 default b",
	} {
		a, ns, n := readSnapshotFile([]byte(doc)).setMeta()
		if got := a + " " + ns + " " + n; got != want {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
}

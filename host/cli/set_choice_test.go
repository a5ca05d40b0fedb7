package cli

import (
	"encoding/json"
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
	manifest := "../../examples/ci/web-new-image.yaml" // namespace default
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"reconcile", "-f", listFile}, 1, "the List holds 2 StatefulSets (default/web, other/web)"},
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

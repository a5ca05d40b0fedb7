package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/module"
)

// hostile is text a module, a policy or the cluster chose: an OSC title, a screen clear, a bell, a C1
// control and a bidi override.
const hostile = "\x1b]0;pwned\x07\x1b[2J\u0085\u202eevil"

// noRawEscapes fails when out carries any of hostile's characters raw.
func noRawEscapes(t *testing.T, what, out string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07\u0085\u202e") {
		t.Errorf("%s prints a module's control characters raw:\n%q", what, out)
	}
}

// `ordinal version --controller` prints the running controller's module and last refusal, which are a
// module's describe and error text: escaped as every other text output is, in text and in -o json.
func TestVersionControllerEscapesTheModulesText(t *testing.T) {
	st := module.SwapStatus{
		Active:      module.Info{Digest: "sha256:ab", Source: "configmap:" + hostile, Describe: abi.Describe{ABI: 1, Module: "m" + hostile, ModuleVersion: "v" + hostile, KubernetesVersion: "v1.37.0"}},
		Refusals:    1,
		LastRefusal: &module.RefusalInfo{Source: "file:x", Digest: "sha256:cd", Reason: module.RefusedLoad, Detail: "trapped: " + hostile},
	}
	body, _ := json.Marshal(st)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	t.Cleanup(srv.Close)
	for _, format := range []string{"text", "json"} {
		code, out, errOut := run(t, "", "version", "--controller", srv.URL, "-o", format)
		if code != 0 {
			t.Fatalf("-o %s: exit %d: %s", format, code, errOut)
		}
		noRawEscapes(t, "version --controller -o "+format, out)
		if format == "text" && (!strings.Contains(out, `trapped: \x1b]0;pwned\x07\x1b[2J\u0085\u202eevil`) || !strings.Contains(out, `module:      m\x1b]0;pwned`)) {
			t.Errorf("the escaped text is not shown:\n%s", out)
		}
		if format == "json" {
			var got module.SwapStatus
			if err := json.Unmarshal([]byte(out), &got); err != nil || got.LastRefusal == nil || got.LastRefusal.Detail != st.LastRefusal.Detail || got.Active.Describe.Module != st.Active.Describe.Module {
				t.Errorf("-o json is not the same value escaped: %v\n%s", err, out)
			}
		}
	}
}

// migrate's progress lines carry the cluster's text: a custom set's status revisions (which no schema
// bounds) reach its notes through revisionDiff. Each line is escaped.
func TestMigrateSaysTheClustersTextEscaped(t *testing.T) {
	var out strings.Builder
	r := &migrateRun{out: &out}
	d := revisionDiff(map[string]any{"updateRevision": "web-1"}, map[string]any{"status": map[string]any{"updateRevision": "web-" + hostile}})
	if d == "" {
		t.Fatal("revisionDiff says nothing of a differing updateRevision")
	}
	r.say("warning: %s", d)
	noRawEscapes(t, "migrate", out.String())
	if !strings.Contains(out.String(), `\x1b]0;pwned`) {
		t.Errorf("the revision is not shown escaped: %q", out.String())
	}
}

// `kubectl ordinal snapshot` in text prints the set's status revisions and its pods' phases as the API
// server answered them (a custom set's status is not bounded by any schema): escaped.
func TestPluginSnapshotTextEscapesTheClustersText(t *testing.T) {
	set := `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"default","uid":"u-web","resourceVersion":"5","generation":1},
"spec":{"replicas":1,"serviceName":"web","selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"x"}]}}},
"status":{"replicas":1,"currentRevision":"web-` + jsonText(hostile) + `","updateRevision":"web-1"}}`
	pods := `{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"web-0","namespace":"default","uid":"u-p0","labels":{"app":"web"},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"u-web","controller":true}]},"spec":{"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Run` + jsonText(hostile) + `"}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case p == "/version":
			_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.1"}`))
		case strings.HasSuffix(p, "/statefulsets/web"):
			_, _ = w.Write([]byte(set))
		case strings.HasSuffix(p, "/pods"):
			_, _ = w.Write([]byte(pods))
		case strings.HasSuffix(p, "/controllerrevisions"):
			_, _ = w.Write([]byte(`{"apiVersion":"apps/v1","kind":"ControllerRevisionList","metadata":{"resourceVersion":"5"},"items":[]}`))
		case strings.HasSuffix(p, "/persistentvolumeclaims"):
			_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"PersistentVolumeClaimList","metadata":{"resourceVersion":"5"},"items":[]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	code, out, errOut := plug("snapshot", "statefulset/web", "-n", "default", "-o", "text", "--kubeconfig", kubeconfigFor(t, srv.URL))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	noRawEscapes(t, "kubectl ordinal snapshot", out)
	if !strings.Contains(out, `currentRevision web-\x1b]0;pwned`) || !strings.Contains(out, `Run\x1b]0;pwned`) {
		t.Errorf("the set's and the pod's text are not shown escaped:\n%s", out)
	}
}

// jsonText is s as the inside of a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

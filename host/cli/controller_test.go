package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

func TestParseSetArg(t *testing.T) {
	for in, want := range map[string]struct {
		target snapshot.Target
		name   string
	}{
		"statefulset/web": {snapshot.StatefulSetTarget, "web"}, "sts/web": {snapshot.StatefulSetTarget, "web"},
		"statefulsets.apps/db": {snapshot.StatefulSetTarget, "db"}, "web": {snapshot.StatefulSetTarget, "web"},
		"statefulsets.ordinal.dev/db": {snapshot.CRDTarget, "db"}, "StatefulSet.ordinal.dev/db": {snapshot.CRDTarget, "db"},
		"osts/web": {snapshot.CRDTarget, "web"},
	} {
		if target, got, err := parseSetArg(in); err != nil || got != want.name || target != want.target {
			t.Errorf("parseSetArg(%q) = %s %q, %v; want %s %q", in, target, got, err, want.target, want.name)
		}
	}
	for _, in := range []string{"deployment/web", "statefulset/", "osts/", "statefulsets.example.com/web", "",
		"osts/a/b", "osts/web/status", "osts/..", "osts/../../../api/v1/namespaces/kube-system/secrets/x", "osts/WEB", "osts/web name", "sts/web/status"} {
		if _, _, err := parseSetArg(in); err == nil {
			t.Errorf("parseSetArg(%q): want an error", in)
		}
	}
	// a kind it does not take is answered with both kinds' short names, osts/NAME as the guides write it
	if _, _, err := parseSetArg("pods/web"); err == nil || err.Error() != `want statefulset/NAME (apps/v1) or osts/NAME (statefulsets.ordinal.dev), got "pods/web"` {
		t.Errorf("parseSetArg(pods/web): %v", err)
	}
}

func TestParseFeatureGates(t *testing.T) {
	g, err := parseFeatureGates("MaxUnavailableStatefulSet=false, StatefulSetRecreateStrategy=true")
	if err != nil || g["MaxUnavailableStatefulSet"] || !g["StatefulSetRecreateStrategy"] || len(g) != 2 {
		t.Fatalf("%v %v", g, err)
	}
	if g, err := parseFeatureGates(""); err != nil || g != nil {
		t.Fatalf("empty: %v %v", g, err)
	}
	for _, bad := range []string{"X", "X=maybe"} {
		if _, err := parseFeatureGates(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestControllerAndSnapshotHelp(t *testing.T) {
	for _, args := range [][]string{{"controller", "--help"}, {"snapshot", "--help"}} {
		var out, errb bytes.Buffer
		if code := Main(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		for _, flag := range map[string][]string{
			"controller": {"--kubeconfig", "--context", "--namespace", "--apps-v1", "--selector", "--workers", "--leader-elect",
				"--leader-election-namespace", "--leader-election-id", "--identity", "--metrics-bind-address", "--health-probe-bind-address", "--resync", "--module"},
			"snapshot": {"--kubeconfig", "--context", "--namespace", "--output"},
		}[args[0]] {
			if !strings.Contains(out.String(), flag) {
				t.Errorf("%s --help lacks %s", args[0], flag)
			}
		}
	}
}

func TestControllerRejectsUnknownGate(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"controller", "--feature-gates", "NoSuchGate=true", "--kubeconfig", "/nonexistent", "--cache-dir", ""},
		strings.NewReader(""), &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "NoSuchGate") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

// controller-runtime's flag names, with the older ones kept as aliases.
func TestEndpointFlagAliases(t *testing.T) {
	for _, tc := range []struct {
		cmd  *cobra.Command
		args []string
		want map[string]string
	}{
		{newControllerCommand(&moduleOptions{}), []string{"--metrics-addr", ":9001", "--health-addr", ":9002"},
			map[string]string{"metrics-bind-address": ":9001", "health-probe-bind-address": ":9002"}},
		{newControllerCommand(&moduleOptions{}), []string{"--metrics-bind-address", ":9003", "--health-probe-bind-address", "0"},
			map[string]string{"metrics-bind-address": ":9003", "health-probe-bind-address": "0"}},
		{newWebhookCommand(&moduleOptions{}), []string{"--metrics-addr", ":9004"}, map[string]string{"metrics-bind-address": ":9004"}},
		{newControllerCommand(&moduleOptions{}), []string{"--watch-namespace", "prod", "--label-selector", "tier=db"},
			map[string]string{"namespace": "prod", "selector": "tier=db"}},
	} {
		if err := tc.cmd.ParseFlags(tc.args); err != nil {
			t.Fatalf("%s %v: %v", tc.cmd.Name(), tc.args, err)
		}
		for name, want := range tc.want {
			if got := tc.cmd.Flags().Lookup(name).Value.String(); got != want {
				t.Errorf("%s %v: --%s = %q, want %q", tc.cmd.Name(), tc.args, name, got, want)
			}
		}
	}
}

// $KUBECONFIG naming a file that is not there says so (client-go alone says "try setting KUBERNETES_MASTER").
func TestMissingKubeconfigIsNamed(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "nonexistent"))
	_, _, err := (&kubeOptions{}).restConfig()
	if err == nil || !strings.Contains(err.Error(), "nonexistent: no configuration in it") {
		t.Errorf("err = %v", err)
	}
}

// With no kubeconfig anywhere, a newcomer's first `kubectl ordinal status web` says there is none and how to
// name one, not client-go's "invalid configuration ... try setting KUBERNETES_MASTER".
func TestNoKubeconfigAtAllIsSaid(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home) // client-go's migration of an old ~/.kube/.kubeconfig reads $HOME
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster
	saved := clientcmd.RecommendedHomeFile
	clientcmd.RecommendedHomeFile = filepath.Join(home, ".kube", "config")
	t.Cleanup(func() { clientcmd.RecommendedHomeFile = saved })
	_, _, err := (&kubeOptions{}).restConfig()
	if err == nil || !strings.Contains(err.Error(), "no "+clientcmd.RecommendedHomeFile+" (or it is empty); --kubeconfig FILE names") ||
		strings.Contains(err.Error(), "KUBERNETES_MASTER") {
		t.Errorf("err = %v", err)
	}
}

// The Deployment's args (and the chart's, which its test keeps equal, plus --apps-v1 with
// controller.manageAppsV1) are flags of `ordinal controller`; --apps-v1 adds apps/v1 to Ordinal's kind.
func TestDeployedControllerArgs(t *testing.T) {
	b, err := os.ReadFile("../../examples/deploy/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	args := d.Spec.Template.Spec.Containers[0].Args
	for _, extra := range [][]string{nil, {"--apps-v1"}} {
		root := newRootCommand(strings.NewReader(""), io.Discard, io.Discard)
		cmd, rest, err := root.Find(append(slices.Clone(args), extra...))
		if err != nil || cmd.Name() != "controller" {
			t.Fatalf("%v: %s, %v", args, cmd.Name(), err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("deployment.yaml's args %v: %v", rest, err)
		}
		got, _ := cmd.Flags().GetBool("apps-v1")
		own, _ := cmd.Flags().GetBool("ordinal-kind")
		want := []snapshot.Target{snapshot.CRDTarget}
		if len(extra) > 0 {
			want = append(want, snapshot.StatefulSetTarget)
		}
		o := &controllerOptions{appsV1: got, ordinalKind: own}
		if got != (len(extra) > 0) || !slices.Equal(o.targets(), want) {
			t.Errorf("args %v: --apps-v1=%v, targets %v, want %v", rest, got, o.targets(), want)
		}
	}
}

// --apps-v1 --ordinal-kind=false manages apps/v1 StatefulSets alone, so the controller runs where Ordinal's
// CRD is not served (upstream's own integration tests start API servers that serve no CRDs at all: without
// the flag Ordinal refused to start there); --ordinal-kind=false alone manages nothing and is refused.
func TestAppsV1Only(t *testing.T) {
	root := newRootCommand(strings.NewReader(""), io.Discard, io.Discard)
	cmd, rest, err := root.Find([]string{"controller", "--apps-v1", "--ordinal-kind=false"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	apps, _ := cmd.Flags().GetBool("apps-v1")
	own, _ := cmd.Flags().GetBool("ordinal-kind")
	if got := (&controllerOptions{appsV1: apps, ordinalKind: own}).targets(); !slices.Equal(got, []snapshot.Target{snapshot.StatefulSetTarget}) {
		t.Errorf("targets %v, want apps/v1 alone", got)
	}
	var out, errb bytes.Buffer
	code := Main([]string{"controller", "--ordinal-kind=false", "--kubeconfig", "/nonexistent", "--cache-dir", ""}, strings.NewReader(""), &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "--apps-v1") {
		t.Errorf("--ordinal-kind=false without --apps-v1: exit %d: %s", code, errb.String())
	}
}

// reconcile runs the module the controller would: the one the snapshot's set names (ordinal.dev/module).
func TestReconcileRunsTheModuleTheSetNames(t *testing.T) {
	in, err := os.ReadFile("../../internal/conformance/cases/compat/ordered-template-changed.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	withAnnotations := func(ann map[string]string) string {
		var v map[string]any
		if err := json.Unmarshal(in, &v); err != nil {
			t.Fatal(err)
		}
		md := v["statefulSet"].(map[string]any)["metadata"].(map[string]any)
		a, _ := md["annotations"].(map[string]any)
		if a == nil {
			a = map[string]any{}
		}
		for k, val := range ann {
			a[k] = val
		}
		md["annotations"] = a
		b, _ := json.Marshal(v)
		return string(b)
	}
	run := func(snapshot string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Main([]string{"reconcile", "-f", "-", "-o", "json", "--cache-dir", ""}, strings.NewReader(snapshot), &out, &errb)
		return out.String(), errb.String(), code
	}
	podWrites := func(plan string) int {
		var p struct{ Actions []struct{ Kind string } }
		if err := json.Unmarshal([]byte(plan), &p); err != nil {
			t.Fatalf("not a plan: %v\n%s", err, plan)
		}
		n := 0
		for _, a := range p.Actions {
			if a.Kind == "Pod" {
				n++
			}
		}
		return n
	}
	if out, errOut, code := run(withAnnotations(map[string]string{"ordinal.dev/paused": "true"})); code != 0 || podWrites(out) == 0 {
		t.Fatalf("faithful (no module named): exit %d, %d pod writes, want some\n%s", code, podWrites(out), errOut)
	}
	if out, errOut, code := run(withAnnotations(map[string]string{"ordinal.dev/module": "extended", "ordinal.dev/paused": "true"})); code != 0 || podWrites(out) != 0 {
		t.Errorf("extended, paused: exit %d, %d pod writes, want none\n%s", code, podWrites(out), errOut)
	}
	if _, errOut, code := run(withAnnotations(map[string]string{"ordinal.dev/module": "nope"})); code != ExitUsage || !strings.Contains(errOut, `unknown module "nope"`) {
		t.Errorf("unknown module: exit %d, want %d\n%s", code, ExitUsage, errOut)
	}
}

// --shards: above 1 it shards over Leases named after --leader-election-id; bad values are named.
func TestShardsFlag(t *testing.T) {
	for _, tc := range []struct {
		o       controllerOptions
		wantErr string
		shards  int
	}{
		{o: controllerOptions{shards: 1, leaderElect: true}},
		{o: controllerOptions{shards: 1, leaderElect: false}},
		{o: controllerOptions{shards: 16, leaderElect: true, identity: "r1", leID: "ordinal"}, shards: 16},
		{o: controllerOptions{shards: 0, leaderElect: true}, wantErr: "--shards 0: must be at least 1"},
		{o: controllerOptions{shards: 4, leaderElect: false}, wantErr: "--shards 4 needs Leases"},
	} {
		le, sh, err := tc.o.leases()
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%+v: err %v, want %q", tc.o, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%+v: %v", tc.o, err)
		case tc.shards == 0 && sh != nil:
			t.Errorf("%+v: sharded", tc.o)
		case tc.shards > 0 && (sh == nil || sh.Shards != tc.shards || sh.Identity != "r1" || sh.Namespace != "default" || le.Name != "ordinal"):
			t.Errorf("%+v: sharding %+v", tc.o, sh)
		}
	}
}

// Every numeric flag of the controller has a range, checked before the module loads or anything connects
// (the kubeconfig here does not exist: a usage error must come first).
func TestControllerFlagRanges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shards", "1000000"}, "--shards 1000000: must be from 1 to 1024"},
		{[]string{"--shards", "2147483647"}, "--shards 2147483647"},
		{[]string{"--workers", "0"}, "--workers 0: must be from 1 to 1000"},
		{[]string{"--workers", "100000"}, "--workers 100000"},
		{[]string{"-v", "99"}, "-v 99: must be from 0 to 10"},
		{[]string{"--stale-timeout", "0s"}, "--stale-timeout 0s: must be a positive duration"},
		{[]string{"--resync", "-1s"}, "--resync -1s: must be 0 or a positive duration"},
		{[]string{"--set-cache-idle", "-1s"}, "--set-cache-idle -1s"},
		{[]string{"--leader-election-lease-duration", "5s"}, "must be longer than --leader-election-renew-deadline"},
		{[]string{"--leader-election-retry-period", "9s"}, "longer than 1.2 × --leader-election-retry-period"},
		{[]string{"--kube-api-qps", "0"}, "--kube-api-qps 0: must be more than 0 and at most 10000"},
		{[]string{"--kube-api-qps", "-1"}, "--kube-api-qps -1"},
		{[]string{"--kube-api-qps", "NaN"}, "--kube-api-qps NaN"},
		{[]string{"--kube-api-qps", "Inf"}, "--kube-api-qps +Inf"},
		{[]string{"--kube-api-burst", "0"}, "--kube-api-burst 0: must be from 1 to 10000"},
		{[]string{"--kube-api-burst", "100000000"}, "--kube-api-burst 100000000"},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"controller", "--kubeconfig", "/nonexistent", "--cache-dir", ""}, tc.args...), strings.NewReader(""), &out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, want %d naming %q:\n%s", tc.args, code, ExitUsage, tc.want, errb.String())
		}
	}
}

// So has every numeric flag of the webhook, checked before the certificates are read, the module loads or
// anything connects (neither the kubeconfig nor the certificate files here exist): 0 and negative values
// were taken for the defaults without a word, and no value was too large.
func TestWebhookFlagRanges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-handshake-timeout", "0s"}, "--tls-handshake-timeout 0s: must be a positive duration"},
		{[]string{"--read-header-timeout", "-1s"}, "--read-header-timeout -1s: must be a positive duration"},
		{[]string{"--read-timeout", "0s"}, "--read-timeout 0s"},
		{[]string{"--idle-timeout", "-1s"}, "--idle-timeout -1s"},
		{[]string{"--preview-timeout", "0s"}, "--preview-timeout 0s: must be a positive duration"},
		{[]string{"--preview-timeout", "31s"}, "--preview-timeout 31s: must be at most 30s"},
		{[]string{"--max-connections", "0"}, "--max-connections 0: must be from 1 to 10000"},
		{[]string{"--max-connections", "1000000000"}, "--max-connections 1000000000"},
		{[]string{"--max-unauthenticated-connections", "-1"}, "--max-unauthenticated-connections -1: must be from 1 to 10000"},
		{[]string{"--max-concurrent-previews", "0"}, "--max-concurrent-previews 0: must be from 1 to 64"},
		{[]string{"--max-concurrent-previews", "100000000"}, "--max-concurrent-previews 100000000"},
		{[]string{"--max-preview-syncs", "-1"}, "--max-preview-syncs -1: must be from 0 to 1000000"},
		{[]string{"--max-waiting-reviews", "-1"}, "--max-waiting-reviews -1: must be from 0 to 4096"},
		{[]string{"--max-waiting-reviews", "1000000000"}, "--max-waiting-reviews 1000000000"},
		{[]string{"--max-replicas", "0"}, "--max-replicas 0: must be from 1 to 32768"},
		{[]string{"--max-replicas", "-1"}, "--max-replicas -1"},
		{[]string{"-v", "11"}, "-v 11: must be from 0 to 10"},
		{[]string{"--kube-api-qps", "-1"}, "--kube-api-qps -1: must be more than 0"},
		{[]string{"--kube-api-burst", "-1"}, "--kube-api-burst -1: must be from 1 to 10000"},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"webhook", "--kubeconfig", "/nonexistent", "--cache-dir", ""}, tc.args...), strings.NewReader(""), &out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, want %d naming %q:\n%s", tc.args, code, ExitUsage, tc.want, errb.String())
		}
	}
}

// A command that reaches a cluster once refuses a negative --request-timeout before it connects, where it
// was taken for no limit.
func TestRequestTimeoutRange(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"snapshot", "--kubeconfig", "/nonexistent", "--request-timeout", "-1s", "web"}, strings.NewReader(""), &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "--request-timeout -1s: must be 0 or a positive duration") {
		t.Errorf("exit %d, want %d naming --request-timeout:\n%s", code, ExitUsage, errb.String())
	}
}

package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The kubectl upstream's e2e framework runs (framework/kubectl: --server, --kubeconfig, --namespace, then the
// command) is parsed as kubectl parses it; only exec is answered here.
func TestParseKubectl(t *testing.T) {
	call, isExec, err := parseKubectl([]string{"--server=https://127.0.0.1:36443", "--kubeconfig=/run/kubeconfig", "--namespace=statefulset-1",
		"exec", "ss-0", "--", "/bin/sh", "-x", "-c", "mv -v /localhost.crt /tmp/ || true"})
	if err != nil || !isExec {
		t.Fatalf("exec: %v, %t", err, isExec)
	}
	if call.server != "https://127.0.0.1:36443" || call.kubeconfig != "/run/kubeconfig" || call.namespace != "statefulset-1" || call.pod != "ss-0" ||
		!slices.Equal(call.argv, []string{"/bin/sh", "-x", "-c", "mv -v /localhost.crt /tmp/ || true"}) {
		t.Errorf("parsed %+v", call)
	}
	call, _, err = parseKubectl([]string{"-n", "ns", "exec", "-i", "pod/web-1", "-c", "side", "--", "ls"})
	if err != nil || call.namespace != "ns" || call.pod != "web-1" || call.container != "side" || !slices.Equal(call.argv, []string{"ls"}) {
		t.Errorf("short flags: %+v, %v", call, err)
	}
	for _, args := range [][]string{{"get", "pods"}, {"--kubeconfig", "k", "apply", "-f", "-"}, {"version"}, {}} {
		if _, isExec, _ := parseKubectl(args); isExec {
			t.Errorf("%q taken for exec", args)
		}
	}
	for _, args := range [][]string{{"exec", "ss-0"}, {"exec", "--", "ls"}, {"exec", "a", "b", "--", "ls"}, {"exec", "a", "-c"}} {
		if _, isExec, err := parseKubectl(args); !isExec || err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// kubectl's flag forms (pflag's): shorthands with their value attached (-cside, -nns) or grouped (-itc side),
// a global flag's value as the next argument (-v 5), exec's own valued flags, and the pod as TYPE/NAME.
func TestParseKubectlFlagForms(t *testing.T) {
	for _, c := range []struct {
		args                 []string
		namespace, container string
	}{
		{[]string{"exec", "-cside", "p", "--", "ls"}, "", "side"},
		{[]string{"exec", "-c=side", "p", "--", "ls"}, "", "side"},
		{[]string{"-nns", "exec", "p", "--", "ls"}, "ns", ""},
		{[]string{"exec", "-itc", "side", "p", "--", "ls"}, "", "side"},
		{[]string{"exec", "-ti", "--container", "side", "--namespace", "ns", "p", "--", "ls"}, "ns", "side"},
		{[]string{"-v", "5", "exec", "p", "--", "ls"}, "", ""},
		{[]string{"--v=5", "exec", "p", "-n", "ns", "--", "ls"}, "ns", ""},
		{[]string{"exec", "--pod-running-timeout", "1m", "p", "--", "ls"}, "", ""},
		{[]string{"exec", "pods/p", "--", "ls"}, "", ""},
		{[]string{"exec", "po/p", "--", "ls", "-c", "x"}, "", ""},
	} {
		call, isExec, err := parseKubectl(c.args)
		if !isExec || err != nil || call.pod != "p" || call.namespace != c.namespace || call.container != c.container || call.argv[0] != "ls" {
			t.Errorf("%q: %+v, exec %t, %v", c.args, call, isExec, err)
		}
	}
}

// exec -i gives the command kubectl's stdin (`kubectl exec -i POD -- sh < script`); without it, none.
func TestParseKubectlStdin(t *testing.T) {
	for _, c := range []struct {
		args  []string
		stdin bool
	}{
		{[]string{"exec", "-i", "p", "--", "sh"}, true}, {[]string{"exec", "-it", "p", "--", "sh"}, true},
		{[]string{"exec", "--stdin", "p", "--", "sh"}, true}, {[]string{"exec", "--stdin=false", "p", "--", "sh"}, false},
		{[]string{"exec", "-t", "p", "--", "sh"}, false}, {[]string{"exec", "p", "--", "sh", "-i"}, false},
	} {
		if call, _, err := parseKubectl(c.args); err != nil || call.stdin != c.stdin {
			t.Errorf("%q: stdin %t, want %t (%v)", c.args, call.stdin, c.stdin, err)
		}
	}
}

// exec talks to the cluster kubectl would: the kubeconfig given, else $KUBECONFIG's, with the context,
// cluster, user, server and token flags over it.
func TestExecClientConfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: a, cluster: {server: "https://a.invalid"}}
- {name: b, cluster: {server: "https://b.invalid"}}
users:
- {name: ua, user: {token: ta}}
- {name: ub, user: {token: tb}}
contexts:
- {name: ca, context: {cluster: a, user: ua, namespace: nsa}}
current-context: ca
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args        []string
		host, token string
	}{
		{[]string{"--kubeconfig", kubeconfig}, "https://a.invalid", "ta"},
		{[]string{"--kubeconfig", kubeconfig, "--cluster", "b", "--user=ub"}, "https://b.invalid", "tb"},
		{[]string{"--kubeconfig", kubeconfig, "-s", "https://s.invalid", "--token", "tt"}, "https://s.invalid", "tt"},
		{nil, "https://a.invalid", "ta"}, // $KUBECONFIG
	} {
		t.Setenv("KUBECONFIG", kubeconfig)
		call, _, err := parseKubectl(append(c.args, "exec", "p", "--", "ls"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientConfig(call).ClientConfig()
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
		} else if cfg.Host != c.host || cfg.BearerToken != c.token {
			t.Errorf("%q: host %q token %q, want %q %q", c.args, cfg.Host, cfg.BearerToken, c.host, c.token)
		}
	}
}

// Without -c, exec goes where kubectl's goes: the container the default-container annotation names, if the
// pod has one of that name, else the first.
func TestDefaultContainer(t *testing.T) {
	p := statefulPod("ss-0", "pod-uid-1", 0)
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar"})
	for annotation, want := range map[string]string{"": "webserver", "sidecar": "sidecar", "gone": "webserver"} {
		p.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": annotation}
		if got := defaultContainer(p); got != want {
			t.Errorf("annotation %q: %q, want %q", annotation, got, want)
		}
	}
}

package main

import (
	"slices"
	"testing"
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

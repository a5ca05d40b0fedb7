package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestIsPlugin(t *testing.T) {
	for argv0, want := range map[string]bool{
		"kubectl-ordinal": true, "/usr/local/bin/kubectl-ordinal": true, "kubectl-ordinal.exe": true,
		"ordinal": false, "/bin/ordinal": false, "kubectl": false, "kubectl-ordinalx": false,
	} {
		if got := IsPlugin(argv0); got != want {
			t.Errorf("IsPlugin(%q) = %v, want %v", argv0, got, want)
		}
	}
}

func plug(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := PluginMain(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPluginFlags(t *testing.T) {
	code, out, _ := plug("--help")
	if code != ExitOK || !strings.Contains(out, "kubectl ordinal preview -f web.yaml") || !strings.Contains(out, "Usage:\n  kubectl ordinal [command]") {
		t.Fatalf("--help: %d\n%s", code, out)
	}
	if _, out, _ := plug("preview", "--help"); !strings.Contains(out, "Usage:\n  kubectl ordinal preview -f web.yaml") {
		t.Errorf("preview --help does not say kubectl ordinal:\n%s", out)
	}
	for _, cmd := range []string{"preview", "timeline", "snapshot"} {
		code, out, _ := plug(cmd, "--help")
		for _, f := range []string{"--kubeconfig", "--context", "-n, --namespace", "-o, --output"} {
			if code != ExitOK || !strings.Contains(out, f) {
				t.Errorf("%s --help lacks %s (kubectl conventions)", cmd, f)
			}
		}
	}
	if code, _, errs := plug("preview", "-o", "xml", "-f", "x.yaml"); code != ExitUsage || !strings.Contains(errs, "-o/--output") {
		t.Errorf("bad -o: %d %s", code, errs)
	}
	if code, _, errs := plug("timeline", "deployment/web"); code != ExitUsage || !strings.Contains(errs, "statefulset/NAME") {
		t.Errorf("bad kind: %d %s", code, errs)
	}
	if code, _, errs := plug("preview", "-f", "-"); code != ExitUsage || !strings.Contains(errs, "StatefulSet") {
		t.Errorf("empty manifest: %d %s", code, errs)
	}
}

func TestWebhookFlags(t *testing.T) {
	if code, _, errs := run(t, "", "webhook"); code != ExitUsage || !strings.Contains(errs, "--tls-cert-file") {
		t.Errorf("no TLS files: %d %s", code, errs)
	}
	if code, _, errs := run(t, "", "webhook", "--tls-cert-file", "a", "--tls-private-key-file", "b"); code != ExitUsage || !strings.Contains(errs, "--client-ca-file is required") {
		t.Errorf("no client CA: %d %s", code, errs)
	}
	if code, _, errs := run(t, "", "webhook", "--tls-cert-file", "a", "--tls-private-key-file", "b", "--insecure-allow-unauthenticated", "--failure-policy", "maybe"); code != ExitUsage || !strings.Contains(errs, "--failure-policy") {
		t.Errorf("bad failure policy: %d %s", code, errs)
	}
	code, out, _ := run(t, "", "webhook", "--help")
	for _, f := range []string{"--deny-stuck-rollouts", "--deny-pvc-deletion", "--preview-timeout", "--failure-policy", "NoneOnDryRun"} {
		if code != ExitOK || !strings.Contains(out, f) {
			t.Errorf("webhook --help lacks %s", f)
		}
	}
}

// -f is --filename, as in kubectl, for every command that reads a file; --file still works.
func TestFilenameFlag(t *testing.T) {
	for _, flag := range []string{"-f", "--filename", "--file"} {
		if code, out, errs := run(t, "", "reconcile", "-o", "json", flag, "../../examples/web-fresh.snapshot.json"); code != ExitOK || !strings.Contains(out, `"actions"`) {
			t.Errorf("reconcile %s: exit %d %s", flag, code, errs)
		}
		code, _, errs := run(t, "", "preview", flag, "../../examples/ci/web-new-image.yaml", "--from", "../../examples/ci/web.snapshot.json")
		if code != ExitOK {
			t.Errorf("preview %s: exit %d %s", flag, code, errs)
		}
	}
}

// As kubectl_complete-ordinal the binary answers kubectl's completion requests for the plugin (the live
// sets are completed in e2e, TestWebhookApply).
func TestPluginCompletion(t *testing.T) {
	if !IsPluginCompletion("/usr/local/bin/kubectl_complete-ordinal") || IsPluginCompletion("kubectl-ordinal") {
		t.Fatal("IsPluginCompletion")
	}
	var out, errb bytes.Buffer
	if code := PluginCompleteMain([]string{""}, strings.NewReader(""), &out, &errb); code != ExitOK ||
		!strings.Contains(out.String(), "preview\t") || !strings.Contains(out.String(), "snapshot\t") {
		t.Fatalf("commands: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := PluginCompleteMain([]string{"timeline", "-o", ""}, strings.NewReader(""), &out, &errb); code != ExitOK || !strings.HasPrefix(out.String(), "text\njson\nyaml\n") {
		t.Fatalf("-o: exit %d\n%s", code, out.String())
	}
}

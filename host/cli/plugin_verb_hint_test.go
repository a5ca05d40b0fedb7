package cli

import (
	"strings"
	"testing"
)

// A verb only the kubectl plugin has, typed to `ordinal`, says where it is and how to install the plugin; a
// verb of neither is cobra's unknown command; `ordinal preview` (both have one) runs ordinal's.
func TestPluginVerbHint(t *testing.T) {
	for _, verb := range []string{"undo", "status", "history", "timeline", "restart", "pause", "resume", "migrate"} {
		code, stdout, stderr := run(t, "", verb, "statefulset/web")
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "kubectl ordinal "+verb+" statefulset/web") ||
			!strings.Contains(stderr, "/usr/local/bin/kubectl-ordinal") {
			t.Errorf("ordinal %s: exit %d, stderr %q", verb, code, stderr)
		}
	}
	if _, _, stderr := run(t, "", "frobnicate"); !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("ordinal frobnicate: %q", stderr)
	}
	if _, _, stderr := run(t, "", "preview", "--help"); strings.Contains(stderr, "kubectl plugin") {
		t.Errorf("ordinal preview --help answered with the plugin hint: %q", stderr)
	}
}

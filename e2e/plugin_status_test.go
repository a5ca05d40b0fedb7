//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/rollout"
)

// `kubectl ordinal status` and `history` through the real kubectl, on a set the controller rolls out:
// complete, then a watch that follows an edit whose new pods never become Ready to the reason the
// rollout waits, then the history with the edit's template change.
func TestPluginStatusWatchAndHistory(t *testing.T) {
	requireHookEnv(t)
	ctx, ns, _, _ := begin(t, "st", false)
	createSet(t, ctx, ns, newSet("st", 3))
	waitRolledOut(t, ctx, ns, "st", 3)

	out, perr, code := plugin(t, ctx, "status", "statefulset/st", "-n", ns)
	if code != 0 || !strings.Contains(out, "state: complete") || !strings.Contains(out, "3 pods Ready at revision A") {
		t.Fatalf("kubectl ordinal status: exit %d\n%s%s", code, out, perr)
	}
	out, perr, code = plugin(t, ctx, "status", "st", "-n", ns, "-o", "json")
	var st rollout.Status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.State != rollout.StateComplete || len(st.Pods) != 3 || len(st.Revisions) != 1 {
		t.Fatalf("kubectl ordinal status -o json: exit %d\n%s%s", code, out, perr)
	}

	// The watch, started before the edit, must show the rollout reach the pod that never becomes Ready.
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute) // a hang guard, not a budget
	defer cancel()
	cmd := exec.CommandContext(wctx, hookEnv.kubectl, "ordinal", "status", "statefulset/st", "--watch", "-n", ns, "--kubeconfig", cfg.kubeconfig)
	cmd.Env = append(os.Environ(), "PATH="+hookEnv.pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	defer func() {
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	await := func(want string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the watch ended before showing %q (stderr: %s):\n%s", want, stderr.String(), strings.Join(seen, "\n"))
				}
				seen = append(seen, l)
				if strings.Contains(l, want) {
					return
				}
			case <-wctx.Done():
				t.Fatalf("the watch did not show %q:\n%s", want, strings.Join(seen, "\n"))
			}
		}
	}
	await("3 pods Ready at revision A") // the first frame: the watch is up
	patchSet(t, ctx, ns, "st", fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:"v2",%q:"true"}}}}}`, annVersion, annNeverReady))
	await("state: progressing")
	await("OrderedReady: waiting for st-2 (B, Running) to be Running and Ready")
	if n := strings.Count(strings.Join(seen, "\n"), "StatefulSet "+ns+"/st"); n < 3 {
		t.Errorf("%d frames, want one per change at least (complete, progressing, waiting)", n)
	}

	// Interrupted, the watch ends quietly: exit 0, as kubectl's own watches end.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for range lines { // drain, so the process is not blocked writing
	}
	err = cmd.Wait()
	waited = true
	if err != nil {
		t.Errorf("status --watch after SIGINT: %v (stderr: %s)", err, stderr.String())
	}
	// A bad gate is the command's error (exit 2: the module refused the snapshot), not a rollout state.
	if out, perr, code := plugin(t, ctx, "status", "st", "-n", ns, "--feature-gates", "NoSuchGate=true"); code != 2 || !strings.Contains(perr, "NoSuchGate") {
		t.Errorf("status --feature-gates NoSuchGate=true: exit %d, want 2\n%s%s", code, out, perr)
	}

	out, perr, code = plugin(t, ctx, "history", "statefulset/st", "-n", ns)
	for _, want := range []string{
		"2 revisions",
		"revisions: A=", " (1) B=", " (2)\n", "B from A:",
		`~ metadata.annotations["` + annVersion + `"]: "v1" -> "v2"`,
		`+ metadata.annotations["` + annNeverReady + `"]: "true"`,
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("kubectl ordinal history: exit %d, want %q in\n%s%s", code, want, out, perr)
		}
	}
}

// statusWait runs `kubectl ordinal status SET -n NS --wait --wait-timeout 4m ARGS` as a CI step waits on a
// rollout (the test's own guard is longer than the command's limit: a hang guard, not a budget), and logs it.
func statusWait(t *testing.T, ctx context.Context, ns, set string, args ...string) (string, string, int) {
	t.Helper()
	args = append([]string{"status", set, "-n", ns, "--wait", "--wait-timeout", "4m"}, args...)
	out, errOut, code := pluginWithin(t, ctx, 5*time.Minute, args...)
	t.Logf("$ kubectl ordinal %s  -> exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	return out, errOut, code
}

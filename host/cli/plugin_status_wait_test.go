package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/rollout"
)

// waitFrame is a view of a set in state with one reason, rendered as status renders it.
func waitFrame(t *testing.T, s *statusView, state, reason string) *statusFrame {
	t.Helper()
	st := &rollout.Status{Namespace: "default", Name: "web", Revisions: []rollout.Revision{}, Pods: []rollout.Pod{},
		Next: rollout.Next{Writes: []rollout.Write{}}, State: state, Reasons: []string{reason}, Conditions: []rollout.Condition{}}
	v, err := s.render(st, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Off a terminal, --wait writes for a CI log: the first view whole, then a line per change of the state (not a
// view per pod that moves), then the last view; -o json writes only the last view, one document a script
// can read. --watch still writes every view that changed.
func TestStatusWaitOutput(t *testing.T) {
	run := func(format string, wait bool) string {
		var out strings.Builder
		s := &statusView{format: format, out: &out}
		if wait {
			s.wait = &rolloutWait{on: true}
		}
		show := s.shower()
		views := []*statusFrame{
			waitFrame(t, s, rollout.StateWaiting, "OrderedReady: waiting for web-1 (B, Running) to be Running and Ready"),
			waitFrame(t, s, rollout.StateWaiting, "OrderedReady: waiting for web-1 (B, Running) to be Running and Ready"),
			waitFrame(t, s, rollout.StateProgressing, "the next sync will delete web-0"),
			waitFrame(t, s, rollout.StateComplete, "3 pods Ready at revision B"),
		}
		for i, v := range views {
			if err := show(v, i == len(views)-1); err != nil {
				t.Fatal(err)
			}
		}
		return out.String()
	}
	text := run("text", true)
	if n := strings.Count(text, "StatefulSet default/web"); n != 2 {
		t.Errorf("--wait text has %d views, want the first and the last:\n%s", n, text)
	}
	lines := strings.Split(text, "\n")
	progress := 0
	for _, l := range lines {
		if strings.HasSuffix(l, " progressing: the next sync will delete web-0") {
			progress++
		}
	}
	if progress != 1 || strings.Count(text, "waiting: OrderedReady") != 0 || !strings.Contains(text, "state: complete\n  3 pods Ready at revision B") {
		t.Errorf("--wait text: want one line for the change to progressing, none for the unchanged wait, and the last view:\n%s", text)
	}

	js := run("json", true)
	var st rollout.Status
	if err := json.Unmarshal([]byte(js), &st); err != nil || st.State != rollout.StateComplete {
		t.Errorf("--wait -o json: want the last view only, one document: %v\n%s", err, js)
	}

	if watched := run("text", false); strings.Count(watched, "StatefulSet default/web") != 3 {
		t.Errorf("--watch text: want each view that changed (3):\n%s", watched)
	}
}

// How a wait ends is its exit code: stuck 6 with the condition's line, deleted 1, --wait-timeout and an
// interrupt 7 (never 0: `timeout 10m kubectl ordinal status --wait` must not pass an unfinished rollout), and
// complete 0; --watch ends at an interrupt with 0.
func TestStatusWaitExits(t *testing.T) {
	s := &statusView{format: "text", out: &strings.Builder{}}
	w := &rolloutWait{on: true, timeout: time.Minute}
	s.wait = w
	show := s.shower()
	v := waitFrame(t, s, rollout.StateWaiting, "OrderedReady: waiting for web-2 (B, Pending) to be Running and Ready")
	code := func(err error) int {
		var e *exitError
		if err == nil {
			return 0
		}
		if !errors.As(err, &e) {
			t.Fatalf("error without an exit code: %v", err)
		}
		return e.code
	}
	for _, c := range []struct {
		name string
		err  error
		code int
		says string
	}{
		{"complete", w.ended(show, v, rollout.Complete, "3 pods Ready at revision B"), 0, ""},
		{"stuck", w.ended(show, v, rollout.Stuck, "Progressing=False ProgressDeadlineExceeded: no progress"), ExitStuck, "the rollout is stuck: Progressing=False ProgressDeadlineExceeded"},
		{"gone", w.ended(show, v, rollout.Gone, "StatefulSet default/web not found"), ExitUsage, "deleted while its rollout was waited on"},
		{"timed out", w.timedOut(show, v), ExitLimit, "--wait-timeout 1m0s passed before the rollout ended: waiting: OrderedReady: waiting for web-2"},
		{"interrupted", w.interrupted(show, v), ExitLimit, "interrupted before the rollout ended: waiting: OrderedReady"},
		{"interrupted before a view", w.interrupted(show, nil), ExitLimit, "interrupted before the rollout ended"},
		{"--watch interrupted", (&rolloutWait{}).interrupted(show, v), 0, ""},
	} {
		if got := code(c.err); got != c.code || (c.err != nil) != (c.says != "") || c.err != nil && !strings.Contains(c.err.Error(), c.says) {
			t.Errorf("%s: exit %d (%v), want %d saying %q", c.name, got, c.err, c.code, c.says)
		}
	}
}

// A wait interrupted (SIGTERM from a CI step's timeout) with -o json|yaml prints the last view, as at
// --wait-timeout: it printed nothing, so a script reading the document got none.
func TestStatusWaitInterruptedShowsTheLastView(t *testing.T) {
	for _, format := range []string{"json", "yaml", "text"} {
		var out strings.Builder
		s := &statusView{format: format, out: &out, wait: &rolloutWait{on: true}}
		show := s.shower()
		v := waitFrame(t, s, rollout.StateWaiting, "OrderedReady: waiting for web-2 (B, Pending) to be Running and Ready")
		if err := show(v, false); err != nil {
			t.Fatal(err)
		}
		err := s.wait.interrupted(show, v)
		var e *exitError
		if !errors.As(err, &e) || e.code != ExitLimit {
			t.Errorf("%s: %v, want exit %d", format, err, ExitLimit)
		}
		if !strings.Contains(out.String(), "OrderedReady: waiting for web-2") {
			t.Errorf("%s: interrupted, printed no view:\n%s", format, out.String())
		}
	}
}

// SIGTERM while --wait was still loading the module or reading the set exited 4 ("compile canceled") or 1
// (as for a set that does not exist): an interrupt before the rollout ended is 7 wherever it comes.
func TestStatusWaitInterruptedBeforeTheWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal came first
	for _, cacheDir := range []string{"", t.TempDir()} {
		var out, errb strings.Builder
		root := newPluginRoot(strings.NewReader(""), &out, &errb)
		root.SetArgs([]string{"status", "statefulset/web", "--wait", "--kubeconfig", kubeconfigFor(t, "http://127.0.0.1:1"), "--cache-dir", cacheDir})
		err := root.ExecuteContext(ctx)
		var e *exitError
		if !errors.As(err, &e) || e.code != ExitLimit || !strings.Contains(err.Error(), "interrupted before the rollout ended") {
			t.Errorf("--cache-dir %q: %v, want exit %d, interrupted", cacheDir, err, ExitLimit)
		}
	}
}

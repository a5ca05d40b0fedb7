package rollout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

var module *wasm.Module

func TestMain(m *testing.M) {
	ctx := context.Background()
	mod, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "loading the embedded module:", err)
		os.Exit(1)
	}
	module = mod
	code := m.Run()
	mod.Close(ctx)
	os.Exit(code)
}

// finalSnapshot replays a recorded scenario to its end and returns the world it leaves, as a snapshot.
func finalSnapshot(t *testing.T, name string) []byte {
	t.Helper()
	sc, err := replay.LoadScenario(filepath.Join("..", "..", "testdata", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := replay.Run(context.Background(), sc, replay.Options{Module: module})
	if err != nil {
		t.Fatal(err)
	}
	return tl.Final
}

// statusOf runs the module on the snapshot, as `kubectl ordinal status` does, and builds the status.
func statusOf(t *testing.T, snapshot []byte) *rollout.Status {
	t.Helper()
	raw, err := module.Reconcile(context.Background(), snapshot)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	st, err := rollout.Of(snapshot, p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// edit changes the snapshot's set with a function over its generic JSON.
func edit(t *testing.T, snapshot []byte, f func(set map[string]any)) []byte {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(snapshot, &s); err != nil {
		t.Fatal(err)
	}
	f(s["statefulSet"].(map[string]any))
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func spec(o map[string]any) map[string]any { return o["spec"].(map[string]any) }

// The state and the reason of each way a rollout rests, on worlds the replay leaves behind.
func TestStatusSaysWhyTheRolloutWaits(t *testing.T) {
	for _, c := range []struct {
		scenario string
		edit     func(set map[string]any)
		state    string
		reason   []string // substrings of the joined reasons
	}{
		{"rolling-update", nil, rollout.StateComplete, []string{"3 pods Ready at revision B"}},
		{"create-never-ready", nil, rollout.StateWaiting, []string{"OrderedReady: waiting for web-0 (A, Running) to be Running and Ready before the controller creates web-1"}},
		{"ondelete-then-rollingupdate", nil, rollout.StatePartitioned, []string{"partition 1 holds back web-0 (A); ordinals from 1 are at revision B"}},
		{"ondelete", nil, rollout.StateWaiting, []string{"OnDelete: web-2 (A) keeps its revision until deleted"}},
		// Scaled up: the next sync creates the next ordinal.
		{"rolling-update", func(set map[string]any) { spec(set)["replicas"] = 5 }, rollout.StateProgressing, []string{"the next sync will create web-3"}},
		// Ready, but not for minReadySeconds yet: the controller requeues for availability.
		{"rolling-update", func(set map[string]any) { spec(set)["minReadySeconds"] = 86400 }, rollout.StateWaiting,
			[]string{"waiting for web-0, web-1, web-2 to be Ready for minReadySeconds (86400s)", "syncs again in"}},
	} {
		t.Run(c.scenario+"/"+c.state, func(t *testing.T) {
			snap := finalSnapshot(t, c.scenario)
			if c.edit != nil {
				snap = edit(t, snap, c.edit)
			}
			st := statusOf(t, snap)
			reasons := strings.Join(st.Reasons, "; ")
			if st.State != c.state {
				t.Errorf("state %s, want %s (%s)", st.State, c.state, reasons)
			}
			for _, r := range c.reason {
				if !strings.Contains(reasons, r) {
					t.Errorf("reasons %q lack %q", reasons, r)
				}
			}
			var b bytes.Buffer
			if err := st.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "state: "+c.state) {
				t.Errorf("text lacks the state:\n%s", b.String())
			}
		})
	}
}

// The revisions are named by their numbers' letters (1 = A), as every output names them. The set's status is shown as
// the API server has it; an edited template's revision, which only the module knows yet, is the next
// sync's update revision, and a status older than the set says no controller has synced the edit.
func TestStatusRevisionsAndPods(t *testing.T) {
	st := statusOf(t, finalSnapshot(t, "ondelete-then-rollingupdate"))
	var got []string
	for _, r := range st.Revisions {
		got = append(got, fmt.Sprintf("%s:%d:%v:%v", r.Label, r.Pods, r.Current, r.Update))
	}
	if want := "A:1:true:false B:2:false:true"; strings.Join(got, " ") != want {
		t.Errorf("revisions %s, want %s", strings.Join(got, " "), want)
	}
	var grid []string
	for _, p := range st.Pods {
		grid = append(grid, fmt.Sprintf("%d:%s/%s", p.Ordinal, p.Revision, p.State))
	}
	if want := "0:A/Ready 1:B/Ready 2:B/Ready"; strings.Join(grid, " ") != want {
		t.Errorf("pods %s, want %s", strings.Join(grid, " "), want)
	}
	var text bytes.Buffer
	if err := st.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	legend := "revisions: A=" + st.Revisions[0].Name + " (1) B=" + st.Revisions[1].Name + " (2)\n"
	if strings.Count(text.String(), "revisions: ") != 1 || !strings.Contains(text.String(), legend) {
		t.Errorf("text does not say once what the letters mean (%q):\n%s", legend, text.String())
	}

	// A new template: the set's status still names the old revision, the module's plan the new one.
	snap := edit(t, finalSnapshot(t, "rolling-update"), func(set map[string]any) {
		c := spec(set)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c["image"] = "registry.k8s.io/nginx-slim:0.29"
	})
	snap = edit(t, snap, func(set map[string]any) {
		md := set["metadata"].(map[string]any)
		md["generation"] = md["generation"].(float64) + 1
	})
	st = statusOf(t, snap)
	if st.Next.UpdateRevision == "" || st.Next.UpdateRevision == st.UpdateRevision || st.UpdateRevision != st.CurrentRevision {
		t.Errorf("live update revision %s, current %s, the next sync's %q: want the live ones unchanged and the edit's next",
			st.UpdateRevision, st.CurrentRevision, st.Next.UpdateRevision)
	}
	if st.ObservedGeneration != st.Generation-1 {
		t.Errorf("observedGeneration %d of generation %d: want the set's own", st.ObservedGeneration, st.Generation)
	}
	if r := strings.Join(st.Reasons, ";"); !strings.Contains(r, "no controller has synced the latest edit yet") {
		t.Errorf("reasons %q do not say the status is behind", r)
	}
	if st.State != rollout.StateProgressing || !strings.Contains(strings.Join(st.Reasons, ";"), "delete web-2") {
		t.Errorf("state %s %v, want progressing: delete web-2 (highest ordinal first)", st.State, st.Reasons)
	}
}

// With the MaxUnavailableStatefulSet gate off (in the snapshot's features), maxUnavailable is shown as ignored.
func TestStatusMaxUnavailableGateOff(t *testing.T) {
	snap := edit(t, finalSnapshot(t, "rolling-update-maxunavailable2"), func(map[string]any) {})
	var s map[string]any
	if err := json.Unmarshal(snap, &s); err != nil {
		t.Fatal(err)
	}
	s["features"] = map[string]any{"MaxUnavailableStatefulSet": false}
	snap, _ = json.Marshal(s)
	st := statusOf(t, snap)
	if r := st.Settings.RollingUpdate; r == nil || !r.MaxUnavailableIgnored || r.MaxUnavailablePods != 1 || r.MaxUnavailable.String() != "2" {
		t.Errorf("settings %+v, want maxUnavailable 2 ignored (1 pod)", st.Settings)
	}
	if s := st.Settings.String(); !strings.Contains(s, "maxUnavailable 2 (ignored: the MaxUnavailableStatefulSet gate is off)") {
		t.Errorf("settings %q", s)
	}
}

// -o json gives the settings as typed fields, not a line of text: numbers as numbers, maxUnavailable as
// written and the pods it comes to, the claims' retention.
func TestStatusSettingsAreTyped(t *testing.T) {
	snap := edit(t, finalSnapshot(t, "rolling-update-maxunavailable2"), func(set map[string]any) {
		spec := spec(set)
		spec["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": "50%", "partition": 1}}
		spec["minReadySeconds"] = 7
	})
	b, err := json.Marshal(statusOf(t, snap))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Settings map[string]any `json:"settings"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want := map[string]any{"replicas": 5.0, "podManagementPolicy": "OrderedReady", "updateStrategy": "RollingUpdate",
		"rollingUpdate":   map[string]any{"partition": 1.0, "maxUnavailable": "50%", "maxUnavailablePods": 2.0},
		"minReadySeconds": 7.0, "ordinalsStart": 0.0,
		"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"}}
	if !reflect.DeepEqual(got.Settings, want) {
		t.Errorf("settings\n got %v\nwant %v", got.Settings, want)
	}
}

// A plan that carries an error is the state "failed" with the module's message.
func TestStatusOfAFailedSync(t *testing.T) {
	snap := finalSnapshot(t, "rolling-update")
	st, err := rollout.Of(snap, &abi.Plan{ABI: 1, Error: &abi.Error{Code: abi.CodeSyncFailed, Message: "boom"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.State != rollout.StateFailed || !strings.Contains(st.Reasons[0], "boom") {
		t.Errorf("state %s %v", st.State, st.Reasons)
	}
	if _, err := rollout.Of([]byte(`{"abi":1}`), nil); err == nil || !strings.Contains(err.Error(), "no statefulSet") {
		t.Errorf("a snapshot without a set: %v", err)
	}
}

// A 1000-pod set prints as a few lines: consecutive ordinals in one state share a line.
func TestStatusTextGroupsPods(t *testing.T) {
	st := &rollout.Status{Namespace: "ns", Name: "web", State: rollout.StateComplete}
	for i := 0; i < 1000; i++ {
		p := rollout.Pod{Name: fmt.Sprintf("web-%d", i), Ordinal: i, Revision: "B", State: "Ready"}
		if i == 500 {
			p.State = "Pending"
		}
		st.Pods = append(st.Pods, p)
	}
	var b bytes.Buffer
	if err := st.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(b.String(), "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, want := range []string{"web-0..web-499 B Ready", "web-500 B Pending", "web-501..web-999 B Ready"} {
		if !lines[want] {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	if n := strings.Count(b.String(), "\n"); n > 20 {
		t.Errorf("%d lines for 1000 pods", n)
	}
}

// The set's conditions (here extension progress-deadline's) are shown as the API server has them: in the
// JSON and one line each in text.
func TestStatusShowsTheSetsConditions(t *testing.T) {
	snap := edit(t, finalSnapshot(t, "ondelete-then-rollingupdate"), func(set map[string]any) {
		set["status"].(map[string]any)["conditions"] = []any{
			map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
				"message": `StatefulSet "web" has timed out progressing to revision web-abc.`, "lastTransitionTime": "2026-11-22T10:01:30Z"},
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "lastTransitionTime": "2026-11-22T09:00:00Z"},
		}
	})
	st := statusOf(t, snap)
	if len(st.Conditions) != 2 || st.Conditions[0].Reason != "ProgressDeadlineExceeded" || st.Conditions[0].LastTransitionTime != "2026-11-22T10:01:30Z" {
		t.Fatalf("conditions %+v", st.Conditions)
	}
	var b bytes.Buffer
	if err := st.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`condition Progressing=False ProgressDeadlineExceeded since 2026-11-22T10:01:30Z: StatefulSet "web" has timed out progressing to revision web-abc.`,
		"condition Available=True MinimumReplicasAvailable since 2026-11-22T09:00:00Z\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// snapshotAfter replays a recorded scenario through its first n events (and until the world settles) and
// returns the world it leaves, as a snapshot.
func snapshotAfter(t *testing.T, name string, n int) []byte {
	t.Helper()
	sc, err := replay.LoadScenario(filepath.Join("..", "..", "testdata", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc.Events = sc.Events[:n]
	tl, err := replay.Run(context.Background(), sc, replay.Options{Module: module})
	if err != nil {
		t.Fatal(err)
	}
	return tl.Final
}

// snapshotAfterWith is snapshotAfter for a scenario whose set names a module (named gives it).
func snapshotAfterWith(t *testing.T, name string, n int, named func(context.Context, string) (plan.Reconciler, error)) []byte {
	t.Helper()
	sc, err := replay.LoadScenario(filepath.Join("..", "..", "testdata", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc.Events = sc.Events[:n]
	tl, err := replay.Run(context.Background(), sc, replay.Options{Module: module, NamedModule: named})
	if err != nil {
		t.Fatal(err)
	}
	return tl.Final
}

// editPod changes the snapshot's pod named name with a function over its generic JSON.
func editPod(t *testing.T, snapshot []byte, name string, f func(pod map[string]any)) []byte {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(snapshot, &s); err != nil {
		t.Fatal(err)
	}
	for _, p := range s["pods"].([]any) {
		if pod := p.(map[string]any); pod["metadata"].(map[string]any)["name"] == name {
			f(pod)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A user who reverted a broken release of an OrderedReady set (kubectl ordinal undo) was told only that the
// controller waits for web-2 to be Running and Ready: not that web-2 is at the revision just left, cannot
// become Ready, and holds the set for good (upstream's forced-rollback trap), nor the way out. Nor why the pod
// does not run: kubectl get pods says ImagePullBackOff, the status said Pending.
func TestStatusNamesTheForcedRollbackTrapAndItsWayOut(t *testing.T) {
	reverted := snapshotAfter(t, "forced-rollback-trap", 2) // the broken release, then the template reverted
	pulling := editPod(t, reverted, "web-2", func(pod map[string]any) {
		pod["status"] = map[string]any{"phase": "Pending", "containerStatuses": []any{map[string]any{"name": "nginx", "image": "registry.k8s.io/nginx-slim:0.28", "ready": false,
			"state": map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}}}
	})
	recovering := edit(t, reverted, func(set map[string]any) {
		set["metadata"].(map[string]any)["annotations"] = map[string]any{abi.AnnotationRecoverStuckAfter: "10m"}
	})
	for _, c := range []struct {
		name     string
		snapshot []byte
		want     []string
		not      []string
	}{
		{"reverted", reverted, []string{"OrderedReady: waiting for web-2 (B, Running) to be Running and Ready",
			"web-2 is at a revision other than the update revision C: the controller replaces it only once it is Ready",
			"(the forced-rollback trap); to get out: kubectl delete pod web-2 -n default, and the controller recreates it at C"}, nil},
		{"image pull", pulling, []string{"waiting for web-2 (B, Pending: ImagePullBackOff)", "kubectl delete pod web-2 -n default"}, nil},
		{"recover-stuck", recovering, []string{"ordinal.dev/recover-stuck-after: 10m deletes such a pod once it has not been Ready that long"}, []string{"kubectl delete pod"}},
		// A pod at the update revision is the rollout's own: no trap.
		{"new revision", finalSnapshot(t, "create-never-ready"), []string{"waiting for web-0 (A, Running)"}, []string{"forced-rollback", "kubectl delete pod"}},
	} {
		st := statusOf(t, c.snapshot)
		reasons := strings.Join(st.Reasons, "\n")
		for _, w := range c.want {
			if !strings.Contains(reasons, w) {
				t.Errorf("%s: reasons lack %q:\n%s", c.name, w, reasons)
			}
		}
		for _, w := range c.not {
			if strings.Contains(reasons, w) {
				t.Errorf("%s: reasons say %q:\n%s", c.name, w, reasons)
			}
		}
	}
	var b bytes.Buffer
	if err := statusOf(t, pulling).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Pending (ImagePullBackOff)") {
		t.Errorf("the pods' grid does not say why web-2 does not run:\n%s", b.String())
	}
}

// A paused rollout's status did not say it was paused: an ordinal.dev set paused mid-rollout read "web-0, web-1
// still to be updated, yet the next sync deletes no pod", an apps/v1 set paused by kubectl ordinal pause
// "partition 2147483647 holds back ...", and a set on-progress-deadline Pause holds named only the pod it
// waited for, though that pod becoming Ready would not move it. Each now says what holds it and how to go on.
func TestStatusSaysWhatPausesTheRollout(t *testing.T) {
	ext := extendedModule(t)
	deadline, err := replay.ParseScenario([]byte(strings.Replace(string(mustRead(t, filepath.Join("..", "..", "testdata", "scenarios", "progress-deadline.yaml"))),
		`ordinal.dev/progress-deadline-seconds: "60"`, `ordinal.dev/progress-deadline-seconds: "60"`+"\n        ordinal.dev/on-progress-deadline: Pause", 1)))
	if err != nil {
		t.Fatal(err)
	}
	named := func(context.Context, string) (plan.Reconciler, error) { return ext, nil }
	tl, err := replay.Run(context.Background(), deadline, replay.Options{Module: module, NamedModule: named})
	if err != nil {
		t.Fatal(err)
	}
	partitionPaused := edit(t, finalSnapshot(t, "partition-canary"), func(set map[string]any) {
		set["metadata"].(map[string]any)["annotations"] = map[string]any{rollout.PausedPartitionAnnotation: "1"}
		spec(set)["updateStrategy"].(map[string]any)["rollingUpdate"].(map[string]any)["partition"] = 2147483647
		c := spec(set)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c["image"] = "registry.k8s.io/nginx-slim:0.30" // a new release, which the pause holds
	})
	for _, c := range []struct {
		name     string
		snapshot []byte
		state    string
		want     []string
		not      string
	}{
		{"paused", snapshotAfterWith(t, "pause-mid-rollout", 3, named), rollout.StateWaiting,
			[]string{`paused (ordinal.dev/paused: "true"): no pod is created, deleted or updated until kubectl ordinal resume statefulset/web`}, "still to be updated"},
		{"partition", partitionPaused, rollout.StateWaiting,
			[]string{"paused by kubectl ordinal pause: partition 2147483647 holds every pod back (the partition was 1); kubectl ordinal resume statefulset/web lets the rollout go on"}, "partition 2147483647 holds back"},
		{"progress deadline", tl.Final, rollout.StateWaiting, []string{"ordinal.dev/on-progress-deadline: Pause holds the rollout: it made no progress to revision web-",
			"until the template changes (a fix, or kubectl ordinal undo statefulset/web) or the annotation is removed", "OrderedReady: waiting for web-2"}, ""},
		// Settled: nothing is held.
		{"settled", snapshotAfterWith(t, "pause-mid-rollout", 1, named), rollout.StateComplete, nil, "paused"},
	} {
		st := statusWith(t, ext, c.snapshot, false)
		reasons := strings.Join(st.Reasons, "\n")
		if st.State != c.state {
			t.Errorf("%s: state %s, want %s:\n%s", c.name, st.State, c.state, reasons)
		}
		for _, w := range c.want {
			if !strings.Contains(reasons, w) {
				t.Errorf("%s: reasons lack %q:\n%s", c.name, w, reasons)
			}
		}
		if c.not != "" && strings.Contains(reasons, c.not) {
			t.Errorf("%s: reasons say %q:\n%s", c.name, c.not, reasons)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

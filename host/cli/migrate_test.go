package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// liveSet is a StatefulSet as the dynamic client decodes the API server's answer.
func liveSet(t *testing.T, apiVersion, js string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := utiljson.Unmarshal([]byte(js), &obj); err != nil {
		t.Fatal(err)
	}
	obj["apiVersion"] = apiVersion
	return obj
}

const settledSet = `{"kind":"StatefulSet","metadata":{"name":"web","namespace":"prod","uid":"u1","resourceVersion":"7","generation":3,
 "labels":{"app":"web"},"annotations":{"team":"db","kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"spec\":{\"replicas\":3}}\n"},
 "creationTimestamp":"2026-01-01T00:00:00Z","managedFields":[{"manager":"kubectl"}]},
 "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"serviceName":"web","podManagementPolicy":"OrderedReady",
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"app:2"}]}},
  "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}},"revisionHistoryLimit":10},
 "status":{"observedGeneration":3,"replicas":3,"readyReplicas":3,"availableReplicas":3,"currentReplicas":3,"updatedReplicas":3,
  "currentRevision":"web-7f9c","updateRevision":"web-7f9c","collisionCount":1,
  "conditions":[{"type":"Healthy","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`

func TestMigrateKinds(t *testing.T) {
	for _, tc := range []struct {
		to, from, target, err string
	}{
		{to: "ordinal", from: "apps/v1", target: "ordinal.dev/v1"},
		{to: "ordinal.dev/v1", from: "apps/v1", target: "ordinal.dev/v1"},
		{to: "apps", from: "ordinal.dev/v1", target: "apps/v1"},
		{to: "Apps/v1", from: "ordinal.dev/v1", target: "apps/v1"},
		{to: "", err: "--to is required"},
		{to: "kcm", err: `--to "kcm"`},
	} {
		from, target, err := migrateKinds(tc.to)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("--to %q: error %v, want %q", tc.to, err, tc.err)
			}
			continue
		}
		if err != nil || from.apiVersion() != tc.from || target.apiVersion() != tc.target {
			t.Errorf("--to %q: %s -> %s (%v), want %s -> %s", tc.to, from.apiVersion(), target.apiVersion(), err, tc.from, tc.target)
		}
	}
	for arg, want := range map[string]string{"web": "web", "statefulset/web": "web", "sts/web": "web",
		"statefulsets.ordinal.dev/web": "web", "statefulset.ordinal.dev/web": "web", "deployment/web": "", "statefulset/": ""} {
		got, err := parseMigrateArg(arg)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("parseMigrateArg(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
}

func TestMigrateCheckSource(t *testing.T) {
	edit := func(f func(map[string]any)) map[string]any {
		s := liveSet(t, "apps/v1", settledSet)
		f(s)
		return s
	}
	status := func(s map[string]any) map[string]any { return s["status"].(map[string]any) }
	for _, tc := range []struct {
		name         string
		set          map[string]any
		allowRollout bool
		want         []string // substrings of the refusal; none: allowed
	}{
		{name: "settled", set: edit(func(map[string]any) {})},
		{name: "edit not yet synced", set: edit(func(s map[string]any) { status(s)["observedGeneration"] = int64(2) }),
			want: []string{"mid-rollout", "status.observedGeneration 2 < metadata.generation 3", "--allow-rollout"}},
		{name: "rolling update", set: edit(func(s map[string]any) {
			status(s)["updateRevision"] = "web-55aa"
			status(s)["updatedReplicas"] = int64(1)
			status(s)["currentReplicas"] = int64(2)
		}), want: []string{"currentRevision web-7f9c != status.updateRevision web-55aa", "updatedReplicas 1 != spec.replicas 3", "currentReplicas 2 != spec.replicas 3"}},
		{name: "rolling update allowed", allowRollout: true, set: edit(func(s map[string]any) { status(s)["updateRevision"] = "web-55aa" })},
		{name: "scaling", set: edit(func(s map[string]any) { s["spec"].(map[string]any)["replicas"] = int64(5) }),
			want: []string{"updatedReplicas 3 != spec.replicas 5"}},
		{name: "being deleted", allowRollout: true, set: edit(func(s map[string]any) {
			s["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-02T00:00:00Z"
		}), want: []string{"being deleted"}},
		{name: "controlled by an operator", set: edit(func(s map[string]any) {
			s["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "db.example/v1", "kind": "Cluster",
				"name": "main", "uid": "o1", "controller": true}}
		}), want: []string{"controlled by Cluster prod/main"}},
		// hostile probe: a pause is the kind's own and would not carry over (nor could resume undo it there)
		{name: "paused by the partition", allowRollout: true, set: edit(func(s map[string]any) {
			s["metadata"].(map[string]any)["annotations"].(map[string]any)["ordinal.dev/paused-partition"] = "0"
		}), want: []string{"is paused", "kubectl ordinal resume web"}},
		{name: "paused by the extension", allowRollout: true, set: edit(func(s map[string]any) {
			s["metadata"].(map[string]any)["annotations"].(map[string]any)["ordinal.dev/paused"] = "true"
		}), want: []string{"is paused"}},
	} {
		err := checkSource(appsKind, tc.set, tc.allowRollout)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: allowed, want a refusal", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant %q in it", tc.name, err, w)
			}
		}
	}
}

func TestMigrateBuild(t *testing.T) {
	src := liveSet(t, "apps/v1", settledSet)
	m, err := buildMigration(appsKind, ordinalKind, src)
	if err != nil {
		t.Fatal(err)
	}
	// kubectl's record names the new apiVersion (the next kubectl apply merges against it); no uid,
	// resourceVersion, generation or managedFields
	wantMeta := map[string]any{"name": "web", "namespace": "prod", "labels": map[string]any{"app": "web"},
		"annotations": map[string]any{"team": "db",
			lastAppliedAnnotation: `{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","spec":{"replicas":3}}` + "\n"}}
	if !reflect.DeepEqual(m.object["metadata"], wantMeta) {
		t.Errorf("metadata %v\nwant %v", m.object["metadata"], wantMeta)
	}
	if m.object["apiVersion"] != "ordinal.dev/v1" || m.object["kind"] != "StatefulSet" {
		t.Errorf("apiVersion %v kind %v", m.object["apiVersion"], m.object["kind"])
	}
	if !reflect.DeepEqual(m.object["spec"], src["spec"]) {
		t.Errorf("spec changed:\n%v\n%v", m.object["spec"], src["spec"])
	}
	if _, ok := m.object["status"]; ok {
		t.Errorf("the object to create carries a status")
	}
	wantStatus := map[string]any{"replicas": int64(3), "readyReplicas": int64(3), "availableReplicas": int64(3),
		"currentReplicas": int64(3), "updatedReplicas": int64(3), "currentRevision": "web-7f9c", "updateRevision": "web-7f9c",
		"collisionCount": int64(1), "selector": "app=web",
		"conditions": []any{map[string]any{"type": "Healthy", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	if !reflect.DeepEqual(m.status, wantStatus) {
		t.Errorf("status %v\nwant %v", m.status, wantStatus)
	}
	// the source is not changed by building from it
	if _, ok := src["status"].(map[string]any)["observedGeneration"]; !ok {
		t.Errorf("buildMigration changed the source")
	}

	// back to apps/v1: status.selector is not an apps/v1 field
	back := liveSet(t, "ordinal.dev/v1", settledSet)
	back["status"].(map[string]any)["selector"] = "app=web"
	mb, err := buildMigration(ordinalKind, appsKind, back)
	if err != nil {
		t.Fatal(err)
	}
	if rec := mb.object["metadata"].(map[string]any)["annotations"].(map[string]any)[lastAppliedAnnotation]; rec != `{"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"replicas":3}}`+"\n" {
		t.Errorf("to apps/v1: last-applied-configuration %v", rec)
	}
	// a record that is not a JSON object is not carried
	odd := liveSet(t, "apps/v1", settledSet)
	odd["metadata"].(map[string]any)["annotations"].(map[string]any)[lastAppliedAnnotation] = "not json"
	if mo, err := buildMigration(appsKind, ordinalKind, odd); err != nil || mo.object["metadata"].(map[string]any)["annotations"].(map[string]any)[lastAppliedAnnotation] != nil {
		t.Errorf("an unreadable record was carried (%v)", err)
	}
	if _, ok := mb.status["selector"]; ok || mb.object["apiVersion"] != "apps/v1" {
		t.Errorf("to apps/v1: apiVersion %v, status %v", mb.object["apiVersion"], mb.status)
	}
	if mb.status["collisionCount"] != int64(1) || mb.status["currentRevision"] != "web-7f9c" {
		t.Errorf("to apps/v1: revisions not carried: %v", mb.status)
	}

	// a set-based selector in its string form
	sel := liveSet(t, "apps/v1", settledSet)
	sel["spec"].(map[string]any)["selector"] = map[string]any{"matchLabels": map[string]any{"app": "web"},
		"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In", "values": []any{"db", "cache"}}}}
	if ms, err := buildMigration(appsKind, ordinalKind, sel); err != nil || ms.status["selector"] != "app=web,tier in (cache,db)" {
		t.Errorf("selector %v (%v)", ms.status["selector"], err)
	}
}

func TestMigrateBackupRoundTrip(t *testing.T) {
	m, err := buildMigration(appsKind, ordinalKind, liveSet(t, "apps/v1", settledSet))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	objFile, statusFile := backupPaths(dir, ordinalKind, "prod", "web")
	if filepath.Base(objFile) != "ordinal-migrate_prod_web_to-ordinal.json" || filepath.Base(statusFile) != "ordinal-migrate_prod_web_to-ordinal.status.json" {
		t.Errorf("backup files %s %s", objFile, statusFile)
	}
	obj, status, err := m.backupFiles()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(objFile, obj, 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(objFile)
	got, err := readBackup(appsKind, ordinalKind, b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.object, m.object) || !reflect.DeepEqual(got.status, m.status) || got.name != "web" || got.namespace != "prod" {
		t.Errorf("round trip:\n%v %v\n%v %v", got.object, got.status, m.object, m.status)
	}
	var patch map[string]any
	if err := utiljson.Unmarshal(status, &patch); err != nil || !reflect.DeepEqual(patch, map[string]any{"status": m.status}) {
		t.Errorf("status patch %s (%v)", status, err)
	}
	if _, err := readBackup(ordinalKind, appsKind, b); err == nil || !strings.Contains(err.Error(), "not a apps/v1 StatefulSet") {
		t.Errorf("a backup of the other direction: %v", err)
	}
	if _, err := readBackup(appsKind, ordinalKind, []byte("{")); err == nil {
		t.Errorf("a broken backup was read")
	}
}

func TestMigratePlan(t *testing.T) {
	src := liveSet(t, "apps/v1", settledSet)
	m, err := buildMigration(appsKind, ordinalKind, src)
	if err != nil {
		t.Fatal(err)
	}
	deleting := liveSet(t, "apps/v1", settledSet)
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-02T00:00:00Z"
	deleting["metadata"].(map[string]any)["finalizers"] = []any{"orphan"}
	deleting["status"].(map[string]any)["readyReplicas"] = int64(2) // moved on since the backup: the latest is carried
	otherBackup, _ := buildMigration(appsKind, ordinalKind, liveSet(t, "apps/v1", strings.Replace(settledSet, `"app:2"`, `"app:3"`, 1)))
	midRollout := liveSet(t, "apps/v1", strings.Replace(settledSet, `"updateRevision":"web-7f9c"`, `"updateRevision":"web-55aa"`, 1))

	created := liveSet(t, "ordinal.dev/v1", settledSet) // as created: no status yet
	created["status"] = map[string]any{}
	synced := liveSet(t, "ordinal.dev/v1", settledSet) // its controller wrote the same revisions
	syncedOther := liveSet(t, "ordinal.dev/v1", strings.Replace(settledSet, `"collisionCount":1`, `"collisionCount":0`, 1))

	for _, tc := range []struct {
		name           string
		source, target map[string]any
		backup         *migration
		allowRollout   bool
		step           migrateStep
		err, note      string
	}{
		{name: "fresh", source: src, step: stepMigrate},
		{name: "fresh, stale backup of an earlier attempt", source: src, backup: otherBackup, step: stepMigrate},
		{name: "mid-rollout", source: midRollout, err: "mid-rollout"},
		{name: "mid-rollout allowed", source: midRollout, allowRollout: true, step: stepMigrate},
		{name: "target exists too", source: src, target: synced, err: "both a apps/v1 StatefulSet and a ordinal.dev/v1 StatefulSet prod/web exist"},
		{name: "our delete under way", source: deleting, backup: m, step: stepAwaitGone, note: "being deleted by an earlier migration"},
		{name: "someone else's delete", source: deleting, err: "being deleted"},
		{name: "being deleted, backup of another spec", source: deleting, backup: otherBackup, err: "being deleted"},
		{name: "source gone, never created", backup: m, step: stepCreate, note: "creating it from the backup"},
		{name: "nothing anywhere", err: "no apps/v1 StatefulSet prod/web"},
		{name: "created, status never written", target: created, backup: m, step: stepWriteStatus, note: "status never written"},
		{name: "done, backup left", target: synced, backup: m, step: stepDone},
		{name: "done, controller decided without the status", target: syncedOther, backup: m, step: stepDone,
			note: "collisionCount 0, carried 1"},
		{name: "already migrated", target: synced, step: stepDone, note: "already a ordinal.dev/v1 StatefulSet"},
	} {
		step, got, notes, err := planMigrate(migrateState{from: appsKind, to: ordinalKind, namespace: "prod", name: "web",
			source: tc.source, target: tc.target, backup: tc.backup, allowRollout: tc.allowRollout})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v (step %s), want error %q", tc.name, err, step, tc.err)
			}
			continue
		}
		if err != nil || step != tc.step {
			t.Errorf("%s: step %s (%v), want %s", tc.name, step, err, tc.step)
			continue
		}
		if tc.note != "" && !strings.Contains(strings.Join(notes, "\n"), tc.note) {
			t.Errorf("%s: notes %q, want %q", tc.name, notes, tc.note)
		}
		if tc.note == "" && len(notes) > 0 {
			t.Errorf("%s: unexpected notes %q", tc.name, notes)
		}
		if step == stepAwaitGone && got.status["readyReplicas"] != int64(2) {
			t.Errorf("%s: carries the backup's status %v, want the source's latest", tc.name, got.status)
		}
		if (step == stepCreate || step == stepWriteStatus) && got != tc.backup {
			t.Errorf("%s: does not carry the backup", tc.name)
		}
	}
}

func TestMigrateSpecDiff(t *testing.T) {
	src := liveSet(t, "apps/v1", settledSet)["spec"]
	if d := specDiff(src, liveSet(t, "apps/v1", settledSet)["spec"]); len(d) > 0 {
		t.Errorf("same spec: %v", d)
	}
	// the same spec read back from a file: float64 numbers against the dynamic client's int64
	b, _ := json.Marshal(src)
	var fromFile any
	if err := json.Unmarshal(b, &fromFile); err != nil {
		t.Fatal(err)
	}
	if _, isInt := src.(map[string]any)["replicas"].(int64); !isInt {
		t.Fatalf("replicas decoded as %T, want int64 as the dynamic client gives", src.(map[string]any)["replicas"])
	}
	if d := specDiff(src, fromFile); len(d) > 0 {
		t.Errorf("same spec, numbers decoded otherwise: %v", d)
	}
	pruned := liveSet(t, "apps/v1", settledSet)["spec"].(map[string]any)
	delete(pruned, "revisionHistoryLimit")
	pruned["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "app:3"
	want := []string{`- spec.revisionHistoryLimit: 10`, `~ spec.template.spec.containers[app].image: "app:2" -> "app:3"`}
	if d := specDiff(src, pruned); !reflect.DeepEqual(d, want) {
		t.Errorf("specDiff = %q, want %q", d, want)
	}
}

func TestMigrateFinishByHand(t *testing.T) {
	m, _ := buildMigration(appsKind, ordinalKind, liveSet(t, "apps/v1", settledSet))
	rerun := rerunCommand("web", "prod", ordinalKind, "/var/tmp/mig", "/tmp")
	if rerun != "kubectl ordinal migrate statefulset/web -n prod --to ordinal --backup-dir /var/tmp/mig" {
		t.Errorf("rerun %q", rerun)
	}
	if r := rerunCommand("web", "prod", appsKind, "/tmp/", "/tmp"); r != "kubectl ordinal migrate statefulset/web -n prod --to apps" {
		t.Errorf("rerun with the default directory %q", r)
	}
	s := finishByHand(m, "/b/o.json", "/b/o.status.json", rerun, false)
	for _, w := range []string{"apps/v1 StatefulSet prod/web is deleted", rerun, "kubectl create -f /b/o.json",
		"kubectl patch statefulsets.ordinal.dev web -n prod --subresource=status --type=merge --patch-file /b/o.status.json", "rm /b/o.json /b/o.status.json"} {
		if !strings.Contains(s, w) {
			t.Errorf("finishByHand lacks %q:\n%s", w, s)
		}
	}
	if s := finishByHand(m, "/b/o.json", "/b/o.status.json", rerun, true); strings.Contains(s, "kubectl create") {
		t.Errorf("created already, yet told to create:\n%s", s)
	}
}

// Issue 31: the only backup lived in the system's temporary directory and was removed after the migration.
// It now lives in the user's state directory and is kept, under a name a later run does not take for an
// interrupted migration, and the output names it.
func TestMigrateKeepsItsBackupWhereTheUserFindsIt(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/home/u/.state")
	if d := defaultBackupDir(); d != "/home/u/.state/ordinal/migrate" {
		t.Errorf("default backup directory %s", d)
	}
	dir := t.TempDir()
	var out strings.Builder
	r := &migrateRun{out: &out}
	r.objectFile, r.statusFile = backupPaths(dir, ordinalKind, "prod", "web")
	for _, p := range []string{r.objectFile, r.statusFile} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r.keepBackup()
	if _, err := os.Stat(r.objectFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the working backup %s is still there: a later run would resume from it", r.objectFile)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "*.done-*.json"))
	if len(kept) != 2 || r.res.Backup == "" || !strings.Contains(out.String(), "backup kept: "+r.res.Backup) {
		t.Errorf("kept %v, result %q, output %q", kept, r.res.Backup, out.String())
	}
}

// A migration whose new controller adopts no pod (kube-controller-manager's StatefulSet controller off, as
// in make cluster-up's default) says what it waits for after a few polls with nothing adopted, not only at
// --timeout (5 min by default) after a line "0/2" and silence.
func TestMigrateSaysWhatItWaitsFor(t *testing.T) {
	saved := migrateStillWaitingPolls
	migrateStillWaitingPolls = 2
	t.Cleanup(func() { migrateStillWaitingPolls = saved })
	var set map[string]any
	if err := utiljson.Unmarshal([]byte(settledSet), &set); err != nil {
		t.Fatal(err)
	}
	var pods []runtime.Object
	for _, n := range []string{"web-0", "web-1"} {
		pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "prod", Labels: map[string]string{"app": "web"}}})
	}
	out := &strings.Builder{}
	kc := fake.NewClientset(pods...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lists := 0
	kc.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if lists++; lists == migrateStillWaitingPolls+2 { // polls enough to have said it: the wait ends here
			cancel()
		}
		return false, nil, nil
	})
	r := &migrateRun{kc: kc, ns: "prod", name: "web", from: ordinalKind, to: appsKind, out: out}
	if err := r.awaitAdoption(ctx, set); err == nil {
		t.Fatal("the wait ended without an error, with no pod adopted")
	}
	if want := "is kube-controller-manager's StatefulSet controller running with its StatefulSet controller enabled? The migration itself is done"; !strings.Contains(out.String(), want) {
		t.Errorf("output %q does not say %q", out.String(), want)
	}
	if strings.Count(out.String(), "still 0/2") != 1 {
		t.Errorf("said more than once:\n%s", out.String())
	}
}

// kubectl's record is carried as kubectl wrote it but for its apiVersion: an integer beyond float64's 53 bits
// (an int64 field such as terminationGracePeriodSeconds) keeps its digits, so the next kubectl apply's
// three-way merge diffs the manifest against what was applied, not a rounded copy of it.
func TestMigrateLastAppliedKeepsNumbers(t *testing.T) {
	rec := `{"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"template":{"spec":{"terminationGracePeriodSeconds":9007199254740993}}}}` + "\n"
	got, ok := lastAppliedAs(rec, ordinalKind)
	want := `{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","spec":{"template":{"spec":{"terminationGracePeriodSeconds":9007199254740993}}}}` + "\n"
	if !ok || got != want {
		t.Errorf("record %q (%v)\nwant %q", got, ok, want)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/rollout"
)

// pace is how long kwok and hack/podreaper take with each pod of a case: creation -> Running, Running ->
// Ready, deletion -> gone (Go durations, the template's annotations).
type pace struct{ start, ready, termination string }

// fidelityCase is one edit of a live set whose preview is compared with what the cluster then does.
type fidelityCase struct {
	name     string
	replicas int32
	opts     []setOpt
	edit     func(*appsv1.StatefulSet)
	pace     pace
	// what the preview and the cluster must both show: pods deleted (replaced or removed), pods created, pods
	// updated in place (extension in-place-update: the pod kept, its revision label moved)
	deleted, created, inPlace []int
	// createdInAnyOrder: Parallel pods are created as their predecessors go, which timing orders
	createdInAnyOrder bool
	// end: replicas at the end, and of them at the update revision; stuck: the edit's pods are never Ready,
	// the rollout stops (the preview says "stuck", `kubectl ordinal status` says the next sync waits)
	end, updated int32
	stuck        bool
	// warm: the set is rolled once before the edit (so its events show how long its pods take to go, as a
	// live set's do); only OnDelete sets are not
	warm bool
}

// Issue 30 item 3: what `kubectl ordinal preview` says an edit of a live set will do is what the controller
// then does on the cluster. Each case's pods are paced by kwok (start, Ready and termination delays on the
// template); the set is created and rolled once, so it has a pace to learn, then the preview of the edit is
// made (the live set, its pods, its events), the same manifest applied with kubectl, and a watch of the pods
// compared with the preview:
//   - the pods deleted and created, in order (a Parallel set's creations, which timing orders, as a set);
//   - the batches: the cluster's deletions grouped by what happened between them (nothing: one sync's batch);
//     the first batch is the preview's, and each later preview batch is one or more of the cluster's (two
//     pods Ready a few milliseconds apart may reach the controller in two syncs);
//   - the end: the rollout complete, partitioned or, for a revision never Ready, stopped where the preview
//     says, which `kubectl ordinal status` confirms from the live state (the next sync writes nothing).
//
// The durations (predicted, and from kubectl apply to the set's status) are measured and logged, never
// judged: docs/evidence/fidelity.md has the table.
func TestPreviewPredictsTheClusterRollout(t *testing.T) {
	t.Parallel()
	requireHookEnv(t)
	var mu sync.Mutex
	var rows []string
	t.Cleanup(func() {
		slices.Sort(rows)
		t.Logf("previews vs the cluster (predicted: the preview's duration at the pace it learned; took: kubectl apply to the set's status):\n%-52s %-12s %9s %9s %6s  %-22s %s\n%s",
			"edit", "kwok pace", "predicted", "took", "ratio", "batches (preview)", "pace learned", strings.Join(rows, "\n"))
	})
	version := func(v string) func(*appsv1.StatefulSet) {
		return func(s *appsv1.StatefulSet) { s.Spec.Template.Annotations[annVersion] = v }
	}
	replicas := func(n int32) func(*appsv1.StatefulSet) {
		return func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To(n) }
	}
	partition := func(n int32) setOpt {
		return func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(n)}}
		}
	}
	neverReady := func(s *appsv1.StatefulSet) {
		// kwok is told by its annotation, the preview's kubelet model by the reference harness's
		s.Spec.Template.Annotations[annVersion] = "bad"
		s.Spec.Template.Annotations[annNeverReady] = "true"
		s.Spec.Template.Annotations["oracle.test/never-ready"] = "true"
	}
	// quick: each step at the API's timestamp resolution (a second), so the suite stays short; the README's table
	// is a run with ORDINAL_PREVIEW_PACE=START/READY/TERMINATION (e.g. 3s/2s/2s) for it
	quick, slow := pace{"1s", "1s", "1s"}, pace{"2s", "1s", "3s"}
	if v := os.Getenv("ORDINAL_PREVIEW_PACE"); v != "" {
		d := strings.Split(v, "/")
		if len(d) != 3 {
			t.Fatalf("ORDINAL_PREVIEW_PACE=%q: want START/READY/TERMINATION, Go durations", v)
		}
		for _, x := range d {
			if _, err := time.ParseDuration(x); err != nil {
				t.Fatalf("ORDINAL_PREVIEW_PACE=%q: %v", v, err)
			}
		}
		quick = pace{d[0], d[1], d[2]}
	}
	cases := []fidelityCase{
		{name: "OrderedReady template change", replicas: 4, edit: version("v2"), pace: quick,
			deleted: []int{3, 2, 1, 0}, created: []int{3, 2, 1, 0}, end: 4, updated: 4, warm: true},
		{name: "OrderedReady template change slow pods", replicas: 3, edit: version("v2"), pace: slow,
			deleted: []int{2, 1, 0}, created: []int{2, 1, 0}, end: 3, updated: 3, warm: true},
		{name: "partition 2", replicas: 4, edit: func(s *appsv1.StatefulSet) { partition(2)(s); version("v2")(s) }, pace: quick,
			deleted: []int{3, 2}, created: []int{3, 2}, end: 4, updated: 2, warm: true},
		{name: "partition lowered 2 to 0", replicas: 4, opts: []setOpt{partition(2)}, edit: func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0)
		}, pace: quick, deleted: []int{1, 0}, created: []int{1, 0}, end: 4, updated: 4, warm: true},
		{name: "scale down", replicas: 4, edit: replicas(2), pace: quick, deleted: []int{3, 2}, end: 2, updated: 2, warm: true},
		{name: "scale up", replicas: 2, edit: replicas(5), pace: quick, created: []int{2, 3, 4}, end: 5, updated: 5, warm: true},
		{name: "Parallel maxUnavailable 2 template change", replicas: 4, opts: []setOpt{parallel, maxUnavailable(2)}, edit: version("v2"), pace: quick,
			deleted: []int{3, 2, 1, 0}, created: []int{0, 1, 2, 3}, createdInAnyOrder: true, end: 4, updated: 4, warm: true},
		{name: "Parallel scale down", replicas: 4, opts: []setOpt{parallel}, edit: replicas(1), pace: quick, deleted: []int{3, 2, 1}, end: 1, updated: 1, warm: true},
		{name: "Parallel scale up", replicas: 1, opts: []setOpt{parallel}, edit: replicas(4), pace: quick,
			created: []int{1, 2, 3}, createdInAnyOrder: true, end: 4, updated: 4, warm: true},
		{name: "minReadySeconds 2 template change", replicas: 3, opts: []setOpt{minReady(2)}, edit: version("v2"), pace: quick,
			deleted: []int{2, 1, 0}, created: []int{2, 1, 0}, end: 3, updated: 3, warm: true},
		{name: "scale down deleting claims", replicas: 4,
			opts: []setOpt{withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType)},
			edit: replicas(2), pace: quick, deleted: []int{3, 2}, end: 2, updated: 2, warm: true},
		{name: "never-Ready revision OrderedReady", replicas: 4, edit: neverReady, pace: quick,
			deleted: []int{3}, created: []int{3}, stuck: true, warm: true},
		{name: "never-Ready revision Parallel maxUnavailable 2", replicas: 4, opts: []setOpt{parallel, maxUnavailable(2)}, edit: neverReady, pace: quick,
			deleted: []int{3, 2}, created: []int{2, 3}, createdInAnyOrder: true, stuck: true, warm: true},
		{name: "OnDelete template change", replicas: 3, opts: []setOpt{onDelete}, edit: version("v2"), pace: quick, end: 3, updated: 0},
		// extension in-place-update, turned on by the edit itself (the set's warm-up recreated its pods, so its
		// events still teach the termination pace): no pod deleted or created, each updated in place, in
		// upstream's order and batches; kwok restarts a container after the start delay and makes it Ready after
		// the ready delay, the preview's kubelet likewise
		{name: "OrderedReady image change in place", replicas: 4, edit: inPlaceImageEdit, pace: pace{"2s", "2s", "1s"},
			inPlace: []int{3, 2, 1, 0}, end: 4, updated: 4, warm: true},
		{name: "Parallel maxUnavailable 2 in place", replicas: 4, opts: []setOpt{parallel, maxUnavailable(2)}, edit: inPlaceImageEdit, pace: quick,
			inPlace: []int{3, 2, 1, 0}, end: 4, updated: 4, warm: true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			row := previewAgainstCluster(t, fmt.Sprintf("pf%d", i), c)
			mu.Lock()
			rows = append(rows, row)
			mu.Unlock()
		})
	}
}

// previewAgainstCluster runs one case on a set named name and returns its row of the table.
func previewAgainstCluster(t *testing.T, name string, c fidelityCase) string {
	ctx, ns, _, tr := begin(t, name, true)
	set := newSet(name, c.replicas, c.opts...)
	set.Spec.Template.Annotations[annStartDelay] = c.pace.start
	set.Spec.Template.Annotations[annReadyDelay] = c.pace.ready
	set.Spec.Template.Annotations[annTerminationDelay] = c.pace.termination
	set.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](10) // above the termination delay
	createSet(t, ctx, ns, set)
	rolled := func(s *appsv1.StatefulSet) bool { // every pod Ready, and those above the partition at the update revision
		st, want := s.Status, *s.Spec.Replicas
		if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			want -= *ru.Partition
		}
		return st.ObservedGeneration == s.Generation && st.Replicas == *s.Spec.Replicas && st.ReadyReplicas == st.Replicas &&
			st.AvailableReplicas == st.Replicas && st.UpdatedReplicas >= want
	}
	waitSet(t, ctx, ns, name, "created", 3*time.Minute, rolled)
	if c.warm { // a rollout before the edit: the set's events then say how long its pods take to go
		patchSet(t, ctx, ns, name, `{"spec":{"template":{"metadata":{"annotations":{"e2e.ordinal.dev/warm-up":"1"}}}}}`)
		waitSet(t, ctx, ns, name, "rolled once", 3*time.Minute, rolled)
	}
	edit := getSet(t, ctx, ns, name)
	c.edit(edit)
	edit.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	edit.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: edit.Annotations, Labels: edit.Labels}
	edit.Status = appsv1.StatefulSetStatus{}
	f := writeManifest(t, edit)
	out, perr, code := plugin(t, ctx, "preview", "-f", f, "-n", ns, "-o", "json")
	if want := map[bool]int{false: 0, true: 6}[c.stuck]; code != want { // 6: the rollout would be stuck (a CI gate)
		t.Fatalf("kubectl ordinal preview: exit %d\n%s%s", code, out, perr)
	}
	var res struct {
		Preview struct {
			Steps []struct {
				Actions []string `json:"actions"` // "delete Pod web-3", "create Pod web-3 (revision B)"
			} `json:"steps"`
			Batches [][]string `json:"batches"`
			// extension in-place-update: each sync's pods moved to the update revision, and how
			Updates [][]struct {
				Pod     string `json:"pod"`
				InPlace bool   `json:"inPlace"`
			} `json:"updates"`
			Outcome struct {
				Result          string  `json:"result"`
				DurationSeconds float64 `json:"durationSeconds"`
			} `json:"outcome"`
			Pace replay.Pace `json:"pace"`
		} `json:"preview"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("preview JSON: %v\n%.2000s", err, out)
	}
	var predictedDeleted, predictedCreated []int
	for _, s := range res.Preview.Steps {
		for _, a := range s.Actions {
			w := strings.Fields(a)
			if len(w) < 3 || w[1] != "Pod" {
				continue
			}
			switch w[0] {
			case "delete":
				predictedDeleted = append(predictedDeleted, podOrdinal(w[2]))
			case "create":
				predictedCreated = append(predictedCreated, podOrdinal(w[2]))
			}
		}
	}
	if c.createdInAnyOrder {
		slices.Sort(predictedCreated)
	}
	// the preview's in-place updates, as its JSON has them (typed: not read from the steps' words)
	var predictedInPlace []int
	var predictedInPlaceBatches [][]int
	for _, b := range res.Preview.Updates {
		var batch []int
		for _, u := range b {
			if u.InPlace {
				batch = append(batch, podOrdinal(u.Pod))
			}
		}
		if len(batch) > 0 {
			predictedInPlace = append(predictedInPlace, batch...)
			predictedInPlaceBatches = append(predictedInPlaceBatches, batch)
		}
	}
	if !slices.Equal(predictedDeleted, c.deleted) || !slices.Equal(predictedCreated, c.created) || !slices.Equal(predictedInPlace, c.inPlace) {
		t.Fatalf("the preview deletes %v, creates %v and updates in place %v, want %v, %v and %v (outcome %s)\n%.3000s", predictedDeleted, predictedCreated,
			predictedInPlace, c.deleted, c.created, c.inPlace, res.Preview.Outcome.Result, out)
	}
	if c.stuck != (res.Preview.Outcome.Result == "stuck") {
		t.Fatalf("the preview's outcome is %q (stuck: %v)", res.Preview.Outcome.Result, c.stuck)
	}
	learned := res.Preview.Pace.Learned
	if res.Preview.Pace.From != replay.PaceLearned || learned == nil || learned.ReadyPods == 0 {
		t.Errorf("the preview's pace %+v (learned %+v): want it learned from the set's pods", res.Preview.Pace, learned)
	}
	if c.warm && (learned == nil || learned.Replacements == 0) {
		t.Errorf("the preview's pace %+v (learned %+v): want the termination delay learned from the set's events", res.Preview.Pace, learned)
	}
	var predictedBatches [][]int
	for _, b := range res.Preview.Batches {
		predictedBatches = append(predictedBatches, podOrdinalsOf(b))
	}

	mark := tr.mark()
	accepted := whenGenerationPasses(ctx, ns, name, getSet(t, ctx, ns, name).Generation)
	if o, e, code := kubectl(t, ctx, "", "apply", "--server-side", "--force-conflicts", "-f", f); code != 0 {
		t.Fatalf("kubectl apply: exit %d\n%s%s", code, o, e)
	}
	// the preview's clock starts with the edit, the rollout's when the API server has it (not kubectl's start)
	applied, ok := <-accepted
	if !ok {
		t.Fatalf("the edit of %s/%s was never seen by a watch", ns, name)
	}
	var took time.Duration
	if c.stuck {
		// the preview's last step is its last change: the edit's pods started, Running and never Ready
		tr.waitFor(ctx, "the edit's pods created and Running", 3*time.Minute, func(v podView) bool {
			if len(tr.stepsOfLocked(stepCreated, mark)) < len(c.created) {
				return false
			}
			for _, o := range c.created {
				if p := v.pod(o); p == nil || p.Status.Phase != corev1.PodRunning {
					return false
				}
			}
			return true
		})
		took = time.Since(applied)
		// the live state's next sync writes nothing: the rollout stops where the preview says
		waitPluginStatus(t, ctx, ns, name, func(st rollout.Status) bool {
			return st.State == rollout.StateWaiting && st.ObservedGeneration == st.Generation && st.UpdatedReplicas == int32(len(c.created)) &&
				len(st.Next.Writes) == 0 && len(st.Reasons) > 0
		})
	} else {
		waitSet(t, ctx, ns, name, "the edit carried out", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
			return s.Status.ObservedGeneration == s.Generation && s.Status.Replicas == c.end && s.Status.ReadyReplicas == c.end &&
				s.Status.AvailableReplicas == c.end && s.Status.UpdatedReplicas == c.updated // available: minReadySeconds passed
		})
		took = time.Since(applied)
		tr.waitFor(ctx, fmt.Sprintf("%d pods Ready", c.end), 3*time.Minute, func(v podView) bool { return v.count() == int(c.end) })
	}
	wantOrdinals(t, "pods the controller deleted", ordinals(tr.stepsOf(stepTerminating, mark)), c.deleted...)
	created := ordinals(tr.stepsOf(stepCreated, mark))
	if c.createdInAnyOrder {
		slices.Sort(created)
	}
	wantOrdinals(t, "pods the controller created", created, c.created...)
	batches := tr.deletionBatches(mark)
	if !sameBatches(batches, predictedBatches) {
		t.Errorf("the cluster deleted in batches %v, the preview in %v: want the same first batch, and each later one of the preview's made of the cluster's", batches, predictedBatches)
	}
	// in place: a pod's revision label moving while its uid stays, in the preview's order and batches
	inPlace := tr.inPlaceBatches(mark)
	var inPlaceOrder []int
	for _, b := range inPlace {
		inPlaceOrder = append(inPlaceOrder, b...)
	}
	wantOrdinals(t, "pods the controller updated in place", inPlaceOrder, c.inPlace...)
	if !sameBatches(inPlace, predictedInPlaceBatches) {
		t.Errorf("the cluster updated in place in batches %v, the preview in %v: want the same first batch, and each later one of the preview's made of the cluster's", inPlace, predictedInPlaceBatches)
	}
	if len(c.inPlace) > 0 {
		batches, predictedBatches = inPlace, predictedInPlaceBatches // the table's column
	}
	predicted := time.Duration(res.Preview.Outcome.DurationSeconds * float64(time.Second))
	ratio := "-"
	if predicted > 0 {
		ratio = fmt.Sprintf("%.2fx", took.Seconds()/predicted.Seconds())
	}
	t.Logf("predicted and done: deleted %v, in place %v, in batches %v (preview %v), created %v", c.deleted, c.inPlace, batches, predictedBatches, c.created)
	return fmt.Sprintf("%-52s %-12s %9s %9s %6s  %-22s %s", c.name, c.pace.start+"/"+c.pace.ready+"/"+c.pace.termination,
		predicted.Round(100*time.Millisecond), took.Round(100*time.Millisecond), ratio, batchString(batches)+" ("+batchString(predictedBatches)+")", res.Preview.Pace)
}

func podOrdinalsOf(names []string) []int {
	var out []int
	for _, n := range names {
		out = append(out, podOrdinal(n))
	}
	return out
}

func batchString(bs [][]int) string {
	var parts []string
	for _, b := range bs {
		parts = append(parts, strings.Trim(fmt.Sprint(b), "[]"))
	}
	return "[" + strings.Join(parts, "][") + "]"
}

// inPlaceImageEdit turns on extension in-place-update (the extended module, InPlaceIfPossible) and changes the
// container's image: a change each pod takes in place.
func inPlaceImageEdit(s *appsv1.StatefulSet) {
	inPlace("InPlaceIfPossible")(s)
	s.Spec.Template.Spec.Containers[0].Image = inPlaceImage
}

// pluginOutput is `kubectl ordinal ARGS`'s standard output, for a goroutine (plugin fails its test).
func pluginOutput(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, hookEnv.kubectl, append([]string{"ordinal"}, append(args, "--kubeconfig", cfg.kubeconfig)...)...)
	cmd.Env = append(os.Environ(), "PATH="+hookEnv.pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	return string(out), err
}

// deletionBatches groups the pod deletions since mark by what happened between them: deletions with no
// other step of any pod between them (created, Ready, gone) were one sync's batch.
func (tr *podTracker) deletionBatches(mark int) [][]int { return tr.batchesOf(stepTerminating, mark) }

// inPlaceBatches groups the in-place updates since mark (a pod's revision label moved, its uid the same) the
// same way.
func (tr *podTracker) inPlaceBatches(mark int) [][]int { return tr.batchesOf(stepRevised, mark) }

// batchesOf groups the steps of kind since mark by what happened between them: steps of that kind with no
// other step of any pod between them were one sync's batch.
func (tr *podTracker) batchesOf(kind stepKind, mark int) [][]int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out [][]int
	var cur []int
	for _, s := range tr.steps[min(mark, len(tr.steps)):] {
		if s.kind == kind {
			cur = append(cur, s.ordinal)
			continue
		}
		if len(cur) > 0 {
			out, cur = append(out, cur), nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// sameBatches: the same first batch (one sync, before anything else happened), and every later batch of the
// preview the union of one or more consecutive batches of the cluster's (the order within a batch aside).
func sameBatches(cluster, preview [][]int) bool {
	if len(cluster) == 0 || len(preview) == 0 {
		return len(cluster) == len(preview)
	}
	sorted := func(b []int) []int { s := slices.Clone(b); slices.Sort(s); return s }
	if !slices.Equal(sorted(cluster[0]), sorted(preview[0])) {
		return false
	}
	i := 1
	for _, pb := range preview[1:] {
		var got []int
		for len(got) < len(pb) && i < len(cluster) {
			got = append(got, cluster[i]...)
			i++
		}
		if !slices.Equal(sorted(got), sorted(pb)) {
			return false
		}
	}
	return i == len(cluster)
}

// waitPluginStatus asks `kubectl ordinal status` until cond holds (the live state, as the module reads it).
func waitPluginStatus(t *testing.T, ctx context.Context, ns, name string, cond func(rollout.Status) bool) {
	t.Helper()
	var last string
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		out, perr, code := plugin(t, ctx, "status", name, "-n", ns, "-o", "json")
		last = out + perr
		var st rollout.Status
		if code == 0 && json.Unmarshal([]byte(out), &st) == nil && cond(st) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("kubectl ordinal status: %v; last answer:\n%s", ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
	t.Fatalf("kubectl ordinal status never said what was expected; last answer:\n%s", last)
}

// The batch comparison can fail: a different first batch, a preview batch split differently than the
// cluster's, a deletion the preview does not have.
func TestSameBatchesCatchesDifferences(t *testing.T) {
	for _, c := range []struct {
		cluster, preview [][]int
		want             bool
	}{
		{[][]int{{3, 2}, {1}, {0}}, [][]int{{3, 2}, {1, 0}}, true}, // two pods Ready apart: two syncs
		{[][]int{{2, 3}, {1, 0}}, [][]int{{3, 2}, {0, 1}}, true},   // order within a batch aside
		{nil, nil, true},
		{[][]int{{3}, {2}, {1, 0}}, [][]int{{3, 2}, {1, 0}}, false}, // the first batch split
		{[][]int{{3, 2}, {1, 0}}, [][]int{{3, 2}, {1}, {0}}, false}, // the cluster took two the preview took apart
		{[][]int{{3, 2}, {1}}, [][]int{{3, 2}, {1, 0}}, false},
		{[][]int{{3, 2}, {1, 0}, {0}}, [][]int{{3, 2}, {1, 0}}, false},
		{[][]int{{3}}, nil, false},
	} {
		if got := sameBatches(c.cluster, c.preview); got != c.want {
			t.Errorf("sameBatches(%v, %v) = %v, want %v", c.cluster, c.preview, got, c.want)
		}
	}
}

// whenGenerationPasses watches the set and sends the time a watch event first shows its generation above gen
// (the API server took an edit of its spec); it closes the channel without a time if ctx ends first.
func whenGenerationPasses(ctx context.Context, ns, name string, gen int64) <-chan time.Time {
	out := make(chan time.Time, 1)
	lw := setListWatch(ns, name)
	synced := make(chan struct{})
	go func() {
		defer close(out)
		var once sync.Once
		_, err := watchtools.UntilWithSync(ctx, lw, &appsv1.StatefulSet{}, func(cache.Store) (bool, error) {
			once.Do(func() { close(synced) })
			return false, nil
		}, func(ev watch.Event) (bool, error) {
			s, ok := ev.Object.(*appsv1.StatefulSet)
			return ok && s.Generation > gen, nil
		})
		once.Do(func() { close(synced) })
		if err == nil {
			out <- time.Now()
		}
	}()
	<-synced // the watch is up before the edit is made
	return out
}

//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Issue 30 item 3, the order: what `kubectl ordinal preview` says an edit of a live set will do is what the
// controller then does on the cluster. For each edit, the preview is made first (the live set, its pods, the
// pace learned from them), then the same manifest is applied with kubectl, and the pods the controller
// replaced, removed and created (a watch of the namespace's pods) are compared with the preview's: the same
// pods, in the same order (a Parallel set's creations, which timing orders, as a set). Batches and
// durations, which depend on timing, are not compared here: where kwok is told how long pods take to be
// Ready, the preview's duration and the rollout's are measured and logged (README "Fidelity"); the positive
// signal is the rollout's end.
func TestPreviewPredictsTheClusterRollout(t *testing.T) {
	t.Parallel()
	requireHookEnv(t)
	var mu sync.Mutex
	var rows []string
	t.Cleanup(func() {
		t.Logf("previews vs the cluster (kwok pods Ready after the delay; predicted from the preview's pace, done from kubectl apply to the set's status):\n%-66s %9s %9s %7s  %s\n%s",
			"edit", "predicted", "took", "ratio", "pace", strings.Join(rows, "\n"))
	})
	for _, c := range []struct {
		name     string
		replicas int32
		opts     []setOpt
		edit     func(*appsv1.StatefulSet)
		end      int32 // replicas at the end
		updated  int32 // of them, at the update revision at the end
		// what the preview and the cluster must both show: pods deleted (replaced or removed), pods created
		deleted, created []int
		// createdInAnyOrder: Parallel pods are created as their predecessors go, which timing orders
		createdInAnyOrder bool
		// readyDelay, when set, is how long kwok takes to make each pod Running and Ready (the annotation
		// e2e.ordinal.dev/ready-delay); the preview's duration is then compared with the rollout's, and logged
		readyDelay string
	}{
		{"template change", 4, nil, func(s *appsv1.StatefulSet) { s.Spec.Template.Annotations[annVersion] = "v2" }, 4, 4,
			[]int{3, 2, 1, 0}, []int{3, 2, 1, 0}, false, ""},
		{"partition 2", 4, nil, func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2)}}
			s.Spec.Template.Annotations[annVersion] = "v2"
		}, 4, 2, []int{3, 2}, []int{3, 2}, false, ""},
		{"scale down", 4, nil, func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](2) }, 2, 2, []int{3, 2}, nil, false, ""},
		{"scale up", 2, nil, func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](4) }, 4, 4, nil, []int{2, 3}, false, ""},
		{"Parallel maxUnavailable 2 template change", 4, []setOpt{parallel, maxUnavailable(2)},
			func(s *appsv1.StatefulSet) { s.Spec.Template.Annotations[annVersion] = "v2" }, 4, 4, []int{3, 2, 1, 0}, []int{0, 1, 2, 3}, true, ""},
		{"Parallel scale down", 4, []setOpt{parallel}, func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](1) }, 1, 1, []int{3, 2, 1}, nil, false, ""},
		{"template change with pods Ready after 2s", 4, nil, func(s *appsv1.StatefulSet) { s.Spec.Template.Annotations[annVersion] = "v2" }, 4, 4,
			[]int{3, 2, 1, 0}, []int{3, 2, 1, 0}, false, "2s"},
		{"scale up with pods Ready after 2s", 2, nil, func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](5) }, 5, 5, nil, []int{2, 3, 4}, false, "2s"},
		{"Parallel maxUnavailable 2 template change with pods Ready after 2s", 4, []setOpt{parallel, maxUnavailable(2)},
			func(s *appsv1.StatefulSet) { s.Spec.Template.Annotations[annVersion] = "v2" }, 4, 4, []int{3, 2, 1, 0}, []int{0, 1, 2, 3}, true, "2s"},
		{"minReadySeconds 3 template change with pods Ready after 1s", 3, []setOpt{minReady(3)},
			func(s *appsv1.StatefulSet) { s.Spec.Template.Annotations[annVersion] = "v2" }, 3, 3, []int{2, 1, 0}, []int{2, 1, 0}, false, "1s"},
		{"scale down deleting claims", 4, []setOpt{withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType)},
			func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](2) }, 2, 2, []int{3, 2}, nil, false, ""},
		{"OnDelete template change", 3, []setOpt{onDelete}, func(s *appsv1.StatefulSet) { s.Spec.Template.Annotations[annVersion] = "v2" }, 3, 0, nil, nil, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "pf" + fmt.Sprint(len(c.name)) // short and distinct per case
			ctx, ns, _, tr := begin(t, name, true)
			set := newSet(name, c.replicas, c.opts...)
			if c.readyDelay != "" {
				set.Spec.Template.Annotations[annReadyDelay] = c.readyDelay
				set.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0) // the pods go at once: podreaper
			}
			createSet(t, ctx, ns, set)
			waitRolledOut(t, ctx, ns, name, c.replicas)
			edit := getSet(t, ctx, ns, name)
			c.edit(edit)
			edit.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
			edit.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: edit.Annotations, Labels: edit.Labels}
			edit.Status = appsv1.StatefulSetStatus{}
			f := writeManifest(t, edit)
			out, perr, code := plugin(t, ctx, "preview", "-f", f, "-n", ns, "-o", "json")
			if code != 0 {
				t.Fatalf("kubectl ordinal preview: exit %d\n%s%s", code, out, perr)
			}
			var res struct {
				Preview struct {
					Steps []struct {
						Actions []string `json:"actions"` // "delete Pod web-3", "create Pod web-3 (revision B)"
					} `json:"steps"`
					Outcome struct{ Result, Duration string } `json:"outcome"`
					Pace    string                            `json:"pace"`
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
			if !slices.Equal(predictedDeleted, c.deleted) || !slices.Equal(predictedCreated, c.created) {
				t.Fatalf("the preview deletes %v and creates %v, want %v and %v (outcome %s)\n%.3000s", predictedDeleted, predictedCreated,
					c.deleted, c.created, res.Preview.Outcome.Result, out)
			}
			if !strings.Contains(res.Preview.Pace, "learned from") {
				t.Errorf("the preview's pace %q: want it learned from the set's pods", res.Preview.Pace)
			}

			mark := tr.mark()
			applied := time.Now()
			if o, e, code := kubectl(t, ctx, "", "apply", "--server-side", "--force-conflicts", "-f", f); code != 0 {
				t.Fatalf("kubectl apply: exit %d\n%s%s", code, o, e)
			}
			final := waitSet(t, ctx, ns, name, "the edit carried out", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
				return s.Status.ObservedGeneration == s.Generation && s.Status.Replicas == c.end && s.Status.ReadyReplicas == c.end &&
					s.Status.AvailableReplicas == c.end && s.Status.UpdatedReplicas == c.updated // available: minReadySeconds passed
			})
			took := time.Since(applied)
			tr.waitFor(ctx, fmt.Sprintf("%d pods Ready", c.end), 3*time.Minute, func(v podView) bool { return v.count() == int(c.end) })
			if c.readyDelay != "" { // measured, not judged: the table in README "Fidelity"
				predicted, err := time.ParseDuration(res.Preview.Outcome.Duration)
				if err != nil {
					t.Fatalf("the preview's duration %q: %v", res.Preview.Outcome.Duration, err)
				}
				mu.Lock()
				rows = append(rows, fmt.Sprintf("%-66s %9s %9s %6.2fx  %s", c.name, predicted.Round(100*time.Millisecond),
					took.Round(100*time.Millisecond), took.Seconds()/predicted.Seconds(), res.Preview.Pace))
				mu.Unlock()
			}
			wantOrdinals(t, "pods the controller deleted", ordinals(tr.stepsOf(stepTerminating, mark)), c.deleted...)
			created := ordinals(tr.stepsOf(stepCreated, mark))
			if c.createdInAnyOrder {
				slices.Sort(created)
			}
			wantOrdinals(t, "pods the controller created", created, c.created...)
			t.Logf("predicted and done: deleted %v, created %v; final %s", c.deleted, c.created, statusString(final))
		})
	}
}

package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// scaleReviewOf is the review kube-apiserver sends for `kubectl scale statefulset/NAME --replicas=to` (the
// scale subresource of a set of kind t): autoscaling/v1 Scales, old and new, not the set.
func scaleReviewOf(t testing.TB, kind snapshot.Target, set *appsv1.StatefulSet, from, to int32, dryRun bool) *admissionv1.AdmissionReview {
	scale := func(n int32) *autoscalingv1.Scale {
		return &autoscalingv1.Scale{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
			ObjectMeta: metav1.ObjectMeta{Name: set.Name, Namespace: set.Namespace, UID: set.UID, ResourceVersion: set.ResourceVersion},
			Spec:       autoscalingv1.ScaleSpec{Replicas: n}, Status: autoscalingv1.ScaleStatus{Replicas: from}}
	}
	req := &admissionv1.AdmissionRequest{
		UID: types.UID(fmt.Sprintf("req-%d", time.Now().UnixNano())), Kind: metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"},
		Resource:    metav1.GroupVersionResource{Group: kind.GroupVersion.Group, Version: "v1", Resource: kind.Resource},
		SubResource: "scale", Name: set.Name, Namespace: set.Namespace, Operation: admissionv1.Update, DryRun: ptr.To(dryRun),
		Object: raw(t, scale(to)), OldObject: raw(t, scale(from)),
	}
	return &admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req}
}

// storedSet is a Config.GetSet that answers with set (a copy, as a GET would) and records what it was asked.
func storedSet(set *appsv1.StatefulSet, asked *[]string) func(context.Context, snapshot.Target, string, string) (*appsv1.StatefulSet, error) {
	return func(_ context.Context, t snapshot.Target, ns, name string) (*appsv1.StatefulSet, error) {
		*asked = append(*asked, t.APIVersion()+" "+ns+"/"+name)
		if ns != set.Namespace || name != set.Name {
			return nil, errors.New("not found")
		}
		return set.DeepCopy(), nil
	}
}

// kubectl scale and autoscalers write a set's replicas through its scale subresource, which carries no set:
// the webhook reads the set and previews the scale as the same edit of spec.replicas, so a scale-down is
// said, and --deny-pvc-deletion denies one that deletes claims, whichever way it is made. Before, a scale
// through the subresource was not reviewed at all.
func TestScaleSubresourceIsPreviewedAsAReplicasEdit(t *testing.T) {
	w := newWorld(t, 5, "OrderedReady", 1, "Delete", "")
	var asked []string
	f := newFixture(t, w.src, nil, func(c *Config) { c.GetSet = storedSet(w.set, &asked) })
	resp := f.post(t, scaleReviewOf(t, snapshot.StatefulSetTarget, w.set, 5, 3, false))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "scaling 5→3 deletes web-4, web-3", "whenScaled=Delete: scaling 5→3 deletes PVCs data-web-3, data-web-4 and their data")
	if want := []string{"apps/v1 " + w.set.Namespace + "/web"}; fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Errorf("read sets %v, want %v", asked, want)
	}
	if f.eventCount() != 1 {
		t.Errorf("%d events recorded for an allowed scale, want the preview's one", f.eventCount())
	} else if ev, gen, scaled := <-f.events.Events, w.set.Generation+1, w.set.Spec.DeepCopy(); !strings.HasSuffix(ev, fmt.Sprintf(" map[%s:%d %s:%s]",
		rollout.AnnotationPreviewedGeneration, gen, rollout.AnnotationPreviewedSpec, rollout.SpecDigest(func() *appsv1.StatefulSetSpec { scaled.Replicas = ptr.To[int32](3); return scaled }()))) {
		// a change of spec.replicas raises the generation; the spec is the set's with the Scale's replicas
		t.Errorf("event %q: want the generation the scale gives the set, %d, and the digest of the scaled spec", ev, gen)
	}
	// The same answer as the edit of spec.replicas it is.
	edit := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](3) })
	if viaSet := f.post(t, reviewOf(t, admissionv1.Update, w.set, edit, false)); strings.Join(viaSet.Warnings, "\n") != strings.Join(resp.Warnings, "\n") {
		t.Errorf("the scale's preview differs from the replicas edit's:\nscale: %q\nedit:  %q", resp.Warnings, viaSet.Warnings)
	}

	deny := newFixture(t, w.src, nil, func(c *Config) { c.GetSet = storedSet(w.set, &asked); c.DenyPVCDeletion = true })
	resp = deny.post(t, scaleReviewOf(t, snapshot.StatefulSetTarget, w.set, 5, 3, true))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 403 || !strings.Contains(resp.Result.Message, "data-web-3, data-web-4") {
		t.Fatalf("a scale-down deleting claims allowed with --deny-pvc-deletion: %+v", resp)
	}
	// Up: allowed, and kept (no claim is deleted).
	if resp = deny.post(t, scaleReviewOf(t, snapshot.StatefulSetTarget, w.set, 5, 7, true)); !resp.Allowed {
		t.Fatalf("a scale-up denied: %v", resp.Result)
	} else {
		wantWarning(t, resp.Warnings, "scaling 5→7")
	}
}

// A scale that does not change the replica count is not previewed, nor is one of a set being deleted; the
// status subresource and a scale of another kind's resource are not reviewed.
func TestScaleSubresourceSkipped(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	var asked []string
	f := newFixture(t, w.src, nil, func(c *Config) { c.GetSet = storedSet(w.set, &asked) })
	if d := decision(t, f, scaleReviewOf(t, snapshot.StatefulSetTarget, w.set, 3, 3, false)); d != DecisionSkipped {
		t.Errorf("an unchanged scale: %s, want %s", d, DecisionSkipped)
	}
	gone := w.set.DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	fg := newFixture(t, w.src, nil, func(c *Config) { c.GetSet = storedSet(gone, &asked) })
	if d := decision(t, fg, scaleReviewOf(t, snapshot.StatefulSetTarget, w.set, 3, 1, false)); d != DecisionSkipped {
		t.Errorf("a scale of a set being deleted: %s, want %s", d, DecisionSkipped)
	}
	status := scaleReviewOf(t, snapshot.StatefulSetTarget, w.set, 3, 1, false)
	status.Request.SubResource = "status"
	other := scaleReviewOf(t, snapshot.StatefulSetTarget, w.set, 3, 1, false)
	other.Request.Resource = metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for name, r := range map[string]*admissionv1.AdmissionReview{"status": status, "a deployment's scale": other} {
		if d := decision(t, f, r); d != DecisionSkipped {
			t.Errorf("%s: %s, want %s", name, d, DecisionSkipped)
		}
	}
	if len(asked) != 1 { // only the set being deleted was read
		t.Errorf("sets read: %v", asked)
	}
}

// A scale of Ordinal's own kind is read as that kind.
func TestScaleSubresourceOfTheCustomKind(t *testing.T) {
	w := newWorld(t, 4, "Parallel", 1, "Retain", "")
	var asked []string
	f := newFixture(t, w.src, nil, func(c *Config) { c.GetSet = storedSet(w.set, &asked) })
	resp := f.post(t, scaleReviewOf(t, snapshot.CRDTarget, w.set, 4, 2, false))
	wantWarning(t, resp.Warnings, "scaling 4→2 deletes web-3, web-2")
	if len(asked) != 1 || !strings.HasPrefix(asked[0], snapshot.CRDTarget.APIVersion()+" ") {
		t.Errorf("sets read: %v, want one of %s", asked, snapshot.CRDTarget.APIVersion())
	}
}

// Without a way to read the set (no client), a scale is answered by the failure policy, saying why.
func TestScaleSubresourceWithoutAClient(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	f := newFixture(t, w.src, nil, nil)
	resp := f.post(t, scaleReviewOf(t, snapshot.StatefulSetTarget, w.set, 3, 1, false))
	if !resp.Allowed {
		t.Fatalf("denied under the open failure policy: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "no rollout preview", "no client to read the set")
	closed := newFixture(t, w.src, nil, func(c *Config) { c.FailClosed = true })
	if resp := closed.post(t, scaleReviewOf(t, snapshot.StatefulSetTarget, w.set, 3, 1, false)); resp.Allowed {
		t.Fatalf("allowed under the closed failure policy")
	}
}

// decision is the metrics label Review gives r.
func decision(t *testing.T, f *fixture, r *admissionv1.AdmissionReview) string {
	t.Helper()
	_, d := f.srv.Review(context.Background(), r.Request)
	return d
}

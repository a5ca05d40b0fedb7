package cli

import (
	"context"
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// A live set last applied with client-side kubectl apply is previewed as kubectl apply would change it: a
// field the last apply set and the manifest drops is removed. The preview's server-side apply kept it
// (kubectl-client-side-apply owns it), so the preview of reverting an env change that InPlaceOnly held
// showed the env kept and the rollout still held, and applying the revert then completed the rollout.
func TestLiveEditOfAClientSideAppliedSetDropsWhatTheManifestDrops(t *testing.T) {
	set := func(env ...corev1.EnvVar) *appsv1.StatefulSet {
		labels := map[string]string{"app": "web"}
		return &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod"},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: "web", Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:2", Env: env}}}}}}
	}
	applied := set(corev1.EnvVar{Name: "MODE", Value: "fast"}) // the last kubectl apply -f
	record, err := json.Marshal(applied)
	if err != nil {
		t.Fatal(err)
	}
	live := applied.DeepCopy()
	live.TypeMeta = metav1.TypeMeta{}
	live.Annotations = map[string]string{lastAppliedAnnotation: string(record)}
	manifest, err := json.Marshal(set()) // the revert: no env
	if err != nil {
		t.Fatal(err)
	}
	kc := fake.NewClientset(live)
	_, cur, _, err := liveEdit(context.Background(), kc, snapshot.Target{}, "prod", "web", manifest, false)
	if err != nil {
		t.Fatal(err)
	}
	if env := cur.Spec.Template.Spec.Containers[0].Env; len(env) != 0 || cur.Spec.Template.Spec.Containers[0].Image != "nginx:2" {
		t.Errorf("the edit as kubectl apply stores it has env %v, image %s; want no env (the manifest dropped it), nginx:2",
			env, cur.Spec.Template.Spec.Containers[0].Image)
	}
}

// A manifest whose set exists as the other kind (after kubectl ordinal migrate, the old manifest's apiVersion)
// previews as a create, and the summary says that the set exists as that kind: applying it made a second
// apps/v1 set beside the ordinal.dev/v1 one that controlled the pods, after a preview that read "create".
func TestPreviewOfTheOtherKindSaysTheSetExists(t *testing.T) {
	live := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod"}}
	kc := fake.NewClientset(live)
	line := otherKindLine(context.Background(), kc, snapshot.CRDTarget, "prod", "web")
	if want := "StatefulSet.apps prod/web exists already (kubectl ordinal migrate moves a set between the kinds): this ordinal.dev/v1 manifest creates a second set of that name beside it; to change the set, apply the manifest with apiVersion apps/v1"; line != want {
		t.Errorf("got %q\nwant %q", line, want)
	}
	if line := otherKindLine(context.Background(), kc, snapshot.CRDTarget, "prod", "db"); line != "" {
		t.Errorf("no set db of either kind: %q", line)
	}
}

package preview

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// A preview of a create on the embedded module: the set is replayed from nothing to Ready, one pod at a
// time under OrderedReady, and the summary says so in one line.
func TestPreviewOfACreate(t *testing.T) {
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	labels := map[string]string{"app": "web"}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: "web", Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1"}}}}}}
	// as the API server answers a dry-run create: defaulted (host/kube's defaulting, kube-apiserver's)
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = kube.DefaultStatefulSetJSON(b); err != nil {
		t.Fatal(err)
	}
	set = &appsv1.StatefulSet{}
	if err := json.Unmarshal(b, set); err != nil {
		t.Fatal(err)
	}
	res, err := Preview(ctx, Input{New: set, Module: m, Now: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Preview
	if p.Outcome.Result != "complete" || !strings.Contains(res.Text, "+0s      create Pod web-0 (revision A)\n  +5s      create Pod web-1") {
		t.Fatalf("outcome %s, text:\n%s\nwant web-0, then web-1 once web-0 is Ready", p.Outcome.Result, res.Text)
	}
	want := "create StatefulSet web: 3 pods web-0..web-2, one at a time, each after the previous is Running and Ready (OrderedReady)"
	if res.Summary.Change != "create" || len(res.Summary.Lines) != 1 || !strings.HasPrefix(res.Summary.Lines[0], want) {
		t.Fatalf("summary %+v, want one line starting %q", res.Summary, want)
	}
	if res.Pods != 0 || res.Text == "" {
		t.Fatalf("a create's snapshot held %d pods; text %q", res.Pods, res.Text)
	}
}

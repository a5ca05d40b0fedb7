package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/firewall"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
)

// rolloutObjects is a settled n-pod set whose template just changed, as the informers hold it: the
// sync creates a revision, deletes the top pod and writes status.
func rolloutObjects(n int) snapshot.Objects {
	replicas := int32(n)
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "registry.k8s.io/nginx-slim:0.28",
			Ports:                  []corev1.ContainerPort{{Name: "web", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: "File", ImagePullPolicy: "IfNotPresent"}},
			RestartPolicy: "Always", DNSPolicy: "ClusterFirst", SchedulerName: "default-scheduler"},
	}
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "set-uid", ResourceVersion: "10", Generation: 2},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: tmpl, ServiceName: "web", PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			RevisionHistoryLimit: new(int32)},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: replicas, ReadyReplicas: replicas, CurrentReplicas: replicas,
			UpdatedReplicas: replicas, AvailableReplicas: replicas, CurrentRevision: "web-old", UpdateRevision: "web-old"},
	}
	*set.Spec.RevisionHistoryLimit = 10
	o := snapshot.Objects{Set: set, Revisions: []*appsv1.ControllerRevision{{
		ObjectMeta: metav1.ObjectMeta{Name: "web-old", Namespace: "ns", UID: "rev-uid", ResourceVersion: "11", Labels: map[string]string{"app": "web"},
			OwnerReferences: kubetest.ControllerRef("StatefulSet", "web", "set-uid")},
		Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace"}}}`)}, Revision: 1}}}
	ready := metav1.NewTime(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	for i := range n {
		name := fmt.Sprintf("web-%d", i)
		p := kubetest.Pod(name, "ns", map[string]string{"app": "web", "controller-revision-hash": "web-old",
			"statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": fmt.Sprint(i)}, kubetest.ControllerRef("StatefulSet", "web", "set-uid"))
		p.ResourceVersion = fmt.Sprint(100 + i)
		p.Spec = *tmpl.Spec.DeepCopy()
		p.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.27"
		p.Spec.Hostname, p.Spec.Subdomain = name, "web"
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: ready}}}
		o.Pods = append(o.Pods, p)
	}
	return o
}

// BenchmarkSyncStages is one controller sync of a 1000-pod set mid-rollout, stage by stage: building
// the snapshot from the informers' objects (every object encoded, and with the set's encode cache
// warm, as in steady state), the module, decoding the plan, the firewall (its scope built from the
// same typed objects; and, for comparison, decoded from the snapshot's bytes as it used to be) and
// applying the plan's writes to a local HTTP server.
func BenchmarkSyncStages(b *testing.B) {
	objs := rolloutObjects(1000)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(ctx)
	snap, err := snapshot.Build(objs, snapshot.StatefulSetTarget, now, nil)
	if err != nil {
		b.Fatal(err)
	}
	planJSON, err := m.Reconcile(ctx, snap.JSON)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := hostplan.Decode(planJSON)
	if err != nil || len(plan.Actions) != 3 || plan.Actions[1].Verb != "delete" || plan.Actions[1].Name != "web-999" {
		b.Fatalf("unexpected plan (%v): %s", err, planJSON)
	}
	b.Run("snapshot/encode-all", func(b *testing.B) {
		b.SetBytes(int64(len(snap.JSON)))
		for b.Loop() {
			if _, err := snapshot.Build(objs, snapshot.StatefulSetTarget, now, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("snapshot/cached", func(b *testing.B) {
		cache := &snapshot.EncodeCache{}
		b.SetBytes(int64(len(snap.JSON)))
		for b.Loop() {
			if _, err := cache.Build(objs, snapshot.StatefulSetTarget, now, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("module", func(b *testing.B) {
		b.SetBytes(int64(len(snap.JSON)))
		for b.Loop() {
			if _, err := m.Reconcile(ctx, snap.JSON); err != nil {
				b.Fatal(err)
			}
		}
	})
	// the steady state of a controller: one pod changed since the set's previous sync, the snapshot built
	// with the set's encode cache and given to its session with its layout (a delta of one pod)
	b.Run("module/session-one-pod-changed", func(b *testing.B) {
		changed := objs
		changed.Pods = append([]*corev1.Pod(nil), objs.Pods...)
		p := objs.Pods[0].DeepCopy()
		p.ResourceVersion += "9"
		changed.Pods[0] = p
		worlds := [2]snapshot.Objects{objs, changed}
		cache, s := &snapshot.EncodeCache{}, m.NewSession()
		i := 0
		for b.Loop() {
			i++
			snap, err := cache.Build(worlds[i%2], snapshot.StatefulSetTarget, now, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := snap.LaidOut(s).Reconcile(ctx, snap.JSON); err != nil {
				b.Fatal(err)
			}
		}
		st := s.Stats()
		b.ReportMetric(float64(st.Guest.Microseconds())/1000/float64(st.Calls), "guest-ms/op")
		b.ReportMetric(float64(st.Whole)/float64(st.Calls), "whole/op")
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := hostplan.Decode(planJSON); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("firewall", func(b *testing.B) {
		for b.Loop() {
			if err := firewall.Check(snap.Scope, plan); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("firewall/decoding-the-snapshot", func(b *testing.B) {
		for b.Loop() {
			scope, err := firewall.ScopeFromSnapshot(snap.JSON)
			if err == nil {
				err = firewall.Check(scope, plan)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("apply", func(b *testing.B) {
		w, _ := newTestWriter(b, &fakeAPI{})
		for b.Loop() {
			if _, err := hostplan.Apply(ctx, snap.Scope, plan, w, hostplan.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

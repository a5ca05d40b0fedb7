package controller

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// kwokPod is a StatefulSet's pod as the local control plane serves it once kwok runs it (two containers,
// probes, env, volumes, status, managedFields of the controller and kwok).
func kwokPod(t testing.TB) *corev1.Pod {
	t.Helper()
	b, err := os.ReadFile("testdata/pod-kwok.json")
	if err != nil {
		t.Fatal(err)
	}
	p := &corev1.Pod{}
	if err := json.Unmarshal(b, p); err != nil {
		t.Fatal(err)
	}
	if len(p.ManagedFields) == 0 || len(p.Spec.Containers) != 2 || len(p.Status.Conditions) == 0 {
		t.Fatalf("testdata/pod-kwok.json is not the full pod the test needs: %+v", p.ObjectMeta)
	}
	return p
}

// variant is the fixture pod renamed and given another controller (nil: an orphan).
func variant(t testing.TB, name string, ctrl *metav1.OwnerReference) *corev1.Pod {
	p := kwokPod(t)
	p.Name, p.UID = name, types.UID("uid-"+name)
	p.OwnerReferences = nil
	if ctrl != nil {
		p.OwnerReferences = []metav1.OwnerReference{*ctrl}
	}
	return p
}

// The transform leaves every sync's snapshot byte for byte what it is without it, for the sets a
// namespace may hold beside pods of other controllers (a stub is never selected), and it stubs the pods
// it may.
func TestTransformKeepsSnapshots(t *testing.T) {
	yes := true
	dbSet := kwokPod(t).OwnerReferences[0]
	rs := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "db-5f7c9", UID: "rs-uid", Controller: &yes}
	job := &metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "db-migrate", UID: "job-uid", Controller: &yes}
	full := []*corev1.Pod{
		kwokPod(t),                       // the set's own
		variant(t, "db-7", rs),           // a name clash: another controller's pod named as a member
		variant(t, "db-9", nil),          // an orphan matching the selector: an adoption candidate
		variant(t, "db-5f7c9-xk2pq", rs), // a ReplicaSet's pod
		variant(t, "db-migrate-x8k2z", job),
	}
	wantStub := map[string]bool{"db-5f7c9-xk2pq": true, "db-migrate-x8k2z": true}
	transform := informerTransform([]snapshot.Target{snapshot.StatefulSetTarget, snapshot.CRDTarget})
	var cached []*corev1.Pod
	for _, p := range full {
		obj, err := transform(p.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		q := obj.(*corev1.Pod)
		if stub := len(q.Spec.Containers) == 0; stub != wantStub[p.Name] {
			t.Errorf("pod %s: stubbed %v, want %v", p.Name, stub, wantStub[p.Name])
		}
		if !wantStub[p.Name] {
			want, _ := snapshot.TrimManagedFields(p.DeepCopy())
			if !reflect.DeepEqual(q, want) {
				t.Errorf("pod %s: the transform changed a value beyond managedFields' field sets", p.Name)
			}
		} else if q.ResourceVersion != p.ResourceVersion || !reflect.DeepEqual(q.Labels, p.Labels) ||
			!reflect.DeepEqual(q.OwnerReferences, p.OwnerReferences) || q.Namespace != p.Namespace {
			t.Errorf("stub of %s lost what the handlers read: %+v", p.Name, q.ObjectMeta)
		}
		cached = append(cached, q)
	}
	for _, name := range []string{"db", "db-5f7c9", "db-migrate"} {
		set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "set-" + types.UID(name)},
			Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
		if name == "db" {
			set.UID = dbSet.UID
		}
		snap := func(pods []*corev1.Pod) []byte {
			o, err := snapshot.SelectObjects(snapshot.Objects{Set: set, Pods: pods})
			if err != nil {
				t.Fatal(err)
			}
			s, err := snapshot.Build(o, snapshot.StatefulSetTarget, time.Unix(0, 0), nil)
			if err != nil {
				t.Fatal(err)
			}
			return s.JSON
		}
		a, b := snap(full), snap(cached)
		if !bytes.Equal(a, b) {
			t.Errorf("set %s: the transformed cache gives another snapshot:\n%s\nwant\n%s", name, b, a)
		}
		if name == "db" && !bytes.Contains(a, []byte(`"db-3"`)) {
			t.Errorf("set db's snapshot lacks its pod: %s", a)
		}
	}
}

// A pod controlled by a kind this controller reconciles is never stubbed, whatever its name.
func TestTransformKeepsTargetsPods(t *testing.T) {
	yes := true
	ref := &metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Database", Name: "db", UID: "u", Controller: &yes}
	custom := snapshot.Target{GroupVersion: appsv1.SchemeGroupVersion, Kind: "Database", Resource: "databases", Custom: true}
	obj, _ := informerTransform([]snapshot.Target{custom})(variant(t, "db-abcde", ref))
	if len(obj.(*corev1.Pod).Spec.Containers) == 0 {
		t.Error("a pod of a reconciled kind was stubbed")
	}
	obj, _ = informerTransform([]snapshot.Target{snapshot.StatefulSetTarget})(variant(t, "db-abcde", ref))
	if len(obj.(*corev1.Pod).Spec.Containers) != 0 {
		t.Error("a pod of a kind not reconciled, with no ordinal in its name, was kept whole")
	}
}

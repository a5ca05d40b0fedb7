package snapshot

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
)

func names[T metav1.Object](objs []T) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestSelectObjects(t *testing.T) {
	set := kubetest.Set()
	web := map[string]string{"app": "web"}
	other := map[string]string{"app": "other"}
	o := Objects{
		Set: set,
		Pods: []*corev1.Pod{
			kubetest.Pod("web-2", "ns", web, kubetest.ControllerRef("StatefulSet", "web", "set-uid")),        // owned
			kubetest.Pod("web-0", "ns", web, nil),                                                            // orphan, matches
			kubetest.Pod("stray", "ns", web, nil),                                                            // orphan, matches: adoption candidate (the module filters by name)
			kubetest.Pod("lonely", "ns", other, nil),                                                         // orphan, no match
			kubetest.Pod("web-7", "ns", other, kubetest.ControllerRef("ReplicaSet", "rs", "rs-uid")),         // someone else's, but takes an ordinal name
			kubetest.Pod("web-db-0", "ns", web, kubetest.ControllerRef("StatefulSet", "web-db", "db-uid")),   // another set's
			kubetest.Pod("x-1", "ns", web, kubetest.ControllerRef("ReplicaSet", "rs", "rs-uid")),             // someone else's
			kubetest.Pod("web-1", "elsewhere", web, kubetest.ControllerRef("StatefulSet", "web", "set-uid")), // other namespace
			kubetest.Pod("renamed", "ns", other, kubetest.ControllerRef("StatefulSet", "web", "set-uid")),    // owned, no longer matching: release candidate
		},
		Revisions: []*appsv1.ControllerRevision{
			{ObjectMeta: metav1.ObjectMeta{Name: "web-bbb", Namespace: "ns", OwnerReferences: kubetest.ControllerRef("StatefulSet", "web", "set-uid")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "web-aaa", Namespace: "ns", Labels: web}},
			{ObjectMeta: metav1.ObjectMeta{Name: "web-ccc", Namespace: "ns", OwnerReferences: kubetest.ControllerRef("StatefulSet", "x", "x-uid")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "web-db-ddd", Namespace: "ns", OwnerReferences: kubetest.ControllerRef("StatefulSet", "web-db", "db-uid")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "unrelated-1", Namespace: "ns", Labels: other}},
		},
		Claims: []*corev1.PersistentVolumeClaim{
			{ObjectMeta: metav1.ObjectMeta{Name: "data-web-1", Namespace: "ns"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "data-web-db-0", Namespace: "ns"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "logs-web-0", Namespace: "ns"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "odd", Namespace: "ns", OwnerReferences: kubetest.ControllerRef("StatefulSet", "web", "set-uid")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "data-web-0", Namespace: "ns"}},
		},
	}
	got, err := SelectObjects(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"renamed", "stray", "web-0", "web-2", "web-7"}; !reflect.DeepEqual(names(got.Pods), want) {
		t.Errorf("pods = %v, want %v", names(got.Pods), want)
	}
	if want := []string{"web-aaa", "web-bbb", "web-ccc"}; !reflect.DeepEqual(names(got.Revisions), want) {
		t.Errorf("revisions = %v, want %v", names(got.Revisions), want)
	}
	if want := []string{"data-web-0", "data-web-1", "odd"}; !reflect.DeepEqual(names(got.Claims), want) {
		t.Errorf("claims = %v, want %v", names(got.Claims), want)
	}
}

func TestSelectObjectsBadSelector(t *testing.T) {
	set := kubetest.Set()
	set.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}
	if _, err := SelectObjects(Objects{Set: set}); err == nil {
		t.Fatal("want an error for an invalid selector")
	}
}

func TestBuildSnapshot(t *testing.T) {
	set := kubetest.Set()
	data := []byte(`{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"a\u003cb","name":"c"}]}}}}`)
	o := Objects{
		Set:       set,
		Pods:      []*corev1.Pod{kubetest.Pod("web-0", "ns", nil, kubetest.ControllerRef("StatefulSet", "web", "set-uid"))},
		Revisions: []*appsv1.ControllerRevision{{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "ns", UID: "rev-uid"}, Data: runtime.RawExtension{Raw: data}, Revision: 1}},
		Claims:    []*corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data-web-0", Namespace: "ns", UID: "pvc-uid"}}},
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 500, time.FixedZone("x", 3600))
	s, err := Build(o, StatefulSetTarget, now, map[string]bool{abi.GateMaxUnavailableStatefulSet: false})
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		ABI         int                          `json:"abi"`
		Now         string                       `json:"now"`
		StatefulSet map[string]any               `json:"statefulSet"`
		Pods        []map[string]any             `json:"pods"`
		Revisions   []map[string]json.RawMessage `json:"revisions"`
		Claims      []map[string]any             `json:"claims"`
		Features    map[string]bool              `json:"features"`
	}
	if err := json.Unmarshal(s.JSON, &snap); err != nil {
		t.Fatal(err)
	}
	if snap.ABI != 1 || snap.Now != "2026-05-01T11:00:00.0000005Z" {
		t.Errorf("abi %d now %q", snap.ABI, snap.Now)
	}
	if snap.StatefulSet["apiVersion"] != "apps/v1" || snap.StatefulSet["kind"] != "StatefulSet" {
		t.Errorf("set TypeMeta: %v %v", snap.StatefulSet["apiVersion"], snap.StatefulSet["kind"])
	}
	if snap.Pods[0]["apiVersion"] != "v1" || snap.Pods[0]["kind"] != "Pod" || snap.Claims[0]["kind"] != "PersistentVolumeClaim" {
		t.Errorf("pod/claim TypeMeta missing")
	}
	if string(snap.Revisions[0]["kind"]) != `"ControllerRevision"` {
		t.Errorf("revision kind %s", snap.Revisions[0]["kind"])
	}
	if string(snap.Revisions[0]["data"]) != string(data) {
		t.Errorf("revision data changed:\n got %s\nwant %s", snap.Revisions[0]["data"], data)
	}
	if snap.Features[abi.GateMaxUnavailableStatefulSet] {
		t.Errorf("features not passed")
	}
	// The scope (the firewall's view, and the delete preconditions) holds every object's uid.
	if sc, err := s.FirewallScope(); err != nil || sc.Pods["web-0"].UID != "uid-web-0" || sc.Revisions["web-abc"].UID != "rev-uid" ||
		sc.UID != "set-uid" || sc.Claims["data-web-0"].UID != "pvc-uid" {
		t.Errorf("scope: %+v %v", sc, err)
	}
	if set.APIVersion != "" || o.Pods[0].Kind != "" {
		t.Errorf("Build mutated its input (cache objects are shared)")
	}
	if !strings.Contains(string(s.SetJSON), `"resourceVersion":"10"`) {
		t.Errorf("SetJSON lacks the resourceVersion: %s", s.SetJSON)
	}
	// Deterministic: the same objects give the same bytes.
	s2, _ := Build(o, StatefulSetTarget, now, map[string]bool{abi.GateMaxUnavailableStatefulSet: false})
	if string(s2.JSON) != string(s.JSON) {
		t.Error("snapshot is not deterministic")
	}
}

func TestNameHelpers(t *testing.T) {
	for _, c := range []struct {
		name, prefix string
		ord, rev     bool
	}{
		{"web-0", "web-", true, true}, {"web-12", "web-", true, true}, {"web-", "web-", false, false},
		{"web-db-0", "web-", false, false}, {"web-6d4f9c", "web-", false, true}, {"webx-1", "web-", false, false},
	} {
		if got := IsOrdinalName(c.name, c.prefix); got != c.ord {
			t.Errorf("IsOrdinalName(%q,%q)=%v", c.name, c.prefix, got)
		}
		if got := isRevisionName(c.name, c.prefix); got != c.rev {
			t.Errorf("isRevisionName(%q,%q)=%v", c.name, c.prefix, got)
		}
	}
}

// The snapshot is written by hand; it must be exactly json.Marshal(abi.Snapshot), and the firewall's
// scope built from the typed objects must be the one it would decode from those bytes.
func TestBuildSnapshotIsMarshalAndScopeMatches(t *testing.T) {
	set := kubetest.Set()
	set.Spec.Replicas = new(int32)
	*set.Spec.Replicas = 3
	set.Spec.Template = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}
	set.Spec.VolumeClaimTemplates[0].Spec = corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}
	o := Objects{
		Set: set,
		Pods: []*corev1.Pod{
			kubetest.Pod("web-0", "ns", map[string]string{"app": "web", "x": "<&>"}, kubetest.ControllerRef("StatefulSet", "web", "set-uid")),
			kubetest.Pod("web-1", "", map[string]string{"app": "web"}, nil),
			kubetest.Pod("web-9", "other", nil, nil),
		},
		Revisions: []*appsv1.ControllerRevision{{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "ns", UID: "rev-uid", Labels: map[string]string{"app": "web"},
			OwnerReferences: kubetest.ControllerRef("StatefulSet", "web", "set-uid")}, Data: runtime.RawExtension{Raw: []byte(`{"a":"\u2028"}`)}, Revision: 1}},
		Claims: []*corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data-web-0", Namespace: "ns", UID: "pvc-uid",
			OwnerReferences: kubetest.ControllerRef("Pod", "web-0", "uid-web-0")}}},
	}
	// a custom kind's set is defaulted for the module (customSetJSON), its template too: the scope must judge
	// against that template, not the one the informer holds (a created pod would be refused)
	for _, target := range []Target{StatefulSetTarget, CRDTarget} {
		for _, features := range []map[string]bool{nil, {abi.GateMaxUnavailableStatefulSet: true, abi.GateStatefulSetRecreateStrategy: false}} {
			for _, objs := range []Objects{o, {Set: set}} {
				s, err := Build(objs, target, time.Unix(1e9, 7), features)
				if err != nil {
					t.Fatal(err)
				}
				var decoded abi.Snapshot
				if err := json.Unmarshal(s.JSON, &decoded); err != nil {
					t.Fatal(err)
				}
				want, _ := json.Marshal(&decoded)
				if string(want) != string(s.JSON) {
					t.Fatalf("snapshot bytes differ from json.Marshal:\n got %s\nwant %s", s.JSON, want)
				}
				fromJSON, err := firewall.ScopeFromSnapshot(s.JSON)
				if err != nil {
					t.Fatal(err)
				}
				// the pods as the firewall judges an update against them: their metadata and spec
				for _, sc := range []*firewall.Scope{s.Scope, fromJSON} {
					for name, o := range sc.Pods {
						c, p := *o, *o.Pod
						p.TypeMeta, p.ManagedFields = metav1.TypeMeta{}, nil
						c.Pod = &p
						sc.Pods[name] = &c
					}
				}
				if s.Scope == nil || !reflect.DeepEqual(s.Scope, fromJSON) {
					t.Errorf("%s: scope from objects:\n%#v\nscope from the snapshot bytes:\n%#v", target, s.Scope, fromJSON)
				}
			}
		}
	}
}

// A set's cache re-encodes an object only when its resourceVersion changes, and forgets objects a
// build no longer has.
func TestEncodeCache(t *testing.T) {
	set := kubetest.Set()
	p0 := kubetest.Pod("web-0", "ns", map[string]string{"app": "web"}, nil)
	p0.ResourceVersion = "5"
	p1 := kubetest.Pod("web-1", "ns", map[string]string{"app": "web"}, nil)
	p1.ResourceVersion = "6"
	cache := &EncodeCache{}
	build := func(pods ...*corev1.Pod) string {
		s, err := cache.Build(Objects{Set: set, Pods: pods}, StatefulSetTarget, time.Unix(0, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(s.JSON)
	}
	build(p0, p1)
	// the same resourceVersion: the cached bytes are used (a changed object under an unchanged
	// resourceVersion cannot happen in an informer; here it shows which bytes were used)
	p0.Labels["seen"] = "later"
	if strings.Contains(build(p0, p1), "later") {
		t.Error("an unchanged resourceVersion was encoded again")
	}
	p0 = p0.DeepCopy()
	p0.ResourceVersion = "7"
	if !strings.Contains(build(p0, p1), "later") {
		t.Error("a new resourceVersion was not encoded")
	}
	build(p0)
	if len(cache.prev) != 1 {
		t.Errorf("cache holds %d objects after a build of 1", len(cache.prev))
	}
}

// managedFields never reach the module: upstream's informers drop them, so its writes carry none.
func TestSnapshotHasNoManagedFields(t *testing.T) {
	set := kubetest.Set()
	mf := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	set.ManagedFields = mf
	p := kubetest.Pod("web-0", "ns", nil, kubetest.ControllerRef("StatefulSet", "web", "set-uid"))
	p.ManagedFields = mf
	s, err := Build(Objects{Set: set, Pods: []*corev1.Pod{p}}, StatefulSetTarget, time.Unix(0, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s.JSON), "managedFields") {
		t.Errorf("snapshot carries managedFields: %s", s.JSON)
	}
	if len(set.ManagedFields) != 1 || len(p.ManagedFields) != 1 {
		t.Error("Build changed the cached objects")
	}
}

// Snapshot.Object finds an object as the snapshot carries it (what a policy is given of the plan's objects).
func TestSnapshotObjectIsTheSnapshotsBytes(t *testing.T) {
	set := kubetest.Set()
	o := Objects{Set: set, Pods: []*corev1.Pod{kubetest.Pod("web-0", "ns", map[string]string{"app": "web"}, nil), kubetest.Pod("web-1", "ns", map[string]string{"app": "web"}, nil)},
		Claims: []*corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data-web-1", Namespace: "ns", UID: "pvc-uid"}}}}
	s, err := Build(o, StatefulSetTarget, time.Unix(1e9, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	var decoded abi.Snapshot
	if err := json.Unmarshal(s.JSON, &decoded); err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string]map[string]json.RawMessage{abi.KindPod: {"web-0": decoded.Pods[0], "web-1": decoded.Pods[1]},
		abi.KindPersistentVolumeClaim: {"data-web-1": decoded.Claims[0]}} {
		for name, raw := range want {
			got, ok := s.Object(kind, name)
			if !ok || string(got) != string(raw) {
				t.Errorf("%s %s: %s, %v; want %s", kind, name, got, ok, raw)
			}
		}
	}
	if _, ok := s.Object(abi.KindPod, "web-7"); ok {
		t.Error("a pod the snapshot does not have")
	}
}

// What a policy's input is written from (policy.Run.Head, policy.Run.Pods) is the snapshot's: its members
// other than the lists, as the snapshot carries them, and its pods that are down, found once per
// encoding of a pod (the encode cache keeps a pod's health with its bytes).
func TestSnapshotHeadAndPodStatesAreTheSnapshots(t *testing.T) {
	set := kubetest.Set()
	web := map[string]string{"app": "web"}
	ready, unready, gone := kubetest.Pod("web-0", "ns", web, nil), kubetest.Pod("web-1", "ns", web, nil), kubetest.Pod("web-2", "ns", web, nil)
	for _, p := range []*corev1.Pod{ready, unready, gone} {
		p.ResourceVersion = "1"
	}
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	gone.Status.Conditions = ready.Status.Conditions
	gone.DeletionTimestamp = &metav1.Time{Time: time.Unix(1e9, 0)}
	cache := &EncodeCache{}
	features := map[string]bool{"MaxUnavailableStatefulSet": true}
	for sync, down := range [][]string{{"web-1", "web-2"}, {"web-2"}} {
		if sync == 1 { // web-1 became Ready: a new resourceVersion, encoded again
			unready = unready.DeepCopy()
			unready.ResourceVersion, unready.Status.Conditions = "2", ready.Status.Conditions
		}
		s, err := cache.Build(Objects{Set: set, Pods: []*corev1.Pod{ready, unready, gone}}, StatefulSetTarget, time.Unix(1e9, 0), features)
		if err != nil {
			t.Fatal(err)
		}
		var whole, head map[string]json.RawMessage
		if err := json.Unmarshal(s.JSON, &whole); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(append(s.Head(), '}'), &head); err != nil {
			t.Fatalf("head %s: %v", s.Head(), err)
		}
		if len(head) != 4 {
			t.Errorf("head members %v: want abi, now, statefulSet, features", head)
		}
		for k, v := range head {
			if string(whole[k]) != string(v) {
				t.Errorf("head %s: %s, the snapshot's %s", k, v, whole[k])
			}
		}
		ps := s.PodStates()
		if want := []string{"web-0", "web-1", "web-2"}; !reflect.DeepEqual(ps.Names, want) {
			t.Errorf("sync %d: names %v", sync, ps.Names)
		}
		var got []string
		for _, raw := range ps.Down {
			p, _ := s.Object(abi.KindPod, podName(raw))
			if string(p) != string(raw) {
				t.Errorf("sync %d: a pod down is not as the snapshot carries it: %s", sync, raw)
			}
			got = append(got, podName(raw))
		}
		if !reflect.DeepEqual(got, down) {
			t.Errorf("sync %d: down %v, want %v", sync, got, down)
		}
	}
}

func podName(raw json.RawMessage) string {
	var p corev1.Pod
	_ = json.Unmarshal(raw, &p)
	return p.Name
}

// A set's cache encodes the set (and, for a custom target, defaults and decodes it) once per resourceVersion,
// target and gates: a build from the cache is the build without it, and a new resourceVersion or other gates
// encode again.
func TestEncodeCacheSet(t *testing.T) {
	for _, target := range []Target{StatefulSetTarget, CRDTarget} {
		set := kubetest.Set()
		set.Spec.Template = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}
		cache := &EncodeCache{}
		build := func(o Objects, features map[string]bool) *Snapshot {
			t.Helper()
			got, err := cache.Build(o, target, time.Unix(1e9, 0), features)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Build(o, target, time.Unix(1e9, 0), features)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.JSON) != string(want.JSON) || !reflect.DeepEqual(got.Scope, want.Scope) {
				t.Fatalf("%s: the cached build differs from the build without a cache:\n got %s\nwant %s", target, got.JSON, want.JSON)
			}
			return got
		}
		first := build(Objects{Set: set}, nil)
		if again := build(Objects{Set: set}, nil); &again.SetJSON[0] != &first.SetJSON[0] {
			t.Errorf("%s: the same set was encoded again", target)
		}
		recreate := build(Objects{Set: set}, map[string]bool{abi.GateStatefulSetRecreateStrategy: true})
		if &recreate.SetJSON[0] == &first.SetJSON[0] {
			t.Errorf("%s: other gates reused the encoding", target)
		}
		next := set.DeepCopy()
		next.ResourceVersion = "11"
		next.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/pause:3.11"
		if s := build(Objects{Set: next}, nil); !strings.Contains(string(s.SetJSON), "pause:3.11") {
			t.Errorf("%s: a new resourceVersion kept the old encoding: %s", target, s.SetJSON)
		}
	}
}

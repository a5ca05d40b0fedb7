//go:build e2e

package e2e

// Stale resourceVersions on the real API server, beside host/replay/world's in-memory API server: kube-apiserver
// refuses an update whose metadata.resourceVersion is no longer the object's with 409 Conflict, and so does
// the in-memory server, with the same message; the reference harness's fake clientset checks no
// resourceVersion at all (testdata/scenarios/README.md, "Where the in-memory API server is stricter than the
// harness"). The in-memory server's status write takes only the status, so it has nothing to check there:
// this test shows that difference too.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/ordinal-dev/ordinal/host/replay/world"
)

// staleMessage is kube-apiserver's message for an update with a stale resourceVersion
// (k8s.io/apiserver's registry: errors.NewConflict(resource, name, OptimisticLockErrorMsg)).
func staleMessage(resource, name string) string {
	return fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", resource, name)
}

// memObj is a typed object as the in-memory API server takes it: generic JSON, numbers kept as json.Number.
func memObj(t *testing.T, v any) world.Obj {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var o world.Obj
	if err := d.Decode(&o); err != nil {
		t.Fatal(err)
	}
	return o
}

// memClone copies an object the in-memory server holds (its Get returns the stored object).
func memClone(t *testing.T, o world.Obj) world.Obj {
	t.Helper()
	if o == nil {
		t.Fatal("in-memory API server: object not found")
	}
	return memObj(t, o)
}

func setLabel(t *testing.T, o map[string]any, v string) {
	t.Helper()
	if err := unstructured.SetNestedField(o, v, "metadata", "labels", "e2e.ordinal.dev/step"); err != nil {
		t.Fatal(err)
	}
}

// wantStale checks that a write with a stale resourceVersion was refused by kube-apiserver with 409 Conflict
// and upstream's message, and by the in-memory API server with the same reason and message.
func wantStale(t *testing.T, what, resource, name string, realErr, memErr error) {
	t.Helper()
	want := staleMessage(resource, name)
	var status apierrors.APIStatus
	switch {
	case realErr == nil:
		t.Errorf("%s: kube-apiserver accepted the stale resourceVersion", what)
	case !errors.As(realErr, &status):
		t.Errorf("%s: kube-apiserver: %v (not an API status)", what, realErr)
	default:
		st := status.Status()
		if st.Code != http.StatusConflict || st.Reason != metav1.StatusReasonConflict || st.Message != want {
			t.Errorf("%s: kube-apiserver answered %d %s %q\nwant 409 Conflict %q", what, st.Code, st.Reason, st.Message, want)
		}
		var me *world.APIError
		switch {
		case memErr == nil:
			t.Errorf("%s: the in-memory API server accepted the stale resourceVersion; kube-apiserver: %q", what, st.Message)
		case !errors.As(memErr, &me):
			t.Errorf("%s: the in-memory API server: %v (not an *world.APIError)", what, memErr)
		case me.Reason != string(st.Reason) || me.Message != st.Message:
			t.Errorf("%s: the answers differ:\n kube-apiserver: %s %q\n in-memory:      %s %q", what, st.Reason, st.Message, me.Reason, me.Message)
		default:
			t.Logf("%s: both refuse: %s: %s", what, me.Reason, me.Message)
		}
	}
}

// TestStaleResourceVersionConflict: the same sequence against kube-apiserver and the in-memory API server,
// for a ControllerRevision, a pod and a StatefulSet: create; update with the resourceVersion the create
// returned (accepted); update again with that now stale resourceVersion (409 Conflict, the same message on
// both); update with no resourceVersion (accepted: no precondition). Then a status-subresource PUT of the
// StatefulSet with a stale resourceVersion: kube-apiserver's Conflict; the in-memory server's status write
// carries no resourceVersion, so it accepts (or, should it learn to check, must answer the same).
// No controller runs in the namespace, so nothing else writes to these objects.
func TestStaleResourceVersionConflict(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	dyn, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		t.Fatal(err)
	}
	mem := world.NewAPIServer(ns, world.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)))

	rev := &appsv1.ControllerRevision{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"},
		ObjectMeta: metav1.ObjectMeta{Name: "stale-rev", Labels: map[string]string{"app": "stale"}},
		Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"metadata":{"labels":{"app":"stale"}}}}}`)}, Revision: 1}
	pod := simplePod("stale-pod", nil)
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	pod.Spec.SchedulerName = "e2e-no-scheduler" // never bound: neither the scheduler nor kwok writes to it
	set := newSet("stale", 0)                   // no controller here, and no pods
	set.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}

	for _, c := range []struct {
		kind     string // the in-memory server's kind
		resource string // as kube-apiserver names it in the message
		gvr      schema.GroupVersionResource
		obj      metav1.Object
	}{
		{"ControllerRevision", "controllerrevisions.apps", appsv1.SchemeGroupVersion.WithResource("controllerrevisions"), rev},
		{"Pod", "pods", corev1.SchemeGroupVersion.WithResource("pods"), pod},
		{"StatefulSet", "statefulsets.apps", appsv1.SchemeGroupVersion.WithResource("statefulsets"), set},
	} {
		name := c.obj.GetName()
		client := dyn.Resource(c.gvr).Namespace(ns)
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c.obj)
		if err != nil {
			t.Fatal(err)
		}
		created, err := client.Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: create: %v", c.kind, err)
		}
		if err := mem.Create(c.kind, memObj(t, c.obj)); err != nil {
			t.Fatalf("%s: in-memory create: %v", c.kind, err)
		}
		stored := memClone(t, mem.Get(c.kind, name))

		// update with the resourceVersion the create returned: accepted by both
		u1 := created.DeepCopy()
		setLabel(t, u1.Object, "1")
		if _, err := client.Update(ctx, u1, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s: update at resourceVersion %s: %v", c.kind, created.GetResourceVersion(), err)
		}
		m1 := memClone(t, stored)
		setLabel(t, m1, "1")
		if err := mem.Update(c.kind, m1); err != nil {
			t.Fatalf("%s: in-memory update at the current resourceVersion: %v", c.kind, err)
		}

		// the same resourceVersion again, now stale
		u2 := created.DeepCopy()
		setLabel(t, u2.Object, "2")
		_, realErr := client.Update(ctx, u2, metav1.UpdateOptions{})
		m2 := memClone(t, stored)
		setLabel(t, m2, "2")
		wantStale(t, c.kind+" update", c.resource, name, realErr, mem.Update(c.kind, m2))

		// no resourceVersion: no precondition, accepted by both
		u3 := created.DeepCopy()
		u3.SetResourceVersion("")
		setLabel(t, u3.Object, "3")
		if _, err := client.Update(ctx, u3, metav1.UpdateOptions{}); err != nil {
			t.Errorf("%s: update without a resourceVersion: %v", c.kind, err)
		}
		m3 := memClone(t, stored)
		unstructured.RemoveNestedField(m3, "metadata", "resourceVersion")
		setLabel(t, m3, "3")
		if err := mem.Update(c.kind, m3); err != nil {
			t.Errorf("%s: in-memory update without a resourceVersion: %v", c.kind, err)
		}
	}

	// The status subresource: PUT .../statefulsets/stale/status twice with one resourceVersion.
	sets := cfg.kc.AppsV1().StatefulSets(ns)
	s0, err := sets.Get(ctx, "stale", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s1 := s0.DeepCopy()
	s1.Status.ObservedGeneration = s0.Generation
	if _, err := sets.UpdateStatus(ctx, s1, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("status update at resourceVersion %s: %v", s0.ResourceVersion, err)
	}
	s2 := s0.DeepCopy()
	s2.Status.ObservedGeneration = s0.Generation
	s2.Status.CollisionCount = new(int32)
	_, realErr := sets.UpdateStatus(ctx, s2, metav1.UpdateOptions{})
	m0 := memClone(t, mem.StatefulSet())
	m1 := memClone(t, m0)
	m1["status"] = memObj(t, s1.Status)
	if err := mem.UpdateStatus(m1); err != nil {
		t.Fatalf("in-memory status update: %v", err)
	}
	m2 := memClone(t, m0)
	m2["status"] = memObj(t, s2.Status)
	wantStale(t, "StatefulSet status update", "statefulsets.apps", "stale", realErr, mem.UpdateStatus(m2))
}

// kubectl ordinal undo sends a JSON patch that tests the set's resourceVersion (host/rollout.Undo), and
// kube-apiserver answers a failed test with 422 Invalid and no details, not with 409 Conflict: an undo sent
// right after an edit, while the controller wrote the status, failed with "The request is invalid: the server
// rejected our request due to an error in our request" (14 of 15 tries on the local cluster). The plugin reads
// the set again after such a 422 and treats it as the conflict (TestRolloutVerbRetriesAConflictOfAStatusWrite
// mimics this answer); this test holds kube-apiserver to it, for the apps/v1 kind and Ordinal's.
func TestFailedJSONPatchTestIsABare422(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	dyn, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		t.Fatal(err)
	}
	set := newSet("jp", 0) // no controller here, and no pods
	set.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	for _, gvr := range []schema.GroupVersionResource{appsv1.SchemeGroupVersion.WithResource("statefulsets"),
		{Group: "ordinal.dev", Version: "v1", Resource: "statefulsets"}} {
		o := set.DeepCopy()
		o.APIVersion = gvr.GroupVersion().String()
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		created, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: raw}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", gvr.Resource, err)
		}
		stale := fmt.Sprintf(`[{"op":"test","path":"/metadata/resourceVersion","value":"%s0"},{"op":"replace","path":"/spec/replicas","value":1}]`, created.GetResourceVersion())
		_, err = dyn.Resource(gvr).Namespace(ns).Patch(ctx, "jp", "application/json-patch+json", []byte(stale), metav1.PatchOptions{})
		var st apierrors.APIStatus
		if !errors.As(err, &st) || !apierrors.IsInvalid(err) || apierrors.IsConflict(err) || st.Status().Code != http.StatusUnprocessableEntity ||
			st.Status().Message != "the server rejected our request due to an error in our request" ||
			st.Status().Details != nil && len(st.Status().Details.Causes) > 0 {
			t.Errorf("%s.%s: a JSON patch whose test of the resourceVersion fails: %v (%+v), want kube-apiserver's bare 422", gvr.Resource, gvr.Group, err, st)
		}
	}
}

//go:build e2e

package e2e

// `ordinal controller` against the real control plane. Every test has its own namespace and its own
// controller process(es) watching only that namespace, so these tests run in parallel.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// begin: a namespace with a running, ready controller, and a pod tracker for set `name`.
func begin(t *testing.T, name string, orderedCreate bool) (context.Context, string, *controllerProc, *podTracker) {
	t.Helper()
	requireController(t)
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	c := startController(t, ns, ctrlOpts{})
	c.waitReady(ctx)
	tr := trackPods(t, ctx, ns, name, orderedCreate)
	return ctx, ns, c, tr
}

func wantOrdinals(t *testing.T, what string, got []int, want ...int) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: ordinals %v, want %v", what, got, want)
	}
}

func wantEachReplacedOnce(t *testing.T, tr *podTracker, replicas int) {
	t.Helper()
	got := tr.podsPerOrdinal()
	for i := 0; i < replicas; i++ {
		if got[i] != 2 {
			t.Errorf("ordinal %d had %d distinct pods during the test, want 2 (the original and one replacement)", i, got[i])
		}
	}
}

func wantNoAlreadyExists(t *testing.T, ctx context.Context, ns string, ctrls ...*controllerProc) {
	t.Helper()
	for _, e := range alreadyExistsEvents(t, ctx, ns) {
		t.Errorf("event: %s", e)
	}
	for _, c := range ctrls {
		for _, l := range c.logLines("AlreadyExists", "already exists") {
			// two replicas racing to create the leader-election Lease is expected (client-go retries)
			if !strings.Contains(strings.ToLower(l), "lease") {
				t.Errorf("controller %s log: %s", c.name, l)
			}
		}
	}
}

// waitGone waits until a list+watch has no objects left.
func waitGone(t *testing.T, ctx context.Context, desc string, lw cache.ListerWatcher, obj runtime.Object, timeout time.Duration) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names := map[string]bool{}
	_, err := watchtools.UntilWithSync(wctx, lw, obj, func(s cache.Store) (bool, error) {
		for _, k := range s.ListKeys() {
			names[k] = true
		}
		return len(names) == 0, nil
	}, func(ev watch.Event) (bool, error) {
		m, err := metaAccessor(ev.Object)
		if err != nil {
			return false, nil
		}
		k := m.GetNamespace() + "/" + m.GetName()
		if ev.Type == watch.Deleted {
			delete(names, k)
		} else {
			names[k] = true
		}
		return len(names) == 0, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s to be gone; left: %v", timeout, desc, names)
	}
}

func metaAccessor(o runtime.Object) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", o)
	}
	return m, nil
}

func labelLW(resource, ns, selector string, client cache.Getter) cache.ListerWatcher {
	return cache.NewFilteredListWatchFromClient(client, resource, ns, func(o *metav1.ListOptions) { o.LabelSelector = selector })
}

// ---------------------------------------------------------------------------------------------- creation

// A new OrderedReady set: pods are created strictly in ordinal order, each only after its predecessor is
// Running and Ready (checked on every watch event); one ControllerRevision; claims from the templates.
func TestOrderedReadyCreate(t *testing.T) {
	t.Parallel()
	ctx, ns, c, tr := begin(t, "web", true)
	c.waitHTTP(ctx, c.health, "/healthz", 10*time.Second)
	c.waitHTTP(ctx, c.metrics, "/metrics", 10*time.Second)
	set := createSet(t, ctx, ns, newSet("web", 3, withClaims("", "")))
	s := waitRolledOut(t, ctx, ns, "web", 3)
	// the set's status came through its own watch; the tracker's pod watch may not have delivered the last
	// Ready yet (CI saw web-2's Ready land after the check)
	tr.waitFor(ctx, "the tracker to see all 3 pods Ready", time.Minute, func(v podView) bool { return v.readyAt(3, s.Status.UpdateRevision) })
	tr.checkInvariants()
	wantOrdinals(t, "pods created", ordinals(tr.stepsOf(stepCreated, 0)), 0, 1, 2)
	wantOrdinals(t, "pods ready", ordinals(tr.stepsOf(stepReady, 0)), 0, 1, 2)

	revs := listRevisions(t, ctx, ns, "web")
	if len(revs) != 1 || revs[0].Name != s.Status.UpdateRevision {
		t.Errorf("ControllerRevisions %v, want exactly the update revision %s", revisionNames(revs), s.Status.UpdateRevision)
	}
	for _, r := range revs {
		if ref := metav1.GetControllerOf(&r); ref == nil || ref.UID != set.UID {
			t.Errorf("ControllerRevision %s: controller ref %v, want the StatefulSet", r.Name, ref)
		}
	}
	claims := listClaims(t, ctx, ns)
	for i, p := range tr.snapshot() {
		ord := podOrdinal(i)
		if podRevision(p) != s.Status.UpdateRevision {
			t.Errorf("pod %s: revision %q, want %q", p.Name, podRevision(p), s.Status.UpdateRevision)
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != set.UID {
			t.Errorf("pod %s: controller ref %v, want the StatefulSet", p.Name, ref)
		}
		if p.Labels[appsv1.StatefulSetPodNameLabel] != p.Name || p.Labels[appsv1.PodIndexLabel] != fmt.Sprint(ord) {
			t.Errorf("pod %s: labels %v lack pod-name/pod-index", p.Name, p.Labels)
		}
		if p.Spec.Hostname != p.Name || p.Spec.Subdomain != "web" {
			t.Errorf("pod %s: hostname %q subdomain %q", p.Name, p.Spec.Hostname, p.Spec.Subdomain)
		}
		cn := fmt.Sprintf("data-web-%d", ord)
		if c, ok := claims[cn]; !ok {
			t.Errorf("PVC %s missing", cn)
		} else if c.Status.Phase != corev1.ClaimBound {
			t.Errorf("PVC %s: phase %s", cn, c.Status.Phase)
		}
		found := false
		for _, v := range p.Spec.Volumes {
			found = found || (v.Name == "data" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == cn)
		}
		if !found {
			t.Errorf("pod %s does not mount PVC %s", p.Name, cn)
		}
	}
}

// Parallel pod management: pods do not wait for each other. With a template whose pods never become
// Ready, all of them are still created, and a scale-down deletes them although they are unhealthy.
func TestParallelPodManagement(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "par", false)
	createSet(t, ctx, ns, newSet("par", 4, parallel, neverReadyTemplate))
	tr.waitFor(ctx, "4 pods Running (never Ready)", 90*time.Second, func(v podView) bool {
		if v.count() != 4 {
			return false
		}
		for i := 0; i < 4; i++ {
			if p := v.pod(i); p == nil || p.Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return true
	})
	waitSet(t, ctx, ns, "par", "status replicas=4 ready=0", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration >= s.Generation && s.Status.Replicas == 4 && s.Status.ReadyReplicas == 0
	})
	// The premise (these pods stay not Ready), checked once kwok has dealt with their Running state rather
	// than as far as it had got by the time of the status; with a consistent list, not the tracker's watch,
	// which may be behind the probe's.
	kwokCaughtUp(t, ctx, ns)
	if r := tr.stepsOf(stepReady, 0); len(r) != 0 {
		t.Fatalf("never-ready pods became ready: %v", r)
	}
	if l, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=par"}); err != nil {
		t.Fatal(err)
	} else {
		for i := range l.Items {
			if podReady(&l.Items[i]) {
				t.Fatalf("never-ready pod %s became ready", l.Items[i].Name)
			}
		}
	}

	mark := tr.mark()
	patchSet(t, ctx, ns, "par", `{"spec":{"replicas":1}}`)
	tr.waitFor(ctx, "scaled down to par-0", time.Minute, func(v podView) bool { return v.count() == 1 && v.pod(0) != nil })
	got := ordinals(tr.stepsOf(stepTerminating, mark))
	slices.Sort(got)
	wantOrdinals(t, "pods deleted by the scale-down (any order)", got, 1, 2, 3)

	// fix the template and scale up again: the unhealthy old pod is replaced, the new ones are created
	patchSet(t, ctx, ns, "par", fmt.Sprintf(`{"spec":{"replicas":3,"template":{"metadata":{"annotations":{%q:null}}}}}`, annNeverReady))
	s := waitRolledOut(t, ctx, ns, "par", 3)
	tr.waitFor(ctx, "3 pods ready at the update revision", 30*time.Second, func(v podView) bool { return v.readyAt(3, s.Status.UpdateRevision) })
	tr.checkInvariants()
}

// ---------------------------------------------------------------------------------------------- scaling

// Scale down and up, then delete the set, with each PVC retention policy: the garbage collector must
// delete exactly the claims the policy gives up.
func TestScaleWithPVCRetention(t *testing.T) {
	t.Parallel()
	const (
		retain = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
		del    = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	)
	for _, pc := range []struct {
		whenDeleted, whenScaled appsv1.PersistentVolumeClaimRetentionPolicyType
	}{
		{retain, retain}, {retain, del}, {del, retain}, {del, del},
	} {
		t.Run(fmt.Sprintf("whenDeleted=%s,whenScaled=%s", pc.whenDeleted, pc.whenScaled), func(t *testing.T) {
			t.Parallel()
			ctx, ns, _, tr := begin(t, "pvc", true)
			createSet(t, ctx, ns, newSet("pvc", 3, withClaims(pc.whenDeleted, pc.whenScaled)))
			waitRolledOut(t, ctx, ns, "pvc", 3)
			claims := listClaims(t, ctx, ns)
			uids := map[string]types.UID{}
			for i := 0; i < 3; i++ {
				n := fmt.Sprintf("data-pvc-%d", i)
				cl, ok := claims[n]
				if !ok {
					t.Fatalf("PVC %s missing", n)
				}
				uids[n] = cl.UID
				if got, want := hasOwner(cl.OwnerReferences, "StatefulSet", "pvc"), pc.whenDeleted == del; got != want {
					t.Errorf("PVC %s owner refs %s: StatefulSet owner %v, want %v", n, ownersString(cl.OwnerReferences), got, want)
				}
			}

			// scale down 3 -> 1: pvc-2 then pvc-1, one at a time
			mark := tr.mark()
			pod1, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, "pvc-1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			scaleCanary := gcCanary(t, ctx, ns, "Pod", "v1", pod1.Name, pod1.UID)
			patchSet(t, ctx, ns, "pvc", `{"spec":{"replicas":1}}`)
			waitRolledOut(t, ctx, ns, "pvc", 1)
			tr.waitFor(ctx, "only pvc-0 left", time.Minute, func(v podView) bool { return v.count() == 1 && v.ready(0) })
			term := tr.stepsOf(stepTerminating, mark)
			wantOrdinals(t, "scale-down deletions", ordinals(term), 2, 1)
			if gone := tr.stepsOf(stepDeleted, mark); len(term) == 2 && len(gone) >= 1 && term[1].at.Before(gone[0].at) {
				t.Errorf("pvc-1 was deleted (%s) before pvc-2 was gone (%s)", term[1].at.Format("15:04:05.000"), gone[0].at.Format("15:04:05.000"))
			}
			scaledClaims := []string{"data-pvc-1", "data-pvc-2"}
			if pc.whenScaled == del {
				waitClaims(t, ctx, ns, "data-pvc-1 and data-pvc-2 deleted (whenScaled=Delete)", time.Minute, func(m map[string]*corev1.PersistentVolumeClaim) bool {
					return m["data-pvc-1"] == nil && m["data-pvc-2"] == nil && m["data-pvc-0"] != nil
				})
			} else {
				// Once the garbage collector has removed pvc-1's other dependent, it has had its chance at
				// pvc-1's claims: a positive signal instead of a pause.
				waitCanaryGone(t, ctx, ns, scaleCanary)
				now := listClaims(t, ctx, ns)
				for _, n := range append(scaledClaims, "data-pvc-0") {
					if cl, ok := now[n]; !ok || cl.UID != uids[n] || cl.DeletionTimestamp != nil {
						t.Errorf("PVC %s not kept after scale-down with whenScaled=Retain (present=%v)", n, ok)
					}
				}
			}

			// scale up 1 -> 3: retained claims are reused, deleted ones recreated
			patchSet(t, ctx, ns, "pvc", `{"spec":{"replicas":3}}`)
			waitRolledOut(t, ctx, ns, "pvc", 3)
			now := listClaims(t, ctx, ns)
			for _, n := range scaledClaims {
				cl, ok := now[n]
				if !ok {
					t.Errorf("PVC %s missing after scale-up", n)
					continue
				}
				if reused := cl.UID == uids[n]; reused != (pc.whenScaled == retain) {
					t.Errorf("PVC %s after scale-up: reused=%v, want %v", n, reused, pc.whenScaled == retain)
				}
				if got, want := hasOwner(cl.OwnerReferences, "StatefulSet", "pvc"), pc.whenDeleted == del; got != want {
					t.Errorf("PVC %s owner refs %s after scale-up: StatefulSet owner %v, want %v", n, ownersString(cl.OwnerReferences), got, want)
				}
				if slices.ContainsFunc(cl.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "Pod" }) {
					t.Errorf("PVC %s of a live pod has a Pod owner: %s", n, ownersString(cl.OwnerReferences))
				}
			}

			// delete the set: the garbage collector deletes pods, and the claims when whenDeleted=Delete
			set := getSet(t, ctx, ns, "pvc")
			deleteCanary := gcCanary(t, ctx, ns, "StatefulSet", "apps/v1", set.Name, set.UID)
			if err := cfg.kc.AppsV1().StatefulSets(ns).Delete(ctx, "pvc", deleteOptions(metav1.DeletePropagationBackground)); err != nil {
				t.Fatal(err)
			}
			tr.waitFor(ctx, "all pods gone", time.Minute, func(v podView) bool { return v.count() == 0 })
			if pc.whenDeleted == del {
				waitClaims(t, ctx, ns, "all claims deleted (whenDeleted=Delete)", time.Minute, func(m map[string]*corev1.PersistentVolumeClaim) bool { return len(m) == 0 })
			} else {
				waitCanaryGone(t, ctx, ns, deleteCanary) // the collector has acted on the set's dependents
				if n := len(listClaims(t, ctx, ns)); n != 3 {
					t.Errorf("%d PVCs left after deleting the set with whenDeleted=Retain, want 3", n)
				}
			}
			tr.checkInvariants()
		})
	}
}

// ---------------------------------------------------------------------------------------------- updates

// RollingUpdate: pods are replaced from the highest ordinal down, one at a time (never more than one
// unavailable), and the status ends with currentRevision == updateRevision.
func TestRollingUpdate(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "roll", true)
	createSet(t, ctx, ns, newSet("roll", 3))
	rev1 := waitRolledOut(t, ctx, ns, "roll", 3).Status.UpdateRevision
	peak := tr.armMaxUnavailable(ctx, 3, 1)
	mark := tr.mark()
	patchSet(t, ctx, ns, "roll", setVersion("v2"))
	s := waitRolledOut(t, ctx, ns, "roll", 3)
	rev2 := s.Status.UpdateRevision
	if rev2 == rev1 {
		t.Fatalf("update revision unchanged (%s) after a template change", rev1)
	}
	tr.waitFor(ctx, "3 pods ready at the new revision", 30*time.Second, func(v podView) bool { return v.readyAt(3, rev2) })
	tr.checkInvariants()
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 2, 1, 0)
	wantEachReplacedOnce(t, tr, 3)
	if p := peak(); p != 1 {
		t.Errorf("peak unavailable pods during the rollout: %d, want 1", p)
	}
	if revs := listRevisions(t, ctx, ns, "roll"); len(revs) != 2 {
		t.Errorf("ControllerRevisions %v, want 2", revisionNames(revs))
	}
}

// Partition: a canary (only the highest ordinal), then a staged roll-out, then the rest.
func TestPartitionCanaryThenStagedRollout(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "canary", true)
	createSet(t, ctx, ns, newSet("canary", 4))
	rev1 := waitRolledOut(t, ctx, ns, "canary", 4).Status.UpdateRevision
	before := tr.uidsByName(ctx)
	tr.armMaxUnavailable(ctx, 4, 1)
	mark := tr.mark()

	stage := func(partition int32) string {
		t.Helper()
		s := patchSet(t, ctx, ns, "canary", fmt.Sprintf(`{"spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":%d}},"template":{"metadata":{"annotations":{%q:"v2"}}}}}`, partition, annVersion))
		want := 4 - partition
		s = waitSet(t, ctx, ns, "canary", fmt.Sprintf("partition %d: %d updated, 4 ready", partition, want), 2*time.Minute, func(s *appsv1.StatefulSet) bool {
			return s.Status.ObservedGeneration >= s.Generation && s.Status.UpdatedReplicas == want && s.Status.ReadyReplicas == 4 && s.Status.UpdateRevision != rev1
		})
		rev2 := s.Status.UpdateRevision
		tr.waitFor(ctx, fmt.Sprintf("ordinals >= %d ready at the new revision, the others at the old one", partition), 30*time.Second, func(v podView) bool {
			for i := 0; i < 4; i++ {
				want := rev1
				if int32(i) >= partition {
					want = rev2
				}
				if !v.ready(i) || v.revision(i) != want {
					return false
				}
			}
			return v.count() == 4
		})
		if partition > 0 {
			// The rollout down to the partition is done and its status written (waitSet above): a pod
			// below it that this rollout replaced would show now.
			var below []string
			for i := int32(0); i < partition; i++ {
				below = append(below, fmt.Sprintf("canary-%d", i))
			}
			samePods(t, ctx, ns, before, fmt.Sprintf("partition %d holds ordinals below it", partition), below...)
			if s := getSet(t, ctx, ns, "canary"); s.Status.CurrentRevision != rev1 {
				t.Errorf("partition %d: currentRevision %s, want the old %s", partition, s.Status.CurrentRevision, rev1)
			}
			now := tr.uidsByName(ctx)
			for i := int32(0); i < partition; i++ {
				n := fmt.Sprintf("canary-%d", i)
				if now[n] != before[n] {
					t.Errorf("partition %d: pod %s below the partition was replaced", partition, n)
				}
			}
		}
		return rev2
	}
	rev2 := stage(3) // canary
	if r := stage(1); r != rev2 {
		t.Errorf("update revision changed between stages: %s -> %s", rev2, r)
	}
	stage(0)
	s := waitRolledOut(t, ctx, ns, "canary", 4)
	if s.Status.CurrentRevision != rev2 {
		t.Errorf("currentRevision %s, want %s", s.Status.CurrentRevision, rev2)
	}
	tr.checkInvariants()
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 3, 2, 1, 0)
	wantEachReplacedOnce(t, tr, 4)
}

// maxUnavailable 2 on 5 replicas: two pods are replaced at a time, never more.
func TestMaxUnavailable(t *testing.T) {
	t.Parallel()
	for _, policy := range []appsv1.PodManagementPolicyType{appsv1.ParallelPodManagement, appsv1.OrderedReadyPodManagement} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			ctx, ns, _, tr := begin(t, "mu", policy == appsv1.OrderedReadyPodManagement)
			createSet(t, ctx, ns, newSet("mu", 5, maxUnavailable(2), func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = policy }))
			waitRolledOut(t, ctx, ns, "mu", 5)
			peak := tr.armMaxUnavailable(ctx, 5, 2)
			mark := tr.mark()
			patchSet(t, ctx, ns, "mu", setVersion("v2"))
			s := waitRolledOut(t, ctx, ns, "mu", 5)
			tr.waitFor(ctx, "5 pods ready at the new revision", 30*time.Second, func(v podView) bool { return v.readyAt(5, s.Status.UpdateRevision) })
			tr.checkInvariants()
			if p := peak(); p != 2 {
				t.Errorf("peak unavailable pods during the rollout: %d, want 2", p)
			}
			wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 4, 3, 2, 1, 0)
			wantEachReplacedOnce(t, tr, 5)
		})
	}
}

// OnDelete: a template change replaces nothing until a pod is deleted by hand.
func TestOnDelete(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "od", true)
	createSet(t, ctx, ns, newSet("od", 3, onDelete))
	rev1 := waitRolledOut(t, ctx, ns, "od", 3).Status.UpdateRevision
	before := tr.uidsByName(ctx)
	patchSet(t, ctx, ns, "od", setVersion("v2"))
	s := waitSet(t, ctx, ns, "od", "new update revision, nothing updated", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration >= s.Generation && s.Status.UpdateRevision != "" && s.Status.UpdateRevision != rev1
	})
	rev2 := s.Status.UpdateRevision
	samePods(t, ctx, ns, before, "OnDelete: the controller must not replace pods itself", "od-0", "od-1", "od-2")
	if s := getSet(t, ctx, ns, "od"); s.Status.UpdatedReplicas != 0 || s.Status.CurrentRevision != rev1 {
		t.Errorf("before any deletion: %s", statusString(s))
	}

	if err := cfg.kc.CoreV1().Pods(ns).Delete(ctx, "od-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	tr.waitFor(ctx, "od-1 recreated at the new revision and Ready", time.Minute, func(v podView) bool {
		return v.ready(1) && v.revision(1) == rev2 && v.pod(1).UID != before["od-1"]
	})
	waitSet(t, ctx, ns, "od", "1 updated, 3 ready", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.UpdatedReplicas == 1 && s.Status.ReadyReplicas == 3
	})
	samePods(t, ctx, ns, before, "OnDelete: only the deleted pod is replaced", "od-0", "od-2")
	now := tr.uidsByName(ctx)
	for _, n := range []string{"od-0", "od-2"} {
		if now[n] != before[n] {
			t.Errorf("pod %s was replaced without being deleted", n)
		}
	}
	for _, n := range []string{"od-0", "od-2"} {
		if err := cfg.kc.CoreV1().Pods(ns).Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitRolledOut(t, ctx, ns, "od", 3)
	tr.checkInvariants()
	wantEachReplacedOnce(t, tr, 3)
}

// A revision whose pods never become Ready stops the rollout at the first replaced pod; reverting the
// template and deleting the stuck pod (upstream's documented forced rollback) restores the set.
func TestNeverReadyRevisionStopsRollout(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "stuck", true)
	createSet(t, ctx, ns, newSet("stuck", 3))
	rev1 := waitRolledOut(t, ctx, ns, "stuck", 3).Status.UpdateRevision
	before := tr.uidsByName(ctx)
	mark := tr.mark()
	patchSet(t, ctx, ns, "stuck", fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:"true"}}}}}`, annNeverReady))
	var rev2 string
	tr.waitFor(ctx, "stuck-2 recreated at the new revision, Running but not Ready", time.Minute, func(v podView) bool {
		p := v.pod(2)
		if p == nil || p.UID == before["stuck-2"] || p.Status.Phase != corev1.PodRunning || v.ready(2) || podRevision(p) == rev1 {
			return false
		}
		rev2 = podRevision(p)
		return true
	})
	s := waitSet(t, ctx, ns, "stuck", "stalled status", 30*time.Second, func(s *appsv1.StatefulSet) bool {
		return s.Status.UpdateRevision == rev2 && s.Status.CurrentRevision == rev1 && s.Status.UpdatedReplicas == 1 &&
			s.Status.ReadyReplicas == 2 && s.Status.Replicas == 3
	})
	t.Logf("stalled: %s", statusString(s))
	// that status was written by a sync that saw stuck-2 not Ready, after that sync's writes
	samePods(t, ctx, ns, before, "the new revision's pod never becomes Ready, so the rollout must stop", "stuck-0", "stuck-1")
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 2)

	// forced rollback
	patchSet(t, ctx, ns, "stuck", fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:null}}}}}`, annNeverReady))
	waitSet(t, ctx, ns, "stuck", "update revision back to the original", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration >= s.Generation && s.Status.UpdateRevision == rev1
	})
	if revs := listRevisions(t, ctx, ns, "stuck"); len(revs) != 2 {
		t.Errorf("ControllerRevisions after the rollback %v, want 2 (the original one reused)", revisionNames(revs))
	}
	if err := cfg.kc.CoreV1().Pods(ns).Delete(ctx, "stuck-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s = waitRolledOut(t, ctx, ns, "stuck", 3)
	if s.Status.CurrentRevision != rev1 {
		t.Errorf("currentRevision %s after the rollback, want %s", s.Status.CurrentRevision, rev1)
	}
	now := tr.uidsByName(ctx)
	for _, n := range []string{"stuck-0", "stuck-1"} {
		if now[n] != before[n] {
			t.Errorf("pod %s was replaced", n)
		}
	}
	tr.checkInvariants()
}

// ---------------------------------------------------------------------------------------------- deletion

// Deleting the set: the garbage collector removes pods and revisions; the controller recreates nothing,
// also while a foreground deletion keeps the set (with a deletionTimestamp) until its pods are gone.
func TestDeleteSet(t *testing.T) {
	t.Parallel()
	for _, prop := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		t.Run(string(prop), func(t *testing.T) {
			t.Parallel()
			ctx, ns, c, tr := begin(t, "del", true)
			createSet(t, ctx, ns, newSet("del", 3, withClaims("", "")))
			waitRolledOut(t, ctx, ns, "del", 3)
			mark := tr.mark()
			if err := cfg.kc.AppsV1().StatefulSets(ns).Delete(ctx, "del", deleteOptions(prop)); err != nil {
				t.Fatal(err)
			}
			tr.waitFor(ctx, "all pods gone", time.Minute, func(v podView) bool { return v.count() == 0 })
			waitGone(t, ctx, "the StatefulSet", cache.NewListWatchFromClient(cfg.kc.AppsV1().RESTClient(), "statefulsets", ns,
				fields.OneTermEqualSelector("metadata.name", "del")), &appsv1.StatefulSet{}, time.Minute)
			waitGone(t, ctx, "the ControllerRevisions", labelLW("controllerrevisions", ns, "app=del", cfg.kc.AppsV1().RESTClient()),
				&appsv1.ControllerRevision{}, time.Minute)
			// the controller has seen the set gone; from then on it has nothing to create pods for
			c.waitLog(ctx, "a sync that finds the set gone", time.Minute, `"set":"`+ns+`/del"`, `"result":"not_found"`)
			if l, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=del"}); err != nil || len(l.Items) > 0 {
				t.Errorf("pods after the set is gone: %v (%v)", l, err)
			}
			if c := tr.stepsOf(stepCreated, mark); len(c) > 0 {
				t.Errorf("pods created after the deletion request: %v", c)
			}
			if n := len(listClaims(t, ctx, ns)); n != 3 {
				t.Errorf("%d PVCs left, want 3 (default policy Retain)", n)
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------- takeover

// The same set first managed by kube-controller-manager's own StatefulSet controller, then by Ordinal:
// no pod is restarted and no ControllerRevision is created (Ordinal computes the same revision hashes).
// Not parallel: it restarts kube-controller-manager, whose built-in controller would act in every namespace.
func TestTakeoverFromKubeControllerManager(t *testing.T) {
	requireController(t)
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	restartKCM(t, kcmBuiltinSTS)
	tr := trackPods(t, ctx, ns, "tk", true)
	createSet(t, ctx, ns, newSet("tk", 3, withClaims(appsv1.DeletePersistentVolumeClaimRetentionPolicyType, "")))
	waitRolledOut(t, ctx, ns, "tk", 3)
	// some history: a rolling update by the built-in controller
	patchSet(t, ctx, ns, "tk", setVersion("v2"))
	kcmSet := waitRolledOut(t, ctx, ns, "tk", 3)
	kcmRevs := listRevisions(t, ctx, ns, "tk")
	if len(kcmRevs) != 2 {
		t.Fatalf("built-in controller made ControllerRevisions %v, want 2", revisionNames(kcmRevs))
	}
	uids := tr.uidsByName(ctx)
	t.Logf("managed by kube-controller-manager: %s; revisions %v", statusString(kcmSet), revisionNames(kcmRevs))

	restartKCM(t, kcmDefault)
	mark := tr.mark()
	c := startController(t, ns, ctrlOpts{})
	c.waitReady(ctx)
	// its first sync of the set is over (writes first, then the log line): nothing was replaced
	c.waitLog(ctx, "the first sync of tk", time.Minute, `"msg":"Synced StatefulSet"`, `"set":"`+ns+`/tk"`, `"result":"success"`)
	samePods(t, ctx, ns, uids, "Ordinal took over a settled set: no pod may be touched", "tk-0", "tk-1", "tk-2")
	if c := tr.stepsOf(stepCreated, mark); len(c) > 0 {
		t.Errorf("pods created on takeover: %v", c)
	}

	// Ordinal is in charge: a scale-up creates tk-3 at the existing revision
	patchSet(t, ctx, ns, "tk", `{"spec":{"replicas":4}}`)
	s := waitRolledOut(t, ctx, ns, "tk", 4)
	tr.checkInvariants()
	if s.Status.UpdateRevision != kcmSet.Status.UpdateRevision || s.Status.CurrentRevision != kcmSet.Status.CurrentRevision {
		t.Errorf("revisions changed on takeover: current %s -> %s, update %s -> %s", kcmSet.Status.CurrentRevision,
			s.Status.CurrentRevision, kcmSet.Status.UpdateRevision, s.Status.UpdateRevision)
	}
	if p := tr.snapshot()["tk-3"]; p == nil || podRevision(p) != kcmSet.Status.UpdateRevision {
		t.Errorf("tk-3 not created at revision %s", kcmSet.Status.UpdateRevision)
	}
	now := tr.uidsByName(ctx)
	for n, u := range uids {
		if now[n] != u {
			t.Errorf("pod %s restarted on takeover (uid %s -> %s)", n, u, now[n])
		}
	}
	if d := tr.stepsOf(stepTerminating, mark); len(d) > 0 {
		t.Errorf("pods deleted after the takeover: %v", d)
	}
	revs := listRevisions(t, ctx, ns, "tk")
	if !slices.EqualFunc(revs, kcmRevs, func(a, b appsv1.ControllerRevision) bool {
		return a.Name == b.Name && a.UID == b.UID && a.Revision == b.Revision
	}) {
		t.Errorf("ControllerRevisions changed on takeover:\n before %v\n after  %v", revisionNames(kcmRevs), revisionNames(revs))
	}
	// The status can say 4 ready before tk-3's claim has the set as its owner: when the claim's update is
	// refused with a Conflict (kube-controller-manager's volume binder wrote the claim first), the sync still
	// writes the status, as upstream's does, and the next sync retries the claim.
	waitClaims(t, ctx, ns, "4 PVCs owned by the StatefulSet (whenDeleted=Delete)", time.Minute, claimsOwnedBy(s.UID, "apps/v1", 4))
	claims := listClaims(t, ctx, ns)
	if len(claims) != 4 {
		t.Errorf("%d PVCs, want 4", len(claims))
	}
	for n, cl := range claims {
		if !hasOwner(cl.OwnerReferences, "StatefulSet", "tk") {
			t.Errorf("PVC %s: owner refs %s, want the StatefulSet (whenDeleted=Delete)", n, ownersString(cl.OwnerReferences))
		}
	}
}

// ---------------------------------------------------------------------------------------------- crashes

// SIGKILL the controller mid-rollout, twice (while it waits for minReadySeconds, and right after it
// deleted a pod), restarting it each time: no duplicate pod, no pod replaced twice, and the rollout ends.
func TestControllerKilledMidRollout(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	c1 := startController(t, ns, ctrlOpts{identity: "first"})
	c1.waitReady(ctx)
	tr := trackPods(t, ctx, ns, "crash", true)
	createSet(t, ctx, ns, newSet("crash", 4, withClaims("", "")))
	rev1 := waitRolledOut(t, ctx, ns, "crash", 4).Status.UpdateRevision
	tr.armMaxUnavailable(ctx, 4, 1)
	mark := tr.mark()
	patchSet(t, ctx, ns, "crash", fmt.Sprintf(`{"spec":{"minReadySeconds":2,"template":{"metadata":{"annotations":{%q:"v2"}}}}}`, annVersion))

	tr.waitFor(ctx, "crash-3 Ready at the new revision", time.Minute, func(v podView) bool {
		return v.ready(3) && v.revision(3) != rev1 && v.revision(3) != ""
	})
	c1.kill()
	c2 := startController(t, ns, ctrlOpts{identity: "second"})
	c2.waitReady(ctx)
	tr.waitFor(ctx, "crash-1 deleted for the update", 2*time.Minute, func(v podView) bool {
		p := v.pod(1)
		return p == nil || p.DeletionTimestamp != nil || podRevision(p) != rev1
	})
	c2.kill()
	c3 := startController(t, ns, ctrlOpts{identity: "third"})
	c3.waitReady(ctx)
	s := waitRolledOut(t, ctx, ns, "crash", 4)
	tr.waitFor(ctx, "4 pods ready at the new revision", 30*time.Second, func(v podView) bool { return v.readyAt(4, s.Status.UpdateRevision) })
	tr.checkInvariants()
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 3, 2, 1, 0)
	wantEachReplacedOnce(t, tr, 4)
	wantNoAlreadyExists(t, ctx, ns, c1, c2, c3)
	if revs := listRevisions(t, ctx, ns, "crash"); len(revs) != 2 {
		t.Errorf("ControllerRevisions %v, want 2", revisionNames(revs))
	}
}

func waitLease(t *testing.T, ctx context.Context, ns, name, desc string, timeout time.Duration, cond func(holder string) bool) string {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lw := cache.NewListWatchFromClient(cfg.kc.CoordinationV1().RESTClient(), "leases", ns, fields.OneTermEqualSelector("metadata.name", name))
	holder := ""
	_, err := watchtools.UntilWithSync(wctx, lw, &coordinationv1.Lease{}, nil, func(ev watch.Event) (bool, error) {
		l, ok := ev.Object.(*coordinationv1.Lease)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		holder = ptrStr(l.Spec.HolderIdentity)
		return cond(holder), nil
	})
	if err != nil {
		t.Fatalf("Lease %s/%s: timed out after %s waiting for %s (holder %q)", ns, name, timeout, desc, holder)
	}
	return holder
}

// Two replicas with leader election: only one leads; SIGKILL it mid-rollout and the other takes over the
// lease and finishes the rollout.
func TestLeaderElectionFailover(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	const lease = "ordinal-e2e"
	ctrls := map[string]*controllerProc{}
	for _, id := range []string{"alpha", "beta"} {
		ctrls[id] = startController(t, ns, ctrlOpts{identity: id, leaderElect: true, leaseID: lease})
	}
	for _, c := range ctrls {
		c.waitHTTP(ctx, c.health, "/healthz", 60*time.Second)
	}
	leader := waitLease(t, ctx, ns, lease, "a leader", time.Minute, func(h string) bool { return ctrls[h] != nil })
	t.Logf("leader: %s", leader)
	tr := trackPods(t, ctx, ns, "le", true)
	createSet(t, ctx, ns, newSet("le", 4))
	rev1 := waitRolledOut(t, ctx, ns, "le", 4).Status.UpdateRevision
	tr.armMaxUnavailable(ctx, 4, 1)
	mark := tr.mark()
	patchSet(t, ctx, ns, "le", fmt.Sprintf(`{"spec":{"minReadySeconds":2,"template":{"metadata":{"annotations":{%q:"v2"}}}}}`, annVersion))
	tr.waitFor(ctx, "le-3 Ready at the new revision", time.Minute, func(v podView) bool {
		return v.ready(3) && v.revision(3) != rev1 && v.revision(3) != ""
	})
	ctrls[leader].kill()
	follower := "alpha"
	if leader == "alpha" {
		follower = "beta"
	}
	t0 := time.Now()
	waitLease(t, ctx, ns, lease, "the other replica to take the lease", 90*time.Second, func(h string) bool { return h == follower })
	t.Logf("%s took the lease %.1fs after %s was killed", follower, time.Since(t0).Seconds(), leader)
	s := waitRolledOut(t, ctx, ns, "le", 4)
	tr.waitFor(ctx, "4 pods ready at the new revision", 30*time.Second, func(v podView) bool { return v.readyAt(4, s.Status.UpdateRevision) })
	tr.checkInvariants()
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 3, 2, 1, 0)
	wantEachReplacedOnce(t, tr, 4)
	wantNoAlreadyExists(t, ctx, ns, ctrls["alpha"], ctrls["beta"])
	// the standby synced nothing before it led ("Synced StatefulSet"/"Sync failed" are the per-sync log lines)
	became := false
	for _, l := range ctrls[follower].logLines("Became leader", "Synced StatefulSet", "Sync failed") {
		if strings.Contains(l, "Became leader") {
			became = true
		} else if !became {
			t.Errorf("standby %s synced before it became leader: %s", follower, l)
			break
		}
	}
	if !became {
		t.Errorf("%s holds the lease but its log has no \"Became leader\" line", follower)
	}
}

// ---------------------------------------------------------------------------------------------- snapshot

// `ordinal snapshot` writes a snapshot that `ordinal reconcile -f` accepts: for a settled set the plan
// changes nothing; after a scale-up the controller has not seen, the plan creates the new pod.
func TestSnapshotAcceptedByReconcile(t *testing.T) {
	t.Parallel()
	ctx, ns, c, _ := begin(t, "snap", true)
	createSet(t, ctx, ns, newSet("snap", 3, withClaims("", "")))
	waitRolledOut(t, ctx, ns, "snap", 3)
	dir := filepath.Dir(c.logPath)

	snapshot := func(file string) map[string]any {
		t.Helper()
		out, errOut, code := runOrdinal(t, ctx, "snapshot", "statefulset/snap", "-n", ns, "-o", "json", "--kubeconfig", cfg.kubeconfig)
		if code != 0 {
			t.Fatalf("ordinal snapshot: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
		}
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("snapshot file: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("snapshot %s is not JSON: %v", file, err)
		}
		return m
	}
	reconcile := func(file string) map[string]any {
		t.Helper()
		out, errOut, code := runOrdinal(t, ctx, "reconcile", "-o", "json", "-f", file)
		if code != 0 {
			t.Fatalf("ordinal reconcile -f %s: exit %d\nstdout: %s\nstderr: %s", file, code, firstLines(out, 40), errOut)
		}
		var plan map[string]any
		if err := json.Unmarshal([]byte(out), &plan); err != nil {
			t.Fatalf("plan is not JSON: %v\n%s", err, firstLines(out, 20))
		}
		if plan["error"] != nil {
			t.Errorf("plan has an error: %v", plan["error"])
		}
		return plan
	}
	actions := func(plan map[string]any) []string {
		var out []string
		as, _ := plan["actions"].([]any)
		for _, a := range as {
			m, _ := a.(map[string]any)
			out = append(out, fmt.Sprintf("%v %v %v", m["verb"], m["kind"], m["name"]))
		}
		return out
	}

	f1 := filepath.Join(dir, "settled.snapshot.json")
	snap := snapshot(f1)
	if fmt.Sprint(snap["abi"]) != "1" {
		t.Errorf("snapshot abi %v, want 1", snap["abi"])
	}
	for k, want := range map[string]int{"pods": 3, "revisions": 1, "claims": 3} {
		if l, _ := snap[k].([]any); len(l) != want {
			t.Errorf("snapshot has %d %s, want %d", len(l), k, want)
		}
	}
	if a := actions(reconcile(f1)); slices.ContainsFunc(a, func(s string) bool { return !strings.HasPrefix(s, "updateStatus ") }) {
		t.Errorf("plan for a settled set writes something: %v", a)
	} else {
		t.Logf("plan for the settled set: %v", a)
	}

	c.stop()
	patchSet(t, ctx, ns, "snap", `{"spec":{"replicas":4}}`)
	f2 := filepath.Join(dir, "scaled.snapshot.json")
	snapshot(f2)
	a := actions(reconcile(f2))
	t.Logf("plan after the unseen scale-up: %v", a)
	if !slices.Contains(a, "create Pod snap-3") {
		t.Errorf("plan after a scale-up to 4 lacks `create Pod snap-3`: %v", a)
	}
}

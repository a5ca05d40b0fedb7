//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The pause extension on the real control plane, chosen per set (ordinal.dev/module: extended): a paused
// set's template edit makes a new revision and no pod change; moving the set back to the active (faithful)
// module mid-rollout, with the pause annotation still on it, lets the rollout finish.
func TestPauseExtensionPerSet(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "pz", true)
	set := newSet("pz", 3)
	set.Annotations = map[string]string{"ordinal.dev/module": "extended"}
	createSet(t, ctx, ns, set)
	before := waitRolledOut(t, ctx, ns, "pz", 3)
	uids := tr.uidsByName(ctx)

	mark := tr.mark()
	patchSet(t, ctx, ns, "pz", `{"metadata":{"annotations":{"ordinal.dev/paused":"true"}},"spec":{"template":{"metadata":{"annotations":{"`+annVersion+`":"v2"}}}}}`)
	paused := waitSet(t, ctx, ns, "pz", "the edit observed, nothing updated (paused)", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdateRevision != before.Status.UpdateRevision && s.Status.UpdatedReplicas == 0
	})
	waitFor(t, ctx, "a Paused event on pz", time.Minute, func() bool {
		l, err := eventsOf(ctx, ns, "pz", "Paused")
		return err == nil && len(l.Items) > 0 && strings.Contains(l.Items[0].Message, "no pod is created, deleted or updated")
	})
	// The sync that wrote that status issued every write it planned before it: no pod was touched.
	samePods(t, ctx, ns, uids, "while paused", "pz-0", "pz-1", "pz-2")
	wantNoPodChange(t, tr, mark)
	if paused.Status.CurrentRevision != before.Status.CurrentRevision || paused.Status.CurrentReplicas != 3 {
		t.Errorf("paused status: %s", statusString(paused))
	}

	// Back to the active module mid-rollout: the faithful module knows no pause, and rolls the set out.
	patchSet(t, ctx, ns, "pz", `{"metadata":{"annotations":{"ordinal.dev/module":null}}}`)
	after := waitRolledOut(t, ctx, ns, "pz", 3)
	if after.Status.UpdateRevision != paused.Status.UpdateRevision {
		t.Errorf("the rollout made another revision: %s, paused at %s", after.Status.UpdateRevision, paused.Status.UpdateRevision)
	}
	tr.checkInvariants()
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 2, 1, 0)
}

// The forced-rollback trap of kubernetes/kubernetes#67250 on the real control plane, and the
// recover-stuck extension's way out: a revision whose pod never becomes Ready stops the rollout at the
// top ordinal; reverting the template makes the old revision the update revision again, and upstream would
// wait forever for the stuck pod. With ordinal.dev/recover-stuck-after the extended module deletes it once it
// has not been Ready for that long, it comes back at the old revision, and the set is rolled out.
func TestRecoverStuckExtension(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "st", true)
	set := newSet("st", 3)
	set.Annotations = map[string]string{"ordinal.dev/module": "extended", "ordinal.dev/recover-stuck-after": "2s"}
	createSet(t, ctx, ns, set)
	good := waitRolledOut(t, ctx, ns, "st", 3)
	uids := tr.uidsByName(ctx)

	patchSet(t, ctx, ns, "st", `{"spec":{"template":{"metadata":{"annotations":{"`+annVersion+`":"v2","`+annNeverReady+`":"true"}}}}}`)
	waitSet(t, ctx, ns, "st", "stuck: st-2 at the bad revision, not Ready", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReplicas == 1 && s.Status.UpdateRevision != good.Status.UpdateRevision
	})
	mark := tr.mark()
	patchSet(t, ctx, ns, "st", `{"spec":{"template":{"metadata":{"annotations":{"`+annVersion+`":"v1","`+annNeverReady+`":null}}}}}`)
	after := waitRolledOut(t, ctx, ns, "st", 3)
	if after.Status.UpdateRevision != good.Status.UpdateRevision {
		t.Errorf("rolled out to %s, want the reverted template's revision %s", after.Status.UpdateRevision, good.Status.UpdateRevision)
	}
	l, err := eventsOf(ctx, ns, "st", "RecoveredStuckPod")
	if err != nil || len(l.Items) != 1 || !strings.Contains(l.Items[0].Message, "st-2") {
		t.Errorf("RecoveredStuckPod events: %v %v; all events:\n%s", l, err, eventLog(ns))
	}
	wantOrdinals(t, "pods replaced after the revert", ordinals(tr.stepsOf(stepTerminating, mark)), 2)
	samePods(t, ctx, ns, uids, "the pods that were never stuck", "st-0", "st-1")
	tr.checkInvariants()
}

// A module supplied through the module ConfigMap (key NAME.wasm beside the active module's key) is the
// registry's module NAME once it passes the conformance gate: a set naming it runs on it, others do not.
// The module is the real guest with MaxUnavailableStatefulSet off: a set on it replaces one pod at a time
// despite maxUnavailable 2, while the same set on the active module takes two at a time.
func TestSuppliedModulePerSet(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	c := startController(t, ns, ctrlOpts{extraArgs: []string{"--module-configmap", ns + "/modules"}})
	c.waitReady(ctx)
	tr := trackPods(t, ctx, ns, "mu", true)
	set := newSet("mu", 5, maxUnavailable(2))
	set.Annotations = map[string]string{"ordinal.dev/module": "one-at-a-time"}
	createSet(t, ctx, ns, set)
	// Not supplied yet: left alone, with a warning naming the modules there are.
	waitFor(t, ctx, "an UnknownModule event on mu", time.Minute, func() bool {
		l, err := eventsOf(ctx, ns, "mu", "UnknownModule")
		return err == nil && len(l.Items) > 0 && strings.Contains(l.Items[0].Message, `"extended", "faithful"`)
	})
	if pods, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil || len(pods.Items) != 0 {
		t.Fatalf("pods of a set naming an unknown module: %v %v", pods, err)
	}
	// Supplied: the set is synced again (nothing else about it changes) on the module once it passes the gate.
	variant := readModule(t, filepath.Join(modulesDir(), "ordinal-maxunavailable-off.wasm"))
	if _, err := cfg.kc.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "modules"},
		BinaryData: map[string][]byte{"one-at-a-time.wasm": variant}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, ctx, ns, "mu", 5)

	peak := tr.armMaxUnavailable(ctx, 5, 1)
	patchSet(t, ctx, ns, "mu", setVersion("v2"))
	s := waitRolledOut(t, ctx, ns, "mu", 5)
	tr.waitFor(ctx, "5 pods ready at v2", 30*time.Second, func(v podView) bool { return v.readyAt(5, s.Status.UpdateRevision) })
	if p := peak(); p != 1 {
		t.Errorf("on the supplied module: peak unavailable %d, want 1 (MaxUnavailableStatefulSet off)", p)
	}
	// kubectl ordinal preview runs the supplied module when told the controller's ConfigMap (through the same
	// gate): one pod at a time; without it the set's module is unknown to the preview.
	edit := s.DeepCopy()
	edit.ObjectMeta = metav1.ObjectMeta{Name: "mu", Namespace: ns, Annotations: s.Annotations}
	edit.Status = appsv1.StatefulSetStatus{}
	edit.Spec.Template.Annotations = map[string]string{annVersion: "v2b"}
	edit.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	eb, _ := json.Marshal(edit)
	editFile := filepath.Join(t.TempDir(), "mu-v2b.json")
	if err := os.WriteFile(editFile, eb, 0o644); err != nil {
		t.Fatal(err)
	}
	out, perr, code := plugin(t, ctx, "preview", "-f", editFile, "--module-configmap", ns+"/modules")
	if code != 0 || !strings.Contains(out, "pods taken down, in batches: [mu-4] -> [mu-3] -> [mu-2] -> [mu-1] -> [mu-0]") {
		t.Errorf("kubectl ordinal preview --module-configmap: exit %d\n%s%s", code, out, perr)
	}
	if out, perr, code := plugin(t, ctx, "preview", "-f", editFile); code == 0 || !strings.Contains(out+perr, "one-at-a-time") {
		t.Errorf("kubectl ordinal preview without --module-configmap: exit %d\n%s%s", code, out, perr)
	}
	// Back on the active module: two at a time.
	patchSet(t, ctx, ns, "mu", `{"metadata":{"annotations":{"ordinal.dev/module":null}}}`)
	peak = tr.armMaxUnavailable(ctx, 5, 2)
	patchSet(t, ctx, ns, "mu", setVersion("v3"))
	s = waitRolledOut(t, ctx, ns, "mu", 5)
	tr.waitFor(ctx, "5 pods ready at v3", 30*time.Second, func(v podView) bool { return v.readyAt(5, s.Status.UpdateRevision) })
	if p := peak(); p != 2 {
		t.Errorf("on the active module: peak unavailable %d, want 2", p)
	}
	tr.checkInvariants()
}

// The reserve-ordinals extension on the real control plane (kubernetes/kubernetes#83224): reserving
// ordinal 1 of a running 3-replica set with claims (whenScaled Delete) creates ro-3 and then removes ro-1
// and its claim, as a scale-down removes a pod; the other pods are untouched and the set is rolled out
// with 3 replicas at ordinals 0, 2 and 3. The firewall lets the module create ro-3 (past
// spec.replicas) because the annotation reserves ordinal 1, and nothing further.
func TestReserveOrdinalsExtension(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "ro", true)
	set := newSet("ro", 3, withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType))
	set.Annotations = map[string]string{"ordinal.dev/module": "extended"}
	createSet(t, ctx, ns, set)
	waitRolledOut(t, ctx, ns, "ro", 3)
	uids := tr.uidsByName(ctx)

	mark := tr.mark()
	patchSet(t, ctx, ns, "ro", `{"metadata":{"annotations":{"ordinal.dev/reserve-ordinals":"1"}}}`)
	tr.waitFor(ctx, "ro-0, ro-2 and ro-3 Ready, ro-1 gone", 2*time.Minute, func(v podView) bool {
		return v.ready(0) && v.ready(2) && v.ready(3) && v.pod(1) == nil && v.count() == 3
	})
	waitFor(t, ctx, "data-ro-1 deleted (whenScaled: Delete)", 2*time.Minute, func() bool {
		_, err := cfg.kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-ro-1", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	s := waitRolledOut(t, ctx, ns, "ro", 3)
	if s.Status.Replicas != 3 {
		t.Errorf("status after the reservation: %s", statusString(s))
	}
	for _, n := range []string{"data-ro-0", "data-ro-2", "data-ro-3"} {
		if _, err := cfg.kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, n, metav1.GetOptions{}); err != nil {
			t.Errorf("claim %s: %v", n, err)
		}
	}
	samePods(t, ctx, ns, uids, "pods at ordinals the reservation keeps", "ro-0", "ro-2")
	wantOrdinals(t, "pods created", ordinals(tr.stepsOf(stepCreated, mark)), 3)
	wantOrdinals(t, "pods removed", ordinals(tr.stepsOf(stepTerminating, mark)), 1)
	tr.checkInvariants()
}

// The resize-claims extension on the real control plane (kubernetes/kubernetes#68737), with upstream's own
// workaround as the trigger: claims bound to volumes of a StorageClass that allows expansion, the set
// deleted with --cascade=orphan and created again with a larger claim template. The extended module
// adopts the pods (none replaced) and patches data-rz-2 first; kube-apiserver's PersistentVolumeClaimResize
// admission and validation accept the patch. This test plays the volume resizer (no CSI driver here): only
// once it has expanded a claim does the module patch the next ordinal's.
func TestResizeClaimsExtension(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "rz", true)
	class := ns + "-expandable"
	if _, err := cfg.kc.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class},
		Provisioner: "kubernetes.io/no-provisioner", AllowVolumeExpansion: ptr.To(true)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cfg.kc.StorageV1().StorageClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	for i := range 3 { // static volumes, pre-bound to the claims the set will create
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-data-rz-%d", ns, i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              class,
				ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: fmt.Sprintf("data-rz-%d", i)},
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + ns}},
			}}
		if _, err := cfg.kc.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cfg.kc.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
		})
	}
	sized := func(size string) *appsv1.StatefulSet {
		s := newSet("rz", 3, withClaims("", ""))
		s.Annotations = map[string]string{"ordinal.dev/module": "extended", "ordinal.dev/resize-claims": "true"}
		s.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = &class
		s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(size)
		return s
	}
	createSet(t, ctx, ns, sized("1Mi"))
	waitRolledOut(t, ctx, ns, "rz", 3)
	claim := func(i int) *corev1.PersistentVolumeClaim {
		c, err := cfg.kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, fmt.Sprintf("data-rz-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	request := func(c *corev1.PersistentVolumeClaim) string {
		q := c.Spec.Resources.Requests[corev1.ResourceStorage]
		return q.String()
	}
	waitFor(t, ctx, "the claims Bound", 2*time.Minute, func() bool {
		for i := range 3 {
			if claim(i).Status.Phase != corev1.ClaimBound {
				return false
			}
		}
		return true
	})
	uids := tr.uidsByName(ctx)
	mark := tr.mark()

	orphan := metav1.DeletePropagationOrphan
	if err := cfg.kc.AppsV1().StatefulSets(ns).Delete(ctx, "rz", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "rz deleted (orphaning its pods and claims)", 2*time.Minute, func() bool {
		_, err := cfg.kc.AppsV1().StatefulSets(ns).Get(ctx, "rz", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	createSet(t, ctx, ns, sized("2Mi"))
	for i := 2; i >= 0; i-- {
		waitFor(t, ctx, fmt.Sprintf("data-rz-%d patched to 2Mi", i), 2*time.Minute, func() bool { return request(claim(i)) == "2Mi" })
		for j := i - 1; j >= 0; j-- { // one ordinal at a time: the next waits for this one's expansion
			if r := request(claim(j)); r != "1Mi" {
				t.Fatalf("data-rz-%d is %s before data-rz-%d was expanded", j, r, i)
			}
		}
		// the resizer's work: the volume, then the claim's status
		pv, err := cfg.kc.CoreV1().PersistentVolumes().Get(ctx, fmt.Sprintf("%s-data-rz-%d", ns, i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("2Mi")
		if _, err := cfg.kc.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		cl := claim(i)
		cl.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Mi")}
		if _, err := cfg.kc.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, cl, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := eventsOf(ctx, ns, "rz", "ResizeClaim")
	if err != nil || len(l.Items) != 3 {
		t.Errorf("ResizeClaim events: %v %v; all events:\n%s", l, err, eventLog(ns))
	}
	samePods(t, ctx, ns, uids, "pods adopted by the recreated set", "rz-0", "rz-1", "rz-2")
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)))
	tr.checkInvariants()
}

//go:build e2e

package e2e

// Checks of the local cluster itself (no Ordinal controller): the pieces the controller tests rely on.
// They and TestTakeoverFromKubeControllerManager restart kube-controller-manager, so none of them is parallel:
// Go runs all sequential top-level tests before releasing the parallel ones.

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
)

const (
	kcmDefault    = "*,-statefulset-controller" // garbage collector on, built-in StatefulSet controller off
	kcmBuiltinSTS = "*"                         // built-in StatefulSet controller on
)

// kcm runs scripts/cluster-kcm.sh with args; the test is skipped when the cluster was not started by
// scripts/cluster-up.sh (then kube-controller-manager cannot be restarted).
func kcm(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{cfg.kcmScript}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "no cluster in") {
			t.Skipf("cannot restart kube-controller-manager: %s", strings.TrimSpace(string(out)))
		}
		t.Fatalf("cluster-kcm.sh %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// restartKCM restarts kube-controller-manager with --controllers=controllers and restores the default
// setting when the test ends.
func restartKCM(t *testing.T, controllers string) {
	t.Helper()
	t0 := time.Now()
	kcm(t, "restart", controllers)
	t.Logf("kube-controller-manager restarted with --controllers=%s in %.1fs", controllers, time.Since(t0).Seconds())
	if controllers != kcmDefault {
		t.Cleanup(func() {
			if kcm(t, "status") != kcmDefault {
				kcm(t, "restart", kcmDefault)
				t.Logf("kube-controller-manager restored to --controllers=%s", kcmDefault)
			}
		})
	}
}

func waitPod(t *testing.T, ctx context.Context, ns, name, desc string, timeout time.Duration, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lw := cache.NewListWatchFromClient(cfg.kc.CoreV1().RESTClient(), "pods", ns, fields.OneTermEqualSelector("metadata.name", name))
	var last *corev1.Pod
	ev, err := watchtools.UntilWithSync(wctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		last = p
		return cond(p), nil
	})
	if err != nil {
		st := "never seen"
		if last != nil {
			st = string(last.Status.Phase) + " " + condString(last)
		}
		t.Fatalf("pod %s/%s: timed out after %s waiting for %s; last: %s", ns, name, timeout, desc, st)
	}
	return ev.Object.(*corev1.Pod)
}

func condString(p *corev1.Pod) string {
	var b strings.Builder
	for _, c := range p.Status.Conditions {
		b.WriteString(string(c.Type) + "=" + string(c.Status) + " ")
	}
	return b.String()
}

func simplePod(name string, ann map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			TerminationGracePeriodSeconds: ptr.To[int64](1)},
	}
}

func claim(name string, owners ...metav1.OwnerReference) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
		},
	}
}

// kwok makes ordinary pods Running and Ready, and pods annotated never-ready Running but never Ready.
func TestClusterKwokNeverReadyStage(t *testing.T) {
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	pods := cfg.kc.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, simplePod("never", map[string]string{annNeverReady: "true"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, simplePod("normal", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ctx, ns, "normal", "Running and Ready", 60*time.Second, podReady)
	waitPod(t, ctx, ns, "never", "Running with Ready=False", 60*time.Second, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && !podReady(p)
	})
	// It must stay not ready. Not a window of watching: kwok has matched its Running state to the stages
	// (and played whatever it matched) once a pod created after it is Ready.
	kwokCaughtUp(t, ctx, ns)
	p, err := pods.Get(ctx, "never", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if podReady(p) || p.Status.Phase != corev1.PodRunning {
		t.Errorf("pod annotated %s=true: phase %s, %s; want Running and not Ready", annNeverReady, p.Status.Phase, condString(p))
	}
	// deletion completes for both (the suite's reaper, or kwok's pod-delete stage)
	for _, n := range []string{"never", "normal"} {
		if err := pods.Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitPodGone(t, ctx, ns, "never")
	waitPodGone(t, ctx, ns, "normal")
}

func waitPodGone(t *testing.T, ctx context.Context, ns, name string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	lw := cache.NewListWatchFromClient(cfg.kc.CoreV1().RESTClient(), "pods", ns, fields.OneTermEqualSelector("metadata.name", name))
	_, err := watchtools.UntilWithSync(wctx, lw, &corev1.Pod{}, func(s cache.Store) (bool, error) {
		return len(s.List()) == 0, nil
	}, func(ev watch.Event) (bool, error) { return ev.Type == watch.Deleted, nil })
	if err != nil {
		t.Fatalf("pod %s/%s not gone: %v", ns, name, err)
	}
}

// The garbage collector in kube-controller-manager deletes a PVC when its owner (a pod, or a StatefulSet)
// is deleted; that is how the StatefulSet PVC retention policies are carried out.
func TestClusterGarbageCollectorDeletesOwnedPVCs(t *testing.T) {
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	pod, err := cfg.kc.CoreV1().Pods(ns).Create(ctx, simplePod("owner", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := cfg.kc.AppsV1().StatefulSets(ns).Create(ctx, newSet("gcowner", 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(kind, apiVersion, name string, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), BlockOwnerDeletion: ptr.To(true)}
	}
	claims := cfg.kc.CoreV1().PersistentVolumeClaims(ns)
	for _, c := range []*corev1.PersistentVolumeClaim{
		claim("owned-by-pod", ref("Pod", "v1", pod.Name, string(pod.UID))),
		claim("owned-by-set", ref("StatefulSet", "apps/v1", set.Name, string(set.UID))),
		claim("unowned"),
	} {
		if _, err := claims.Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitClaims(t, ctx, ns, "all three bound by kwok", 60*time.Second, func(m map[string]*corev1.PersistentVolumeClaim) bool {
		return len(m) == 3 && m["owned-by-pod"].Status.Phase == corev1.ClaimBound && m["owned-by-set"].Status.Phase == corev1.ClaimBound &&
			m["unowned"].Status.Phase == corev1.ClaimBound
	})
	if err := cfg.kc.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaims(t, ctx, ns, "owned-by-pod deleted by the garbage collector", 60*time.Second, func(m map[string]*corev1.PersistentVolumeClaim) bool {
		_, ok := m["owned-by-pod"]
		return !ok
	})
	if err := cfg.kc.AppsV1().StatefulSets(ns).Delete(ctx, set.Name, deleteOptions(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitClaims(t, ctx, ns, "owned-by-set deleted by the garbage collector", 60*time.Second, func(m map[string]*corev1.PersistentVolumeClaim) bool {
		_, ok := m["owned-by-set"]
		return !ok
	})
	if _, ok := listClaims(t, ctx, ns)["unowned"]; !ok {
		t.Errorf("the unowned PVC was deleted too")
	}
}

// kube-controller-manager can be restarted with and without its StatefulSet controller while the cluster
// runs: with the default setting nobody manages a StatefulSet; with '*' the built-in controller does.
func TestClusterKubeControllerManagerRestart(t *testing.T) {
	ctx := testContext(t)
	if got := kcm(t, "status"); got != kcmDefault {
		t.Fatalf("kube-controller-manager runs with --controllers=%s, want %s", got, kcmDefault)
	}
	ns := newNamespace(t, ctx)
	tr := trackPods(t, ctx, ns, "builtin", true)
	createSet(t, ctx, ns, newSet("builtin", 2))
	// nobody runs a StatefulSet controller: kube-controller-manager built every controller but that one
	// (its own list), and Ordinal is not started; so the set has no pods
	wantKCMControllers(t, false)
	if l, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) > 0 {
		t.Fatalf("pods without a StatefulSet controller: %v (%v)", podNames(l), err)
	}

	restartKCM(t, kcmBuiltinSTS)
	if got := kcm(t, "status"); got != kcmBuiltinSTS {
		t.Fatalf("status after restart: %s, want %s", got, kcmBuiltinSTS)
	}
	wantKCMControllers(t, true)
	waitRolledOut(t, ctx, ns, "builtin", 2)
	tr.checkInvariants()

	restartKCM(t, kcmDefault)
	if got := kcm(t, "status"); got != kcmDefault {
		t.Fatalf("status after restart: %s, want %s", got, kcmDefault)
	}
	// with the built-in controller off again, a deleted pod is not recreated
	mark := tr.mark()
	if err := cfg.kc.CoreV1().Pods(ns).Delete(ctx, "builtin-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantKCMControllers(t, false)
	tr.waitFor(ctx, "builtin-1 gone", 60*time.Second, func(v podView) bool { return v.pod(1) == nil })
	// the only kube-controller-manager running since before the deletion has no StatefulSet controller
	if c := tr.stepsOf(stepCreated, mark); len(c) > 0 {
		t.Errorf("pods created with the built-in StatefulSet controller off: %v", c)
	}
}

func podNames(l *corev1.PodList) []string {
	var out []string
	if l != nil {
		for _, p := range l.Items {
			out = append(out, p.Name)
		}
	}
	return out
}

// wantKCMControllers checks kube-controller-manager's own list of the controllers it built (a named
// healthz check each) for the StatefulSet controller, and for the garbage collector as a sign the list is whole.
func wantKCMControllers(t *testing.T, statefulSet bool) {
	t.Helper()
	list := strings.Fields(kcm(t, "controllers"))
	if !slices.Contains(list, "garbage-collector-controller") {
		t.Fatalf("kube-controller-manager's controllers lack the garbage collector: %v", list)
	}
	if got := slices.Contains(list, "statefulset-controller"); got != statefulSet {
		t.Fatalf("kube-controller-manager runs its StatefulSet controller: %v, want %v (controllers: %v)", got, statefulSet, list)
	}
}

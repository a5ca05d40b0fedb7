//go:build e2e

package e2e

// Checks of the local cluster's kubelet emulation (no Ordinal controller): what kwok's stages and hack/podreaper
// do with pods as a kubelet would, which upstream Kubernetes' StatefulSet e2e tests rely on: a deleted pod held
// by a finalizer stops (unready, terminal phase), a host port taken on the node fails the pod at admission, and
// an image that cannot be pulled leaves the pod Pending in ErrImagePull/ImagePullBackOff
// (scripts/localk8s/README.md).

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const testFinalizer = "e2e.ordinal.dev/hold"

// holdPod creates pod p with testFinalizer, and removes the finalizer when the test ends (so that the
// namespace can go).
func holdPod(t *testing.T, ctx context.Context, ns string, p *corev1.Pod) {
	t.Helper()
	p.Finalizers = append(p.Finalizers, testFinalizer)
	if _, err := cfg.kc.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { releasePod(t, context.Background(), ns, p.Name) })
}

func releasePod(t *testing.T, ctx context.Context, ns, name string) {
	t.Helper()
	_, err := cfg.kc.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("removing the finalizers of %s/%s: %v", ns, name, err)
	}
}

func podCondition(p *corev1.Pod, ty corev1.PodConditionType) corev1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == ty {
			return c
		}
	}
	return corev1.PodCondition{}
}

// A deleted pod a finalizer holds has its containers stopped, as a kubelet stops them once deletionTimestamp is
// set: not ready, containers terminated, phase Succeeded (stopped within the grace period: exit code 0) or
// Failed (still running at the end of the grace period: killed, 137); it is removed once released.
// Upstream's "partiton1 ... delete pod-0" StatefulSet tests wait for such a pod to be unready.
func TestClusterKubeletStopsDeletedPodHeldByFinalizer(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	pods := cfg.kc.CoreV1().Pods(ns)

	stops := simplePod("stops", nil)
	stops.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	// containers still running at the end of a 1 s grace period: killed
	killed := simplePod("killed", map[string]string{"e2e.ordinal.dev/termination-delay": "1h"})
	for _, p := range []*corev1.Pod{stops, killed} {
		holdPod(t, ctx, ns, p)
	}
	for _, n := range []string{"stops", "killed"} {
		waitPod(t, ctx, ns, n, "Running and Ready", 60*time.Second, podReady)
	}
	// as upstream's deleteStatefulPodAtIndex: grace period 0
	if err := pods.Delete(ctx, "stops", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "killed", metav1.DeleteOptions{}); err != nil { // its own grace period, 1 s
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, reason, termReason string
		phase                    corev1.PodPhase
		exit                     int32
	}{
		{"stops", "PodCompleted", "Completed", corev1.PodSucceeded, 0},
		{"killed", "PodFailed", "Error", corev1.PodFailed, 137},
	} {
		p := waitPod(t, ctx, ns, c.name, "stopped: "+string(c.phase), 60*time.Second, func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		})
		if p.DeletionTimestamp == nil || len(p.Finalizers) == 0 {
			t.Fatalf("%s: not the deleted pod held by its finalizer: %+v", c.name, p.ObjectMeta)
		}
		if p.Status.Phase != c.phase {
			t.Errorf("%s: phase %s, want %s", c.name, p.Status.Phase, c.phase)
		}
		for _, ty := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
			if cd := podCondition(p, ty); cd.Status != corev1.ConditionFalse || cd.Reason != c.reason {
				t.Errorf("%s: %s %s reason %q, want False, %s", c.name, ty, cd.Status, cd.Reason, c.reason)
			}
		}
		if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].Ready || cs[0].State.Terminated == nil ||
			cs[0].State.Terminated.ExitCode != c.exit || cs[0].State.Terminated.Reason != c.termReason {
			t.Errorf("%s: container statuses %+v, want terminated (%s, exit code %d), not ready", c.name, cs, c.termReason, c.exit)
		}
		if podCondition(p, corev1.PodScheduled).Status != corev1.ConditionTrue || p.Status.PodIP == "" {
			t.Errorf("%s: lost the rest of its status: %+v", c.name, p.Status)
		}
	}
	// released: removed
	for _, n := range []string{"stops", "killed"} {
		releasePod(t, ctx, ns, n)
		waitPodGone(t, ctx, ns, n)
	}
}

// watchPodStates records the phases and container waiting reasons each pod of ns goes through (a watch sees
// every write), until the test ends; the function returned gives those of one pod.
func watchPodStates(t *testing.T, ctx context.Context, ns string) func(name string) []string {
	t.Helper()
	var mu sync.Mutex
	seen := map[string][]string{}
	w, err := cfg.kc.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			st := string(p.Status.Phase)
			for _, cs := range p.Status.ContainerStatuses {
				if cs.State.Waiting != nil {
					st += "/" + cs.Name + ":" + cs.State.Waiting.Reason
				}
			}
			mu.Lock()
			if s := seen[p.Name]; len(s) == 0 || s[len(s)-1] != st {
				seen[p.Name] = append(s, st)
			}
			mu.Unlock()
		}
	}()
	return func(name string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen[name]...)
	}
}

// statesUpTo is what the watch recorded of the pod once it has recorded last as its latest state: a state a
// Get has seen reaches the watch later, so reading the record at once would race the watch. Fails the test if
// the watch does not record it within a minute (a hang guard).
func statesUpTo(t *testing.T, states func(string) []string, name, last string) []string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := states(name)
		if len(got) > 0 && got[len(got)-1] == last {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the watch recorded %v, never %s last", name, got, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func hostPortPod(name string, port int32) *corev1.Pod {
	p := simplePod(name, nil)
	p.Spec.NodeName = "kwok-node-0" // bound directly, as upstream's test binds its pods: no scheduler filter
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "conflict", ContainerPort: port, HostPort: port}}
	return p
}

// A pod asking for a host port another running pod on its node holds is failed at admission, as the kubelet
// fails it: phase Failed, reason NodePorts, never started. Upstream's "Should recreate evicted statefulset"
// (Conformance) relies on it.
func TestClusterKubeletRejectsHostPortConflict(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	pods := cfg.kc.CoreV1().Pods(ns)
	states := watchPodStates(t, ctx, ns)
	// ports of their own: tests run in parallel on the one node
	const port, other = 21017, 21018
	create := func(p *corev1.Pod) {
		t.Helper()
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(hostPortPod("first", port))
	first := waitPod(t, ctx, ns, "first", "Running and Ready", 60*time.Second, podReady)
	if first.Annotations["localk8s.ordinal.dev/admitted"] != "true" {
		t.Errorf("first: admitted without the admission annotation: %v", first.Annotations)
	}
	create(hostPortPod("second", port))
	create(hostPortPod("another-port", other))
	second := waitPod(t, ctx, ns, "second", "Failed", 60*time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	const msg = "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
	if second.Status.Reason != "NodePorts" || second.Status.Message != msg {
		t.Errorf("second: reason %q message %q, want NodePorts, %q", second.Status.Reason, second.Status.Message, msg)
	}
	waitPod(t, ctx, ns, "another-port", "Running and Ready (another host port)", 60*time.Second, podReady)
	// the first pod's port freed: a new pod asking for it starts
	if err := pods.Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodGone(t, ctx, ns, "first")
	create(hostPortPod("third", port))
	waitPod(t, ctx, ns, "third", "Running and Ready (the port free again)", 60*time.Second, podReady)
	kwokCaughtUp(t, ctx, ns)
	statesUpTo(t, states, "third", "Running") // the watch is past second's events (one watch, in order)
	got := states("second")
	for _, s := range got {
		if !strings.HasPrefix(s, "Pending") && s != "Failed" {
			t.Errorf("second went through %v: started before it was rejected", got)
			break
		}
	}
	if len(got) == 0 || got[len(got)-1] != "Failed" {
		t.Errorf("second: states %v, want Failed last", got)
	}
	// a rejected pod is removed when deleted
	if err := pods.Delete(ctx, "second", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodGone(t, ctx, ns, "second")
}

// A pod with an image that cannot be pulled (scripts/localk8s/kwok/pod-image-pull.yaml: upstream's
// broken-image, or a registry under .invalid) stays Pending, its container waiting with ErrImagePull, then
// ImagePullBackOff; its other containers run; it is never Ready. Upstream's Recreate-strategy StatefulSet tests
// wait for exactly this (framework/statefulset WaitForFailedWithImagePullErr).
func TestClusterKubeletImagePullBackOff(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	pods := cfg.kc.CoreV1().Pods(ns)
	states := watchPodStates(t, ctx, ns)
	broken := simplePod("broken", nil)
	broken.Spec.Containers[0].Image = "broken-image"
	invalid := simplePod("invalid", nil)
	invalid.Spec.Containers[0].Image = "registry.invalid/app:v2"
	invalid.Spec.Containers = append(invalid.Spec.Containers, corev1.Container{Name: "sidecar", Image: "registry.k8s.io/pause:3.10"})
	for _, p := range []*corev1.Pod{broken, invalid} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"broken", "invalid"} {
		p := waitPod(t, ctx, ns, n, "ImagePullBackOff", 60*time.Second, func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
				p.Status.ContainerStatuses[0].State.Waiting.Reason == "ImagePullBackOff"
		})
		if p.Status.Phase != corev1.PodPending || podCondition(p, corev1.PodReady).Status != corev1.ConditionFalse {
			t.Errorf("%s: phase %s, %s; want Pending, Ready=False", n, p.Status.Phase, condString(p))
		}
		if w := p.Status.ContainerStatuses[0].State.Waiting; !strings.Contains(w.Message, fmt.Sprintf("Back-off pulling image %q", p.Spec.Containers[0].Image)) {
			t.Errorf("%s: waiting message %q", n, w.Message)
		}
		if n == "invalid" {
			if cs := p.Status.ContainerStatuses; len(cs) != 2 || cs[1].Name != "sidecar" || cs[1].State.Running == nil {
				t.Errorf("invalid: the sidecar (pullable image) is not running: %+v", cs)
			}
		}
	}
	// and it stays so: kwok has played whatever it matched once a pod created after these is Ready
	kwokCaughtUp(t, ctx, ns)
	for _, n := range []string{"broken", "invalid"} {
		p, err := pods.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase != corev1.PodPending || podCondition(p, corev1.PodReady).Status != corev1.ConditionFalse {
			t.Errorf("%s: later phase %s, %s; want still Pending, not Ready", n, p.Status.Phase, condString(p))
		}
		got := statesUpTo(t, states, n, "Pending/app:ImagePullBackOff")
		want := []string{"Pending/app:ErrImagePull", "Pending/app:ImagePullBackOff"}
		if i := indexOf(got, want[0]); i < 0 || indexOf(got[i:], want[1]) < 0 {
			t.Errorf("%s went through %v, want %v in order", n, got, want)
		}
		for _, s := range got {
			if strings.HasPrefix(s, "Running") {
				t.Errorf("%s went through %v: Running", n, got)
				break
			}
		}
	}
	for _, n := range []string{"broken", "invalid"} {
		if err := pods.Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPodGone(t, ctx, ns, n)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// Upstream's "should perform canary updates and phased rolling updates of template modifications for partiton1
// and delete pod-0" (k8s v1.37.2 test/e2e/apps/statefulset.go, deletingPodForRollingUpdatePartitionTest), on
// Ordinal: with partition 1, pod-0 is held by a finalizer, deleted, and must go unready while held (the
// kubelet emulation above); once released, the controller recreates it at the current revision.
func TestPartitionDeletedPod0HeldByFinalizer(t *testing.T) {
	t.Parallel()
	ctx, ns, _, _ := begin(t, "held", true)
	createSet(t, ctx, ns, newSet("held", 3, func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}}
	}))
	waitRolledOut(t, ctx, ns, "held", 3)
	// The finalizer is written at once, as the upstream spec does: likely within the second held-0 was created
	// in, the resolution of managedFields times. That write owns no owner reference, so the controller must not
	// read it as another controller creating the pod (it used to, and left the set alone).
	if _, err := cfg.kc.CoreV1().Pods(ns).Patch(ctx, "held-0", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":["`+testFinalizer+`"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { releasePod(t, context.Background(), ns, "held-0") })
	patchSet(t, ctx, ns, "held", `{"spec":{"template":{"metadata":{"annotations":{"`+annVersion+`":"v2"}}}}}`)
	waitSet(t, ctx, ns, "held", "all but pod-0 updated, all ready", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReplicas == 2 && s.Status.Replicas == 3 && s.Status.ReadyReplicas == 3
	})
	old, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, "held-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.kc.CoreV1().Pods(ns).Delete(ctx, "held-0", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitSet(t, ctx, ns, "held", "2 ready while pod-0 is held", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ReadyReplicas == 2
	})
	releasePod(t, ctx, ns, "held-0")
	s := waitSet(t, ctx, ns, "held", "3 ready again", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ReadyReplicas == 3 && s.Status.Replicas == 3
	})
	p, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, "held-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.UID == old.UID {
		t.Errorf("held-0 was not recreated")
	}
	if rev := podRevision(p); rev != s.Status.CurrentRevision || rev == s.Status.UpdateRevision {
		t.Errorf("held-0 recreated at revision %s; current %s, update %s: want the current (partition 1)", rev, s.Status.CurrentRevision, s.Status.UpdateRevision)
	}
}

// Upstream's "Should recreate evicted statefulset" (Conformance; k8s v1.37.2 test/e2e/apps/statefulset.go) on
// Ordinal: a pod holds host port 21019 on the node; the set's pod-0, bound to the same node and asking for the
// same port, is failed at admission (the kubelet emulation above), deleted and recreated by the controller
// (at least once); once the port is free, pod-0 runs.
func TestRecreatePodFailedAtAdmission(t *testing.T) {
	t.Parallel()
	ctx, ns, _, _ := begin(t, "evicted", true)
	pods := cfg.kc.CoreV1().Pods(ns)
	states := watchPodStates(t, ctx, ns)
	const port = 21019 // its own: tests run in parallel on the one node
	if _, err := pods.Create(ctx, hostPortPod("holder", port), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ctx, ns, "holder", "Running", 60*time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	createSet(t, ctx, ns, newSet("evicted", 1, func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.NodeName = "kwok-node-0"
		s.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "conflict", ContainerPort: port, HostPort: port}}
	}))
	first := waitPod(t, ctx, ns, "evicted-0", "Failed at admission", 60*time.Second, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "NodePorts"
	})
	// the controller deletes the failed pod and creates another
	waitPod(t, ctx, ns, "evicted-0", "recreated", 60*time.Second, func(p *corev1.Pod) bool { return p.UID != first.UID })
	if err := pods.Delete(ctx, "holder", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, ctx, ns, "evicted-0", "Running once the port is free", 2*time.Minute, podReady)
	if p.UID == first.UID {
		t.Errorf("evicted-0 Running with the uid it was failed with")
	}
	if s := statesUpTo(t, states, "evicted-0", "Running"); indexOf(s, "Failed") < 0 {
		t.Errorf("evicted-0 went through %v, want Failed then, last, Running", s)
	}
}

// execInPod runs `kubectl exec POD -- /bin/sh -c CMD` through the local cluster's kubectl with exec (hack/podreaper
// kubectl, as scripts/e2e-upstream.sh gives upstream's specs) and returns its output and error.
func execInPod(t *testing.T, ns, pod, cmd string) (string, error) {
	t.Helper()
	kubectl := filepath.Join(cfg.run, "bin", "podreaper")
	out, err := exec.Command(kubectl, "kubectl", "--kubectl=/nonexistent", "--state-dir="+filepath.Join(cfg.run, "kubelet"),
		"--kubeconfig="+cfg.kubeconfig, "--namespace="+ns, "exec", pod, "--", "/bin/sh", "-x", "-c", cmd).Output()
	return string(out), err
}

// Readiness probes run, as a kubelet runs them, against the pod's container: a pod with a readiness probe starts
// not Ready and is Ready only while its probe passes. An exec probe waits for a file that `kubectl exec` writes
// on the pod's volume; an HTTP probe passes until the file it asks for is moved away, and again once it is
// back: how upstream's StatefulSet specs pause pods and break and restore their readiness.
func TestClusterKubeletReadinessProbes(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	pods := cfg.kc.CoreV1().Pods(ns)

	paused := simplePod("paused", nil)
	paused.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	paused.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	paused.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/data/continue"}}}}
	web := simplePod("web", nil)
	web.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/localhost.crt", Port: intstr.FromInt32(80)}}}
	for _, p := range []*corev1.Pod{paused, web} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitPod(t, ctx, ns, "web", "Ready (its HTTP probe passes)", 60*time.Second, podReady)
	waitPod(t, ctx, ns, "paused", "Running", 60*time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	// the paused pod's probe has failed at least once: what hostname says, and no Ready
	if out, err := execInPod(t, ns, "paused", "printf $(hostname)"); err != nil || out != "paused" {
		t.Fatalf("kubectl exec paused -- hostname: %q, %v", out, err)
	}
	if p, err := pods.Get(ctx, "paused", metav1.GetOptions{}); err != nil || podReady(p) {
		t.Fatalf("paused is Ready (or gone: %v) before its probe's file exists", err)
	}
	if _, err := execInPod(t, ns, "paused", "dd if=/dev/zero of=/data/continue bs=1 count=1 conv=fsync"); err != nil {
		t.Fatalf("kubectl exec paused -- dd: %v", err)
	}
	waitPod(t, ctx, ns, "paused", "Ready once /data/continue exists", 60*time.Second, podReady)

	if _, err := execInPod(t, ns, "web", "mv -v /localhost.crt /tmp/ || true"); err != nil {
		t.Fatalf("breaking web's probe: %v", err)
	}
	waitPod(t, ctx, ns, "web", "not Ready with its probed file moved away", 60*time.Second, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && !podReady(p) && podCondition(p, corev1.PodReady).Reason == "ContainersNotReady"
	})
	if _, err := execInPod(t, ns, "web", "mv -v /tmp/localhost.crt / || true"); err != nil {
		t.Fatalf("restoring web's probe: %v", err)
	}
	waitPod(t, ctx, ns, "web", "Ready again", 60*time.Second, podReady)
	// an exec whose command fails answers as kubectl does: the exit code
	if _, err := execInPod(t, ns, "web", "exit 3"); err == nil {
		t.Error("kubectl exec -- exit 3 succeeded")
	} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Errorf("kubectl exec -- exit 3: %v, want exit code 3", err)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/internal/inplaceready"
)

// inPlace: extension in-place-update on the extended module, with this pod-update-policy.
func inPlace(policy string) setOpt {
	return func(s *appsv1.StatefulSet) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations["ordinal.dev/module"] = "extended"
		s.Annotations["ordinal.dev/pod-update-policy"] = policy
	}
}

// podFacts is what an in-place update must keep of a pod: its uid, node and claims' uids.
type podFacts struct {
	uid, node string
	claims    []types.UID
}

func podFactsOf(t *testing.T, ctx context.Context, ns, set string, replicas int) map[string]podFacts {
	t.Helper()
	claims := listClaims(t, ctx, ns)
	out := map[string]podFacts{}
	for i := 0; i < replicas; i++ {
		name := fmt.Sprintf("%s-%d", set, i)
		p, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f := podFacts{uid: string(p.UID), node: p.Spec.NodeName}
		if c, ok := claims["data-"+name]; ok {
			f.claims = append(f.claims, c.UID)
		}
		out[name] = f
	}
	return out
}

// wantInPlace checks that every pod is the one it was (uid, node, claims), runs image (spec and status), and
// restarted its containers exactly once.
func wantInPlace(t *testing.T, ctx context.Context, ns, set string, before map[string]podFacts, image string) {
	t.Helper()
	after := podFactsOf(t, ctx, ns, set, len(before))
	for name, b := range before {
		a := after[name]
		if a.uid != b.uid || a.node != b.node || fmt.Sprint(a.claims) != fmt.Sprint(b.claims) {
			t.Errorf("%s: uid %s node %s claims %v, was %s %s %v: not the same pod", name, a.uid, a.node, a.claims, b.uid, b.node, b.claims)
		}
		p, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cs := p.Status.ContainerStatuses
		if p.Spec.Containers[0].Image != image || len(cs) != 1 || cs[0].Image != image || cs[0].RestartCount != 1 {
			t.Errorf("%s: spec image %s, statuses %+v: want %s, restarted once", name, p.Spec.Containers[0].Image, cs, image)
		}
		if p.Annotations["ordinal.dev/in-place-update"] != podRevision(p) {
			t.Errorf("%s: in-place record %q, revision %s", name, p.Annotations["ordinal.dev/in-place-update"], podRevision(p))
		}
	}
}

const inPlaceImage = "registry.k8s.io/pause:3.9"

// patchContainer changes the set's container "app" with a strategic merge patch (containers merge by name,
// so what the patch does not name stays), as `kubectl set image` and `kubectl patch` do.
func patchContainer(t *testing.T, ctx context.Context, ns, name, container string) {
	t.Helper()
	patch := `{"spec":{"template":{"spec":{"containers":[` + container + `]}}}}`
	out, err := cfg.kc.AppsV1().StatefulSets(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch StatefulSet %s with %s: %v", name, patch, err)
	}
	t.Logf("patched StatefulSet %s: %s (generation %d)", name, patch, out.Generation)
}

// An image rollout of a 10-pod OrderedReady set with InPlaceIfPossible on the real API server: no pod is
// deleted or created, each keeps its uid, node and claim, each restarts once, highest ordinal first and the
// next only once the one before runs the new image and is Ready again (never two down at once), and the
// status ends as upstream's does. The controller, killed just after its first in-place update, resumes
// without restarting that pod a second time.
func TestInPlaceRolloutOrderedReady(t *testing.T) {
	t.Parallel()
	ctx, ns, c, tr := begin(t, "ipo", true)
	createSet(t, ctx, ns, newSet("ipo", 10, inPlace("InPlaceIfPossible"), withClaims("", "")))
	first := waitRolledOut(t, ctx, ns, "ipo", 10)
	before := podFactsOf(t, ctx, ns, "ipo", 10)
	peak := tr.armMaxUnavailable(ctx, 10, 1)
	mark := tr.mark()

	patchContainer(t, ctx, ns, "ipo", `{"name":"app","image":"`+inPlaceImage+`"}`)
	// kill the controller once ipo-9 moved to the new revision (its in-place update), and start another
	tr.waitFor(ctx, "ipo-9 at the new revision", time.Minute, func(v podView) bool {
		return v.pod(9) != nil && v.revision(9) != first.Status.CurrentRevision
	})
	c.kill()
	startController(t, ns, ctrlOpts{identity: "ordinal-2"}).waitReady(ctx)

	s := waitSet(t, ctx, ns, "ipo", "rolled out to the new revision", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(10)(s) && s.Status.UpdateRevision != first.Status.CurrentRevision
	})
	tr.checkInvariants()
	if created := tr.stepsOf(stepCreated, mark); len(created) != 0 {
		t.Errorf("pods created during the rollout: %v", created)
	}
	if deleted := tr.stepsOf(stepTerminating, mark); len(deleted) != 0 {
		t.Errorf("pods deleted during the rollout: %v", deleted)
	}
	if p := peak(); p != 1 {
		t.Errorf("at most %d pods unavailable at once, want 1 (OrderedReady, one restart at a time)", p)
	}
	wantInPlace(t, ctx, ns, "ipo", before, inPlaceImage)
	// highest first: each pod went unready (its restart) after the one above it was Ready again
	unready := tr.stepsOf(stepUnready, mark)
	var order []int
	for _, st := range unready {
		order = append(order, st.ordinal)
	}
	wantOrdinals(t, "restarts", order, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
	if s.Status.CurrentRevision != s.Status.UpdateRevision || s.Status.CurrentReplicas != 10 || s.Status.UpdatedReplicas != 10 {
		t.Errorf("status %s", statusString(s))
	}
	if l, err := eventsOf(ctx, ns, "ipo", "InPlaceUpdate"); err != nil || len(l.Items) == 0 {
		t.Errorf("InPlaceUpdate events: %v %v", l, err)
	}
}

// A Parallel set with maxUnavailable 3 rolls an image in place, three pods at a time at most, none
// recreated.
func TestInPlaceRolloutParallelMaxUnavailable(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "ipp", false)
	createSet(t, ctx, ns, newSet("ipp", 10, inPlace("InPlaceIfPossible"), parallel, maxUnavailable(3)))
	first := waitRolledOut(t, ctx, ns, "ipp", 10)
	before := podFactsOf(t, ctx, ns, "ipp", 10)
	peak := tr.armMaxUnavailable(ctx, 10, 3)
	mark := tr.mark()
	patchContainer(t, ctx, ns, "ipp", `{"name":"app","image":"`+inPlaceImage+`"}`)
	waitSet(t, ctx, ns, "ipp", "rolled out to the new revision", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(10)(s) && s.Status.UpdateRevision != first.Status.CurrentRevision
	})
	tr.checkInvariants()
	if created := tr.stepsOf(stepCreated, mark); len(created) != 0 {
		t.Errorf("pods created during the rollout: %v", created)
	}
	if p := peak(); p > 3 || p < 1 {
		t.Errorf("at most %d pods unavailable at once, want 1..3", p)
	}
	wantInPlace(t, ctx, ns, "ipp", before, inPlaceImage)
}

// A change beyond images (env): InPlaceIfPossible recreates the pods, saying why; InPlaceOnly recreates
// none and says, in a condition and a Warning, which pod and field hold it, and `kubectl ordinal status
// --wait` ends there with exit 6 rather than waiting for ever.
func TestInPlaceNotPossible(t *testing.T) {
	requireHookEnv(t) // the real kubectl
	t.Parallel()
	ctx, ns, _, tr := begin(t, "ipn", true)
	createSet(t, ctx, ns, newSet("ipn", 2, inPlace("InPlaceIfPossible")))
	waitRolledOut(t, ctx, ns, "ipn", 2)
	mark := tr.mark()
	patchContainer(t, ctx, ns, "ipn", `{"name":"app","image":"`+inPlaceImage+`","env":[{"name":"MODE","value":"fast"}]}`)
	waitSet(t, ctx, ns, "ipn", "rolled out", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(2)(s) && s.Generation == 2
	})
	if created := tr.stepsOf(stepCreated, mark); len(created) != 2 {
		t.Errorf("pods created: %v, want both recreated", created)
	}
	if l, err := eventsOf(ctx, ns, "ipn", "RecreatingPod"); err != nil || len(l.Items) == 0 || !strings.Contains(l.Items[0].Message, "spec.containers[0].env") {
		t.Errorf("RecreatingPod events: %v %v", l, err)
	}

	// InPlaceOnly: the next env change is held
	patchSet(t, ctx, ns, "ipn", `{"metadata":{"annotations":{"ordinal.dev/pod-update-policy":"InPlaceOnly"}}}`)
	patchContainer(t, ctx, ns, "ipn", `{"name":"app","env":[{"name":"MODE","value":"slow"}]}`)
	mark = tr.mark()
	s := waitSet(t, ctx, ns, "ipn", "InPlaceUpdateBlocked", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		c := setCondition(s, "InPlaceUpdateBlocked")
		return s.Status.ObservedGeneration == s.Generation && c != nil && c.Status == "True"
	})
	if c := setCondition(s, "InPlaceUpdateBlocked"); !strings.Contains(c.Message, "ipn-1") || !strings.Contains(c.Message, "spec.containers[0].env") {
		t.Errorf("condition %+v", c)
	}
	// the controller records the event after the sync whose status carries the condition (client-go's recorder
	// sends it asynchronously): wait for it, then want exactly one
	var l *corev1.EventList
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		if l, err = eventsOf(ctx, ns, "ipn", "InPlaceBlocked"); err != nil || len(l.Items) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || len(l.Items) != 1 || l.Items[0].Type != corev1.EventTypeWarning {
		t.Errorf("InPlaceBlocked events: %v %v", l, err)
	}
	if s.Status.UpdatedReplicas != 0 || s.Status.ReadyReplicas != 2 {
		t.Errorf("status %s: want nothing updated, both Ready", statusString(s))
	}
	if out, errOut, code := statusWait(t, ctx, ns, "sts/ipn", "-o", "json"); code != 6 ||
		!strings.Contains(errOut, "the rollout is stuck: InPlaceUpdateBlocked=True") || !strings.Contains(out, `"state": "waiting"`) {
		t.Errorf("kubectl ordinal status --wait -o json of a rollout InPlaceOnly holds: exit %d, want 6 naming the condition, and the last view\n%s%s", code, out, errOut)
	}
	if steps := tr.stepsOf(stepTerminating, mark); len(steps) != 0 {
		t.Errorf("InPlaceOnly deleted pods: %v", steps)
	}
}

// cpuRequest gives the set's container that CPU request (and 16Mi of memory).
func cpuRequest(q string) setOpt {
	return func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(q), corev1.ResourceMemory: resource.MustParse("16Mi")}}
	}
}

// A resources-only change goes through pods/resize on the real API server: the pods keep their uids and
// get the new requests.
func TestInPlaceResize(t *testing.T) {
	t.Parallel()
	ctx, ns, c, tr := begin(t, "ipr", true)
	createSet(t, ctx, ns, newSet("ipr", 3, inPlace("InPlaceOnly"), cpuRequest("10m")))
	first := waitRolledOut(t, ctx, ns, "ipr", 3)
	before := podFactsOf(t, ctx, ns, "ipr", 3)
	mark := tr.mark()
	patchContainer(t, ctx, ns, "ipr", `{"name":"app","resources":{"requests":{"cpu":"20m"}}}`)
	waitSet(t, ctx, ns, "ipr", "rolled out to the new revision", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(3)(s) && s.Status.UpdateRevision != first.Status.CurrentRevision
	})
	if created := tr.stepsOf(stepCreated, mark); len(created) != 0 {
		t.Errorf("pods created: %v", created)
	}
	after := podFactsOf(t, ctx, ns, "ipr", 3)
	for name, b := range before {
		p, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after[name].uid != b.uid || p.Spec.Containers[0].Resources.Requests.Cpu().String() != "20m" {
			t.Errorf("%s: uid %s (was %s), cpu %s: want the same pod resized to 20m", name, after[name].uid, b.uid, p.Spec.Containers[0].Resources.Requests.Cpu())
		}
		if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].Resources == nil || cs[0].Resources.Requests.Cpu().String() != "20m" {
			t.Errorf("%s: container statuses %+v, want the kubelet (kwok) to report 20m", name, cs)
		}
	}
	// kwok writes each pod's status right after its resize, as a kubelet does: the update that follows is sent
	// again at the pod's version, not refused (no FailedUpdate warning, no failed sync)
	if evs := moduleEvents(t, ctx, ns, "FailedUpdate"); len(evs) > 0 {
		t.Errorf("FailedUpdate events during a resize rollout: %s", evs[0].Message)
	}
	if failed := c.logLines(`"msg":"Sync failed"`); len(failed) > 0 {
		t.Errorf("syncs failed during a resize rollout: %s", failed[0])
	}
}

// A pod restarted in place counts available only once its restarted container passes its readiness probe
// again, as under a kubelet (issue: availability stays honest). An OrderedReady set whose exec probe looks for
// a file in the container's own root, which a restart does not keep: the rollout restarts ipr-1 and waits
// there until the probe passes in the new container; ipr-0 restarts only after that. `kubectl ordinal status`
// says what ipr-1 waits for while it is held: its probe, then (an image no node can pull) its image.
func TestInPlaceWaitsForTheRestartedContainersProbe(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "ipr", true)
	probed := func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1,
			ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "touch /probed; test -f /ready"}}}}
	}
	createSet(t, ctx, ns, newSet("ipr", 2, inPlace("InPlaceIfPossible"), probed))
	runningPod := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }
	for _, name := range []string{"ipr-0", "ipr-1"} { // OrderedReady: ipr-1 comes once ipr-0 is Ready
		waitPod(t, ctx, ns, name, "Running", 2*time.Minute, runningPod)
		mustExec(t, ns, name, "touch /ready")
	}
	first := waitRolledOut(t, ctx, ns, "ipr", 2)
	before := podFactsOf(t, ctx, ns, "ipr", 2)
	patchContainer(t, ctx, ns, "ipr", `{"name":"app","image":"`+inPlaceImage+`"}`)
	waitPod(t, ctx, ns, "ipr-1", "restarted in place", 2*time.Minute, func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].Image == inPlaceImage && cs[0].State.Running != nil
	})
	// the probe has run in the restarted container (its /probed is there), and failed: no /ready there
	waitFor(t, ctx, "the probe run in ipr-1's restarted container", 2*time.Minute, func() bool {
		_, err := execInPod(t, ns, "ipr-1", "test -f /probed")
		return err == nil
	})
	if p, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, "ipr-1", metav1.GetOptions{}); err != nil || podReady(p) {
		t.Fatalf("ipr-1 Ready (or %v) while its restarted container fails its probe", err)
	}
	// kubectl ordinal status shows ipr-1 mid-update: restarted, not Ready yet (held there by its probe)
	text := waitStatusShowsInPlace(t, ctx, ns, "ipr", "ipr-1", func(u *rollout.InPlaceUpdate) bool {
		return u.Waiting == rollout.InPlaceReady && u.RestartedAt != ""
	})
	if !strings.Contains(text, "updating in place (restarted ") {
		t.Errorf("kubectl ordinal status does not say ipr-1 restarted in place and is not Ready yet:\n%s", text)
	}
	mark := tr.mark()
	mustExec(t, ns, "ipr-1", "touch /ready")
	waitPod(t, ctx, ns, "ipr-0", "restarted in place", 2*time.Minute, func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil
	})
	mustExec(t, ns, "ipr-0", "touch /ready")
	waitSet(t, ctx, ns, "ipr", "rolled out to the new revision", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(2)(s) && s.Status.UpdateRevision != first.Status.CurrentRevision
	})
	wantInPlace(t, ctx, ns, "ipr", before, inPlaceImage)
	// ipr-0 went down (its restart) only after ipr-1's probe could pass
	ofIpr0 := func(steps []step) int {
		n := 0
		for _, st := range steps {
			if st.ordinal == 0 {
				n++
			}
		}
		return n
	}
	if all, after := ofIpr0(tr.stepsOf(stepUnready, 0)), ofIpr0(tr.stepsOf(stepUnready, mark)); all != 1 || after != 1 {
		t.Errorf("ipr-0 went unready %d times, %d of them after ipr-1's probe could pass; want once, after: %+v", all, after, tr.stepsOf(stepUnready, 0))
	}
	// An image the node cannot pull holds ipr-1 mid-update, its container on the old image: kubectl ordinal
	// status says which image it waits for.
	patchContainer(t, ctx, ns, "ipr", `{"name":"app","image":"`+unpullableImage+`"}`)
	text = waitStatusShowsInPlace(t, ctx, ns, "ipr", "ipr-1", func(u *rollout.InPlaceUpdate) bool {
		return u.Waiting == inplaceready.WaitImage && u.Has == inPlaceImage && u.Want == unpullableImage
	})
	if want := "updating in place (container app: image " + inPlaceImage + " → " + unpullableImage + ")"; !strings.Contains(text, want) {
		t.Errorf("kubectl ordinal status does not say %q:\n%s", want, text)
	}
}

// unpullableImage is an image the local cluster's kubelet emulation never pulls (a registry under .invalid).
const unpullableImage = "registry.invalid/app:v3"

// waitStatusShowsInPlace waits until `kubectl ordinal status SET -o json` shows pod mid in-place update as
// want accepts, and returns what the text form says then. The state waited for must last (held by a probe or
// an image that never comes): a state that passes on its own could be missed between two looks.
func waitStatusShowsInPlace(t *testing.T, ctx context.Context, ns, set, pod string, want func(*rollout.InPlaceUpdate) bool) string {
	t.Helper()
	var last string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := pluginOutput(ctx, "status", set, "-n", ns, "-o", "json")
		var st rollout.Status
		if err == nil && json.Unmarshal([]byte(out), &st) == nil {
			for _, p := range st.Pods {
				if p.Name == pod && p.InPlace != nil {
					if last = fmt.Sprintf("%+v", *p.InPlace); want(p.InPlace) {
						text, err := pluginOutput(ctx, "status", set, "-n", ns)
						if err != nil {
							t.Fatalf("kubectl ordinal status %s: %v", set, err)
						}
						return text
					}
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("kubectl ordinal status never showed %s in the state wanted (last: %q, err %v)\n%s", pod, last, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mustExec runs `sh -c cmd` in pod of ns (kubectl exec through the local cluster's kubelet emulation).
func mustExec(t *testing.T, ns, pod, cmd string) {
	t.Helper()
	if out, err := execInPod(t, ns, pod, cmd); err != nil {
		t.Fatalf("kubectl exec %s -- %s: %v (%s)", pod, cmd, err, out)
	}
}

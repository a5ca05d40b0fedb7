package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// A container's probes move it to ready after successThreshold successes in a row and back after
// failureThreshold failures in a row, as a kubelet counts them.
func TestProbeThresholds(t *testing.T) {
	pr := &corev1.Probe{SuccessThreshold: 2, FailureThreshold: 3}
	var r probeResult
	for i, c := range []struct {
		ok, ready bool
	}{{true, false}, {true, true}, {false, true}, {false, true}, {true, true}, {false, true}, {false, true}, {false, false}, {true, false}, {true, true}} {
		r.record(c.ok, pr)
		if r.ready != c.ready {
			t.Fatalf("after result %d (%t): ready %t, want %t", i, c.ok, r.ready, c.ready)
		}
	}
	// upstream's probes: one of each, and unset thresholds are the API server's defaults (1 and 3)
	r = probeResult{}
	r.record(true, &corev1.Probe{SuccessThreshold: 1, FailureThreshold: 1})
	r.record(false, &corev1.Probe{SuccessThreshold: 1, FailureThreshold: 1})
	if r.ready {
		t.Error("one failure with failureThreshold 1 leaves the container ready")
	}
	r = probeResult{}
	r.record(true, &corev1.Probe{})
	r.record(false, &corev1.Probe{})
	r.record(false, &corev1.Probe{})
	if !r.ready {
		t.Error("two failures with the default failureThreshold (3) made the container unready")
	}
}

// The readiness written is the kubelet's: containers ready by their probes (or running, without one), the
// pod Ready only with every container ready and its readiness gates True; nothing to write when nothing moves.
func TestReadyStatus(t *testing.T) {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	earlier := metav1.Unix(1000, 0)
	p := &corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", ReadinessProbe: probe}, {Name: "sidecar"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "web", State: running}, {Name: "sidecar", State: running}},
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: earlier},
				{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, LastTransitionTime: earlier}}},
	}
	now := metav1.Unix(2000, 0)
	s, changed := readyStatus(p, func(string) bool { return false }, now)
	if !changed { // the sidecar becomes ready; the pod stays not Ready
		t.Error("the sidecar's readiness is not written")
	}
	if !s.ContainerStatuses[1].Ready || s.ContainerStatuses[0].Ready || podCondition(&s, corev1.PodReady) != corev1.ConditionFalse {
		t.Errorf("probe failing: %+v", s)
	}
	if c := s.Conditions[0]; c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [web]" || !c.LastTransitionTime.Equal(&earlier) {
		t.Errorf("Ready condition %+v", c)
	}
	p.Status = s
	if _, changed := readyStatus(p, func(string) bool { return false }, now); changed {
		t.Error("nothing moved, yet a write")
	}
	s, changed = readyStatus(p, func(string) bool { return true }, now)
	if !changed || podCondition(&s, corev1.PodReady) != corev1.ConditionTrue || podCondition(&s, corev1.ContainersReady) != corev1.ConditionTrue ||
		!s.ContainerStatuses[0].Ready || !s.Conditions[0].LastTransitionTime.Equal(&now) {
		t.Errorf("probe passing: changed %t, %+v", changed, s)
	}
	// a readiness gate not True holds the pod, not its containers
	p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "InPlaceUpdateReady"}}
	s, _ = readyStatus(p, func(string) bool { return true }, now)
	if podCondition(&s, corev1.PodReady) != corev1.ConditionFalse || podCondition(&s, corev1.ContainersReady) != corev1.ConditionTrue {
		t.Errorf("gate missing: %+v", s.Conditions)
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "InPlaceUpdateReady", Status: corev1.ConditionTrue})
	if s, _ = readyStatus(p, func(string) bool { return true }, now); podCondition(&s, corev1.PodReady) != corev1.ConditionTrue {
		t.Errorf("gate True: %+v", s.Conditions)
	}
	// a container not running is not ready, probe or not
	p.Status.ContainerStatuses[1].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	if s, _ = readyStatus(p, func(string) bool { return true }, now); s.ContainerStatuses[1].Ready || podCondition(&s, corev1.PodReady) != corev1.ConditionFalse {
		t.Errorf("a waiting container: %+v", s)
	}
}

// What each kind of probe finds in the container: an exec probe its command's exit code (a command this machine
// lacks passes: the emulation cannot judge an image's own program), an HTTP probe whether the container has
// the file.
func TestRunProbe(t *testing.T) {
	ctx := context.Background()
	k := &kubelet{state: t.TempDir()}
	p := statefulPod("ss-0", "pod-uid-1", 0)
	fs := webserver(t, k.state, p)
	for _, c := range []struct {
		name string
		pr   *corev1.Probe
		want bool
	}{
		{"exec passing", execProbe("true"), true},
		{"exec failing", execProbe("test", "-f", "/data/statefulset-continue"), false},
		{"exec of an image's own program, not this machine's", execProbe("an-image-only-program", "--ready"), true},
		{"http of the served file", httpProbe("/localhost.crt"), true},
		{"http of /", httpProbe("/"), true},
		{"http of another file", httpProbe("/index.html"), false},
		{"tcp", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}}, true},
	} {
		if got := k.runProbe(ctx, p, fs, c.pr); got != c.want {
			t.Errorf("%s: %t, want %t", c.name, got, c.want)
		}
	}
	if code, err := fs.run(ctx, []string{"/bin/sh", "-c", "dd if=/dev/zero of=/data/statefulset-continue bs=1 count=1"}, nil, io.Discard, io.Discard, 0); err != nil || code != 0 {
		t.Fatalf("dd: %d, %v", code, err)
	}
	if !k.runProbe(ctx, p, fs, execProbe("test", "-f", "/data/statefulset-continue")) {
		t.Error("the exec probe fails once its file exists")
	}
}

// An HTTP probe looks within the container's root: a symlink the container left at the probed path says
// nothing of this machine's files (whether a root-only file exists, through the pod's readiness).
func TestHTTPProbeStaysInTheRoot(t *testing.T) {
	ctx := context.Background()
	k := &kubelet{state: t.TempDir()}
	p := statefulPod("ss-0", "pod-uid-1", 0)
	fs := webserver(t, k.state, p)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code := sh(t, fs, "ln -sf "+outside+"/secret /localhost.crt && ln -s localhost.crt /within"); code != 0 {
		t.Fatalf("ln: exit %d", code)
	}
	if k.runProbe(ctx, p, fs, httpProbe("/localhost.crt")) {
		t.Error("an HTTP probe found a file of this machine through the container's symlink")
	}
	if _, code := sh(t, fs, "rm /localhost.crt && echo served > /localhost.crt"); code != 0 {
		t.Fatalf("restoring: exit %d", code)
	}
	if !k.runProbe(ctx, p, fs, httpProbe("/within")) {
		t.Error("an HTTP probe does not follow a symlink within the container")
	}
}

// An exec probe ends, as a kubelet's does: a command running past its probe's timeout (at least
// minProbeTimeout) fails it (its processes killed), and what it writes is not kept beyond what a log line shows.
func TestExecProbeEnds(t *testing.T) {
	ctx := context.Background()
	k := &kubelet{state: t.TempDir()}
	p := statefulPod("ss-0", "pod-uid-1", 0)
	fs := webserver(t, k.state, p)
	probe := func(timeout int32, argv ...string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: argv}}, TimeoutSeconds: timeout}
	}
	if k.runProbe(ctx, p, fs, probe(1, "sleep", "1000")) {
		t.Error("a probe command running past its timeout passed")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	// an hour to write it: the output is the point, and on a loaded machine 128 MiB through a pipe can take
	// a good part of minProbeTimeout
	if !k.runProbe(ctx, p, fs, probe(3600, "/bin/sh", "-c", "head -c 67108864 /dev/zero >&2; head -c 67108864 /dev/zero")) {
		t.Error("a probe with much output failed")
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
		t.Errorf("a probe's 128 MiB of output took %d MiB of memory", grown>>20)
	}
}

// Each container's probe runs at its own periodSeconds (10 when unset), first initialDelaySeconds after the
// container started: a probe with a period past 10 s is not run more often, nor one container's at another's.
func TestProbeSchedule(t *testing.T) {
	started := time.Unix(1000, 0)
	at := func(s int) time.Time { return started.Add(time.Duration(s) * time.Second) }
	var slow, fast, dflt probeResult
	slowPr := &corev1.Probe{PeriodSeconds: 60, InitialDelaySeconds: 5}
	fastPr := &corev1.Probe{PeriodSeconds: 1}
	for _, c := range []struct {
		r    *probeResult
		pr   *corev1.Probe
		now  int
		want time.Duration
	}{
		{&slow, slowPr, 0, 5 * time.Second}, {&slow, slowPr, 5, 0},
		{&fast, fastPr, 0, 0},
		{&dflt, &corev1.Probe{}, 0, 0},
	} {
		if got := c.r.wait(c.pr, started, at(c.now)); got != c.want {
			t.Errorf("before any run, %+v at %d s: wait %s, want %s", c.pr, c.now, got, c.want)
		}
	}
	slow.last, fast.last, dflt.last = at(5), at(5), at(5)
	if got := slow.wait(slowPr, started, at(15)); got != 50*time.Second {
		t.Errorf("periodSeconds 60, run at 5 s, at 15 s: wait %s, want 50s", got)
	}
	if got := fast.wait(fastPr, started, at(6)); got != 0 {
		t.Errorf("periodSeconds 1, run at 5 s, at 6 s: wait %s, want 0", got)
	}
	if got := dflt.wait(&corev1.Probe{}, started, at(6)); got != 9*time.Second {
		t.Errorf("periodSeconds unset, run at 5 s, at 6 s: wait %s, want 9s", got)
	}
}

// A pod with a readiness probe has its probes run here, unless annotated never-ready: kwok keeps that one not
// Ready for good, and a passing probe must not make it Ready.
func TestProbedHere(t *testing.T) {
	p := statefulPod("ss-0", "pod-uid-1", 0)
	if !probedHere(p) {
		t.Error("a pod with a readiness probe is not probed")
	}
	p.Annotations = map[string]string{"e2e.ordinal.dev/never-ready": "true"}
	if probedHere(p) {
		t.Error("a never-ready pod is probed")
	}
	p.Annotations = nil
	p.Spec.Containers[0].ReadinessProbe = nil
	if probedHere(p) {
		t.Error("a pod without a readiness probe is probed")
	}
}

// A deleted pod's probes end with its containers, a probe's command then running too, whatever its
// timeoutSeconds.
func TestDeletedPodEndsItsProbes(t *testing.T) {
	ctx := context.Background()
	p := statefulPod("ss-0", "pod-uid-1", 0)
	p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{TimeoutSeconds: 100000,
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "100000"}}}}
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := pods.Add(p); err != nil {
		t.Fatal(err)
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "datadir-ss-0", Namespace: "ns", UID: "claim-uid"}}
	k := &kubelet{kc: fake.NewClientset(p, claim), pods: pods, state: t.TempDir()}
	root := filepath.Join(k.state, "pods", "pod-uid-1", "containers", "webserver-0")
	k.probe(ctx, p)
	for len(rootedIn(root)) == 0 { // until the probe's command runs
		time.Sleep(10 * time.Millisecond)
	}
	deleted := p.DeepCopy()
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	k.probe(ctx, deleted)
	for _, busy := k.probing.Load(p.UID); busy; _, busy = k.probing.Load(p.UID) { // until the loop ends
		time.Sleep(10 * time.Millisecond)
	}
	for _, pid := range rootedIn(root) {
		t.Errorf("process %d of the deleted pod's probe still runs", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Each container's probe runs on its own, as a kubelet's probe workers do: one container's probe command
// running long (within its timeoutSeconds) holds back no other container's probes or readiness.
func TestProbesRunPerContainer(t *testing.T) {
	ctx := context.Background()
	p := statefulPod("ss-0", "pod-uid-1", 0)
	exec := func(timeout int32, argv ...string) *corev1.Probe {
		return &corev1.Probe{PeriodSeconds: 1, TimeoutSeconds: timeout, ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: argv}}}
	}
	p.Spec.Containers[0].ReadinessProbe = exec(100000, "sleep", "100000")
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", ReadinessProbe: exec(1, "true")})
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "sidecar",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := pods.Add(p); err != nil {
		t.Fatal(err)
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "datadir-ss-0", Namespace: "ns", UID: "claim-uid"}}
	k := &kubelet{kc: fake.NewClientset(p, claim), pods: pods, state: t.TempDir()}
	k.probe(ctx, p)
	defer func() { // the pod's end ends the long probe
		k.stopProbes(p.UID)
		for _, busy := k.probing.Load(p.UID); busy; _, busy = k.probing.Load(p.UID) {
			time.Sleep(10 * time.Millisecond)
		}
	}()
	for { // until the sidecar is written ready
		q, err := k.kc.CoreV1().Pods("ns").Get(ctx, "ss-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cs := containerStatus(q, "sidecar"); cs != nil && cs.Ready {
			if containerStatus(q, "webserver").Ready {
				t.Error("the container whose probe has not ended is ready")
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The Ready and ContainersReady conditions say why in the kubelet's words (its status tests' messages):
// containers without a status, unready ones, then each readiness gate not True.
func TestReadyStatusMessages(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	p := &corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "gate1"}, {ConditionType: "gate2"}, {ConditionType: "gate3"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "b"}, {Name: "a", State: running}}},
	}
	message := func(s corev1.PodStatus, ty corev1.PodConditionType) string {
		for _, c := range s.Conditions {
			if c.Type == ty {
				return c.Reason + ": " + c.Message
			}
		}
		return ""
	}
	s, _ := readyStatus(p, func(string) bool { return true }, metav1.Unix(1, 0))
	want := "ContainersNotReady: containers with unknown status: [c], containers with unready status: [b]"
	if got := message(s, corev1.ContainersReady); got != want {
		t.Errorf("ContainersReady %q, want %q", got, want)
	}
	if got := message(s, corev1.PodReady); got != want {
		t.Errorf("Ready %q, want %q", got, want)
	}
	p.Spec.Containers = p.Spec.Containers[:1]
	p.Status.ContainerStatuses = p.Status.ContainerStatuses[1:]
	p.Status.Conditions = []corev1.PodCondition{{Type: "gate1", Status: corev1.ConditionFalse}, {Type: "gate3", Status: corev1.ConditionTrue}}
	s, _ = readyStatus(p, func(string) bool { return true }, metav1.Unix(1, 0))
	want = `ReadinessGatesNotReady: the status of pod readiness gate "gate1" is not "True", but False, ` +
		`corresponding condition of pod readiness gate "gate2" does not exist.`
	if got := message(s, corev1.PodReady); got != want {
		t.Errorf("Ready %q, want %q", got, want)
	}
}

func execProbe(argv ...string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: argv}}}
}

func httpProbe(path string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path}}}
}

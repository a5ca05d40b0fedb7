//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Annotations understood by the project's kwok configuration and used by the tests' templates.
const (
	annNeverReady = "e2e.ordinal.dev/never-ready" // "true": kwok runs the pod but never makes it Ready
	annVersion    = "e2e.ordinal.dev/version"     // changed to make a new revision
	// How long kwok and hack/podreaper take with a pod (Go durations; scripts/localk8s/kwok/pod-paced.yaml): with
	// annStartDelay set, the pod is Running that long after its creation and Ready annReadyDelay after that;
	// deleted, it is gone annTerminationDelay later (at most its grace period).
	annStartDelay       = "e2e.ordinal.dev/start-delay"
	annReadyDelay       = "e2e.ordinal.dev/ready-delay"
	annTerminationDelay = "e2e.ordinal.dev/termination-delay"
	testTimeout         = 4 * time.Minute
)

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// ---------------------------------------------------------------------------------------------- namespaces

var (
	nsSanitize  = regexp.MustCompile(`[^a-z0-9]+`)
	dirSanitize = regexp.MustCompile(`[^A-Za-z0-9_.=-]+`)
)

// newNamespace creates a namespace for the test, waits for its default ServiceAccount (pods are rejected
// without it) and deletes it when the test ends (after the test's controllers have stopped).
func newNamespace(t *testing.T, ctx context.Context) string {
	t.Helper()
	base := strings.Trim(nsSanitize.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "-"), "-")
	if len(base) > 50 {
		base = strings.Trim(base[:50], "-")
	}
	return newNamespaceNamed(t, ctx, fmt.Sprintf("e2e-%s-%04d", base, rand.IntN(10000)))
}

// newNamespaceNamed is newNamespace with the name given.
func newNamespaceNamed(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	_, err := cfg.kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: map[string]string{"e2e.ordinal.dev/test": "true"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- events in %s:\n%s", name, eventLog(name))
		}
		if cfg.keep {
			t.Logf("keeping namespace %s (ORDINAL_E2E_KEEP=1)", name)
			return
		}
		_ = cfg.kc.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	lw := cache.NewListWatchFromClient(cfg.kc.CoreV1().RESTClient(), "serviceaccounts", name, fields.OneTermEqualSelector("metadata.name", "default"))
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := watchtools.UntilWithSync(wctx, lw, &corev1.ServiceAccount{}, nil, func(ev watch.Event) (bool, error) {
		return ev.Type == watch.Added || ev.Type == watch.Modified, nil
	}); err != nil {
		t.Fatalf("namespace %s: default ServiceAccount did not appear: %v", name, err)
	}
	t.Logf("namespace %s", name)
	return name
}

// ---------------------------------------------------------------------------------------------- controller

type ctrlOpts struct {
	identity    string // --identity (and the log file name); default "ordinal"
	leaderElect bool
	leaseID     string // --leader-election-id (namespace: the test's)
	workers     int    // default 2
	selector    string
	// crdOnly: Ordinal's own kind alone (no --apps-v1), as where kube-controller-manager's StatefulSet
	// controller runs. By default the controller manages both kinds: most tests use apps/v1 sets on a
	// cluster whose kube-controller-manager has its StatefulSet controller off.
	crdOnly bool
	// shards: run sharded (--shards) over every namespace, the Leases in the test's namespace named after
	// leaseID, instead of watching the test's namespace alone
	shards int
	// everyNamespace: unsharded, watching every namespace (not the test's alone), without leader election
	everyNamespace bool
	extraArgs      []string
}

// controllerProc is one `ordinal controller` subprocess.
type controllerProc struct {
	t        *testing.T
	name     string
	cmd      *exec.Cmd
	logPath  string
	health   string // host:port
	metrics  string // host:port
	exited   chan struct{}
	waitErr  error
	signaled bool
}

func requireController(t *testing.T) {
	t.Helper()
	if cfg.controllerErr != nil {
		t.Fatalf("cannot run the controller: %v", cfg.controllerErr)
	}
}

// anyPort is the listen address given to the processes the tests start: the kernel picks the port and
// the process logs it (servedAddr). Picking a free port first and passing it on raced with every other
// process listening meanwhile: a chaos run's controller lost its port, and /readyz was answered by another.
const anyPort = "127.0.0.1:0"

// servedAddr waits for the log line matching re (its first group is the address) that a process started
// with anyPort writes once it listens; it fails the test if the process exits first.
func servedAddr(t *testing.T, logPath string, exited <-chan struct{}, re *regexp.Regexp, what string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(logPath)
		if m := re.FindSubmatch(b); m != nil {
			return string(m[1])
		}
		select {
		case <-exited:
			t.Fatalf("%s exited before it listened; log:\n%s", what, lastLines(string(b), 30))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no address in its log after 2m; log:\n%s", what, lastLines(string(b), 30))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// the controller serves metrics and probes on one server when both addresses are the same
var controllerServingRE = regexp.MustCompile(`"msg":"Serving","addr":"([^"]+)"`)

// startController starts `ordinal controller` for namespace ns; it is stopped with SIGTERM (and its exit
// checked) when the test ends, unless the test stopped or killed it first.
func startController(t *testing.T, ns string, o ctrlOpts) *controllerProc {
	t.Helper()
	requireController(t)
	if o.identity == "" {
		o.identity = "ordinal"
	}
	if o.workers == 0 {
		o.workers = 2
	}
	dir := filepath.Join(cfg.artifacts, dirSanitize.ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &controllerProc{t: t, name: o.identity, exited: make(chan struct{})}
	for i := 1; ; i++ {
		c.logPath = filepath.Join(dir, fmt.Sprintf("controller-%s-%d.log", o.identity, i))
		if _, err := os.Stat(c.logPath); err != nil {
			break
		}
	}
	args := []string{"controller", "--kubeconfig", cfg.kubeconfig,
		"--workers", strconv.Itoa(o.workers), "--metrics-bind-address", anyPort, "--health-probe-bind-address", anyPort,
		"-v", "2"} // skipped syncs in the log too, for a failure's artifacts
	switch {
	case o.shards > 0:
		args = append(args, "--shards", strconv.Itoa(o.shards), "--leader-elect=true", "--leader-election-namespace", ns,
			"--leader-election-id", o.leaseID, "--identity", o.identity)
	case o.leaderElect:
		args = append(args, "-n", ns, "--leader-elect=true", "--leader-election-namespace", ns,
			"--leader-election-id", o.leaseID, "--identity", o.identity)
	case o.everyNamespace:
		args = append(args, "--leader-elect=false")
	default:
		args = append(args, "-n", ns, "--leader-elect=false")
	}
	if o.selector != "" {
		args = append(args, "--selector", o.selector)
	}
	if !o.crdOnly {
		args = append(args, "--apps-v1")
	}
	args = append(args, o.extraArgs...)
	logf, err := os.Create(c.logPath)
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(cfg.bin, args...)
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	// the controller must not outlive the test binary (e.g. after a test timeout)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start controller: %v", err)
	}
	t.Logf("started controller %s (pid %d): %s %s; log %s", o.identity, c.cmd.Process.Pid, cfg.bin, strings.Join(args, " "), c.logPath)
	go func() {
		c.waitErr = c.cmd.Wait()
		logf.Close()
		close(c.exited)
	}()
	t.Cleanup(func() {
		if !c.hasExited() {
			c.stop()
		}
		if t.Failed() {
			t.Logf("--- last lines of %s:\n%s", c.logPath, c.logTail(40))
		}
	})
	c.health = servedAddr(t, c.logPath, c.exited, controllerServingRE, "controller "+o.identity)
	c.metrics = c.health
	return c
}

func (c *controllerProc) hasExited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// waitHTTP waits until GET http://addr/path answers 200, failing the test if the controller exits first.
func (c *controllerProc) waitHTTP(ctx context.Context, addr, path string, timeout time.Duration) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	t0 := time.Now()
	last := "no answer"
	for {
		resp, err := client.Get("http://" + addr + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				c.t.Logf("controller %s: %s ok after %.1fs", c.name, path, time.Since(t0).Seconds())
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-c.exited:
			c.t.Fatalf("controller %s exited (%v) while waiting for %s; log:\n%s", c.name, c.waitErr, path, c.logTail(30))
		case <-ctx.Done():
			c.t.Fatalf("controller %s: %s not ok after %s (last: %s); log:\n%s", c.name, path, timeout, last, c.logTail(30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReady waits for /readyz on the health address.
func (c *controllerProc) waitReady(ctx context.Context) {
	c.waitHTTP(ctx, c.health, "/readyz", 60*time.Second)
}

// stop sends SIGTERM and expects the controller to exit cleanly (status 0) within 30 s.
func (c *controllerProc) stop() {
	c.t.Helper()
	if c.hasExited() {
		return
	}
	c.signaled = true
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		if c.waitErr != nil {
			c.t.Errorf("controller %s: exit after SIGTERM: %v (want status 0)", c.name, c.waitErr)
		}
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
		c.t.Errorf("controller %s did not exit within 30s of SIGTERM; killed", c.name)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *controllerProc) kill() {
	c.t.Helper()
	c.signaled = true
	_ = c.cmd.Process.Kill()
	<-c.exited
	c.t.Logf("controller %s killed (SIGKILL)", c.name)
}

func (c *controllerProc) log() string {
	b, _ := os.ReadFile(c.logPath)
	return string(b)
}

func (c *controllerProc) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(c.log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitLog waits until a line of the controller's log contains every one of subs (a positive signal that
// the controller did something, e.g. a sync of a given set ended with a given result).
func (c *controllerProc) waitLog(ctx context.Context, desc string, timeout time.Duration, subs ...string) string {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, l := range strings.Split(c.log(), "\n") {
			all := true
			for _, s := range subs {
				all = all && strings.Contains(l, s)
			}
			if all {
				return l
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			c.t.Fatalf("controller %s: no log line for %s (%q) after %s; log:\n%s", c.name, desc, subs, timeout, c.logTail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// logLines returns the log lines that contain any of the substrings (case-insensitive).
func (c *controllerProc) logLines(subs ...string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(c.log()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := strings.ToLower(sc.Text())
		for _, s := range subs {
			if strings.Contains(l, strings.ToLower(s)) {
				out = append(out, sc.Text())
				break
			}
		}
	}
	return out
}

// ---------------------------------------------------------------------------------------------- objects

type setOpt func(*appsv1.StatefulSet)

// newSet returns a StatefulSet `name` (labels app=name) of pause containers; kwok runs its pods.
func newSet(name string, replicas int32, opts ...setOpt) *appsv1.StatefulSet {
	l := map[string]string{"app": name}
	grace := int64(1)
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l, Annotations: map[string]string{annVersion: "v1"}},
				Spec: corev1.PodSpec{
					Containers:                    []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
					TerminationGracePeriodSeconds: &grace,
				},
			},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func parallel(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }

func onDelete(s *appsv1.StatefulSet) {
	s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
}

func minReady(sec int32) setOpt { return func(s *appsv1.StatefulSet) { s.Spec.MinReadySeconds = sec } }

func maxUnavailable(n int) setOpt {
	return func(s *appsv1.StatefulSet) {
		v := intstr.FromInt32(int32(n))
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &v}}
	}
}

func neverReadyTemplate(s *appsv1.StatefulSet) { s.Spec.Template.Annotations[annNeverReady] = "true" }

// withClaims adds a volumeClaimTemplate "data" (1Mi; kwok binds it) and a retention policy.
func withClaims(whenDeleted, whenScaled appsv1.PersistentVolumeClaimRetentionPolicyType) setOpt {
	return func(s *appsv1.StatefulSet) {
		s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
			},
		}}
		s.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		if whenDeleted != "" || whenScaled != "" {
			s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: whenDeleted, WhenScaled: whenScaled}
		}
	}
}

// eventsOf lists the events with this reason about the object named name in ns.
func eventsOf(ctx context.Context, ns, name, reason string) (*corev1.EventList, error) {
	return cfg.kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + reason + ",involvedObject.name=" + name})
}

func createSet(t *testing.T, ctx context.Context, ns string, s *appsv1.StatefulSet) *appsv1.StatefulSet {
	t.Helper()
	out, err := cfg.kc.AppsV1().StatefulSets(ns).Create(ctx, s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create StatefulSet %s: %v", s.Name, err)
	}
	return out
}

// patchSet applies a JSON merge patch to the StatefulSet (no conflicts with the controller's status writes).
func patchSet(t *testing.T, ctx context.Context, ns, name, patch string) *appsv1.StatefulSet {
	t.Helper()
	out, err := cfg.kc.AppsV1().StatefulSets(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch StatefulSet %s with %s: %v", name, patch, err)
	}
	t.Logf("patched StatefulSet %s: %s (generation %d)", name, patch, out.Generation)
	return out
}

func setVersion(v string) string {
	return fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, annVersion, v)
}

func getSet(t *testing.T, ctx context.Context, ns, name string) *appsv1.StatefulSet {
	t.Helper()
	s, err := cfg.kc.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get StatefulSet %s: %v", name, err)
	}
	return s
}

func statusString(s *appsv1.StatefulSet) string {
	st := s.Status
	return fmt.Sprintf("generation=%d observed=%d replicas=%d ready=%d available=%d current=%d updated=%d currentRevision=%s updateRevision=%s collisions=%v",
		s.Generation, st.ObservedGeneration, st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas,
		st.UpdatedReplicas, st.CurrentRevision, st.UpdateRevision, ptrStr(st.CollisionCount))
}

func ptrStr[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// waitSet watches the StatefulSet until cond holds, failing the test after timeout.
func waitSet(t *testing.T, ctx context.Context, ns, name, desc string, timeout time.Duration, cond func(*appsv1.StatefulSet) bool) *appsv1.StatefulSet {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lw := setListWatch(ns, name)
	var last *appsv1.StatefulSet
	ev, err := watchtools.UntilWithSync(wctx, lw, &appsv1.StatefulSet{}, nil, func(ev watch.Event) (bool, error) {
		s, ok := ev.Object.(*appsv1.StatefulSet)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		last = s
		return cond(s), nil
	})
	if err != nil {
		st := "never seen"
		if last != nil {
			st = statusString(last)
		}
		t.Fatalf("StatefulSet %s/%s: timed out after %s waiting for %s; last status: %s; pods now: %s", ns, name, timeout, desc, st, podsNow(ns))
	}
	return ev.Object.(*appsv1.StatefulSet)
}

// setListWatch lists and watches the apps/v1 StatefulSet ns/name alone.
func setListWatch(ns, name string) *cache.ListWatch {
	return cache.NewListWatchFromClient(cfg.kc.AppsV1().RESTClient(), "statefulsets", ns, fields.OneTermEqualSelector("metadata.name", name))
}

// podsNow describes the namespace's pods as the API server has them now, so a timed-out wait shows whether
// the pods (the cluster's world) or the status (the controller) is behind.
func podsNow(ns string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "unlisted: " + err.Error()
	}
	var out []string
	for _, p := range l.Items {
		d := fmt.Sprintf("%s(node=%s phase=%s ready=%v rev=%s", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p), podRevision(&p))
		if p.DeletionTimestamp != nil {
			d += " terminating"
		}
		out = append(out, d+")")
	}
	return "[" + strings.Join(out, " ") + "]"
}

// rolledOut: the controller saw the latest spec, and all `replicas` pods are ready, available and updated.
func rolledOut(replicas int32) func(*appsv1.StatefulSet) bool {
	return func(s *appsv1.StatefulSet) bool {
		st := s.Status
		return st.ObservedGeneration >= s.Generation && st.Replicas == replicas && st.ReadyReplicas == replicas &&
			st.AvailableReplicas == replicas && st.UpdatedReplicas == replicas && st.CurrentReplicas == replicas &&
			st.CurrentRevision != "" && st.CurrentRevision == st.UpdateRevision
	}
}

func waitRolledOut(t *testing.T, ctx context.Context, ns, name string, replicas int32) *appsv1.StatefulSet {
	t.Helper()
	return waitSet(t, ctx, ns, name, fmt.Sprintf("%d/%d pods ready and updated, currentRevision == updateRevision", replicas, replicas),
		2*time.Minute, rolledOut(replicas))
}

func listRevisions(t *testing.T, ctx context.Context, ns, setName string) []appsv1.ControllerRevision {
	t.Helper()
	l, err := cfg.kc.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + setName})
	if err != nil {
		t.Fatalf("list ControllerRevisions: %v", err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Revision < l.Items[j].Revision })
	return l.Items
}

func revisionNames(revs []appsv1.ControllerRevision) []string {
	var out []string
	for _, r := range revs {
		out = append(out, fmt.Sprintf("%s(rev %d, uid %s)", r.Name, r.Revision, r.UID))
	}
	return out
}

func listClaims(t *testing.T, ctx context.Context, ns string) map[string]corev1.PersistentVolumeClaim {
	t.Helper()
	l, err := cfg.kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list PVCs: %v", err)
	}
	out := map[string]corev1.PersistentVolumeClaim{}
	for _, c := range l.Items {
		out[c.Name] = c
	}
	return out
}

// waitClaims watches the namespace's PVCs until cond holds on the current set of PVCs (by name).
func waitClaims(t *testing.T, ctx context.Context, ns, desc string, timeout time.Duration, cond func(map[string]*corev1.PersistentVolumeClaim) bool) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cur := map[string]*corev1.PersistentVolumeClaim{}
	lw := cache.NewListWatchFromClient(cfg.kc.CoreV1().RESTClient(), "persistentvolumeclaims", ns, fields.Everything())
	_, err := watchtools.UntilWithSync(wctx, lw, &corev1.PersistentVolumeClaim{}, func(store cache.Store) (bool, error) {
		for _, o := range store.List() {
			c := o.(*corev1.PersistentVolumeClaim)
			cur[c.Name] = c
		}
		return cond(cur), nil
	}, func(ev watch.Event) (bool, error) {
		c, ok := ev.Object.(*corev1.PersistentVolumeClaim)
		if !ok {
			return false, nil
		}
		if ev.Type == watch.Deleted {
			delete(cur, c.Name)
		} else {
			cur[c.Name] = c
		}
		return cond(cur), nil
	})
	if err != nil {
		var names []string
		for n, c := range cur {
			names = append(names, fmt.Sprintf("%s(uid %s, deleting=%v, owners=%s)", n, c.UID, c.DeletionTimestamp != nil, ownersString(c.OwnerReferences)))
		}
		sort.Strings(names)
		t.Fatalf("timed out after %s waiting for PVCs: %s; PVCs now: %v", timeout, desc, names)
	}
}

func ownersString(refs []metav1.OwnerReference) string {
	var out []string
	for _, r := range refs {
		out = append(out, fmt.Sprintf("%s/%s(controller=%v)", r.Kind, r.Name, ptrStr(r.Controller)))
	}
	return "[" + strings.Join(out, " ") + "]"
}

func hasOwner(refs []metav1.OwnerReference, kind, name string) bool {
	return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.Kind == kind && r.Name == name })
}

// eventLog renders the namespace's events in time order (for failure reports).
func eventLog(ns string) string {
	l, err := cfg.kc.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return "  (cannot list events: " + err.Error() + ")\n"
	}
	evs := l.Items
	ts := func(e corev1.Event) time.Time {
		switch {
		case !e.EventTime.IsZero():
			return e.EventTime.Time
		case !e.LastTimestamp.IsZero():
			return e.LastTimestamp.Time
		}
		return e.CreationTimestamp.Time
	}
	sort.SliceStable(evs, func(i, j int) bool { return ts(evs[i]).Before(ts(evs[j])) })
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %s %s %s %s/%s x%d: %s\n", ts(e).Format("15:04:05.000"), e.Type, e.Reason,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Count, e.Message)
	}
	return b.String()
}

// alreadyExistsEvents lists the namespace's events that report a create rejected with AlreadyExists.
func alreadyExistsEvents(t *testing.T, ctx context.Context, ns string) []string {
	t.Helper()
	l, err := cfg.kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	var out []string
	for _, e := range l.Items {
		if strings.Contains(strings.ToLower(e.Message), "already exists") {
			out = append(out, fmt.Sprintf("%s %s %s: %s", e.Type, e.Reason, e.InvolvedObject.Name, e.Message))
		}
	}
	return out
}

// ---------------------------------------------------------------------------------------------- pod tracker

// stepKind is what happened to a pod, as derived from the watch.
type stepKind string

const (
	stepCreated     stepKind = "created"     // a pod (new UID) appeared
	stepReady       stepKind = "ready"       // its Ready condition became True (Running, not terminating)
	stepUnready     stepKind = "unready"     // it stopped being ready (not by deletion)
	stepTerminating stepKind = "terminating" // deletionTimestamp set (deletion requested)
	stepDeleted     stepKind = "deleted"     // gone from the API
	stepRevised     stepKind = "revised"     // its revision label moved, the same uid (extension in-place-update)
)

type step struct {
	at       time.Time
	kind     stepKind
	name     string
	ordinal  int
	uid      types.UID
	revision string
}

func (s step) String() string {
	return fmt.Sprintf("%s %-11s %s (uid %.8s, rev %s)", s.at.Format("15:04:05.000"), s.kind, s.name, s.uid, s.revision)
}

// podTracker follows the pods of one StatefulSet through an informer (list + watch) and keeps the timeline
// of what happened to them, checking invariants after every event.
type podTracker struct {
	t       *testing.T
	ns      string
	setName string

	mu         sync.Mutex
	live       map[string]*corev1.Pod
	steps      []step
	uids       map[int][]types.UID // distinct pod UIDs per ordinal, in order of appearance
	notify     chan struct{}
	violations []string

	orderedCreate bool // check: a pod is created only when all lower ordinals are ready (OrderedReady)

	// check: at most muMax of the ordinals [0, muReplicas) unavailable (missing, terminating or not ready)
	muArmed    bool
	muReplicas int
	muMax      int
	muPeak     int
}

var ordinalRE = regexp.MustCompile(`-(\d+)$`)

func podOrdinal(name string) int {
	m := ordinalRE.FindStringSubmatch(name)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func podRevision(p *corev1.Pod) string { return p.Labels[appsv1.ControllerRevisionHashLabelKey] }

func podReady(p *corev1.Pod) bool {
	if p == nil || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// trackPods starts following the pods labelled app=setName in ns (call it before creating the set).
func trackPods(t *testing.T, ctx context.Context, ns, setName string, orderedCreate bool) *podTracker {
	t.Helper()
	tr := &podTracker{t: t, ns: ns, setName: setName, live: map[string]*corev1.Pod{}, uids: map[int][]types.UID{},
		notify: make(chan struct{}), orderedCreate: orderedCreate}
	sel := labels.SelectorFromSet(labels.Set{"app": setName}).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return cfg.kc.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return cfg.kc.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o interface{}) { tr.observe(o.(*corev1.Pod), false) },
			UpdateFunc: func(_, o interface{}) { tr.observe(o.(*corev1.Pod), false) },
			DeleteFunc: func(o interface{}) {
				if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
					o = d.Obj
				}
				if p, ok := o.(*corev1.Pod); ok {
					tr.observe(p, true)
				}
			},
		},
	})
	ictx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go ctrl.RunWithContext(ictx)
	if !cache.WaitForCacheSync(ictx.Done(), ctrl.HasSynced) {
		t.Fatalf("pod informer did not sync")
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- pod timeline of %s:\n%s", setName, tr.timeline())
		}
	})
	return tr
}

func (tr *podTracker) observe(p *corev1.Pod, deleted bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	now := time.Now()
	ord := podOrdinal(p.Name)
	prev := tr.live[p.Name]
	add := func(k stepKind) {
		tr.steps = append(tr.steps, step{at: now, kind: k, name: p.Name, ordinal: ord, uid: p.UID, revision: podRevision(p)})
	}
	if prev != nil && prev.UID != p.UID { // replaced between two events we saw
		tr.steps = append(tr.steps, step{at: now, kind: stepDeleted, name: prev.Name, ordinal: ord, uid: prev.UID, revision: podRevision(prev)})
		delete(tr.live, p.Name)
		prev = nil
	}
	if deleted {
		if prev != nil && prev.DeletionTimestamp == nil {
			add(stepTerminating)
		}
		add(stepDeleted)
		delete(tr.live, p.Name)
	} else {
		if prev == nil {
			if tr.orderedCreate && ord >= 0 {
				for j := 0; j < ord; j++ {
					if !podReady(tr.live[fmt.Sprintf("%s-%d", tr.setName, j)]) {
						tr.violations = append(tr.violations, fmt.Sprintf("%s: pod %s created while %s-%d was not Running and Ready",
							now.Format("15:04:05.000"), p.Name, tr.setName, j))
					}
				}
			}
			add(stepCreated)
			if !slices.Contains(tr.uids[ord], p.UID) {
				tr.uids[ord] = append(tr.uids[ord], p.UID)
			}
		}
		if prev != nil && podRevision(prev) != podRevision(p) {
			add(stepRevised) // same uid (a new one was handled above): updated in place
		}
		if p.DeletionTimestamp != nil && (prev == nil || prev.DeletionTimestamp == nil) {
			add(stepTerminating)
		}
		if r, pr := podReady(p), podReady(prev); r && !pr {
			add(stepReady)
		} else if !r && pr && p.DeletionTimestamp == nil {
			add(stepUnready)
		}
		tr.live[p.Name] = p
	}
	if tr.muArmed {
		u := tr.unavailableLocked(tr.muReplicas)
		if u > tr.muPeak {
			tr.muPeak = u
		}
		if u > tr.muMax {
			tr.violations = append(tr.violations, fmt.Sprintf("%s: %d pods unavailable (max %d) after %s %s",
				now.Format("15:04:05.000"), u, tr.muMax, tr.steps[len(tr.steps)-1].kind, p.Name))
		}
	}
	close(tr.notify)
	tr.notify = make(chan struct{})
}

func (tr *podTracker) unavailableLocked(replicas int) int {
	n := 0
	for i := 0; i < replicas; i++ {
		if !podReady(tr.live[fmt.Sprintf("%s-%d", tr.setName, i)]) {
			n++
		}
	}
	return n
}

// armMaxUnavailable starts checking, after every event, that at most max of the ordinals [0, replicas)
// are unavailable; it returns a func that reports the peak seen. It first catches up with the API server
// (catchUp): a watch still behind a wait on the set's status would judge pods of the creation past.
func (tr *podTracker) armMaxUnavailable(ctx context.Context, replicas, max int) func() int {
	tr.t.Helper()
	tr.catchUp(ctx)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.muArmed, tr.muReplicas, tr.muMax, tr.muPeak = true, replicas, max, tr.unavailableLocked(replicas)
	return func() int {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.muPeak
	}
}

// podView is a read-only view of the live pods, for wait conditions.
type podView struct {
	setName string
	live    map[string]*corev1.Pod
}

func (v podView) pod(i int) *corev1.Pod { return v.live[fmt.Sprintf("%s-%d", v.setName, i)] }
func (v podView) ready(i int) bool      { return podReady(v.pod(i)) }
func (v podView) count() int            { return len(v.live) }
func (v podView) revision(i int) string {
	if p := v.pod(i); p != nil {
		return podRevision(p)
	}
	return ""
}

// readyAt: ordinals [0,n) ready at revision rev (any revision if rev == ""), and no other pods.
func (v podView) readyAt(n int, rev string) bool {
	if len(v.live) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if !v.ready(i) || (rev != "" && v.revision(i) != rev) {
			return false
		}
	}
	return true
}

// waitFor waits until cond holds on the live pods, failing the test after timeout.
func (tr *podTracker) waitFor(ctx context.Context, desc string, timeout time.Duration, cond func(podView) bool) {
	tr.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		tr.mu.Lock()
		ok := cond(podView{tr.setName, tr.live})
		ch := tr.notify
		tr.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			tr.t.Fatalf("timed out after %s waiting for pods: %s; pods now:\n%s", timeout, desc, tr.describe())
		case <-ctx.Done():
			tr.t.Fatalf("context done waiting for pods: %s; pods now:\n%s", desc, tr.describe())
		}
	}
}

// catchUp waits until the tracker has recorded the set's pods as a consistent list from the API server
// shows them now: each listed pod at its listed resourceVersion or later, and no pod the list no longer has.
// A test reads the tracker after waiting on the set's status: the controller saw those pods through its
// own watch, and this one may still be behind (a loaded machine delays it by hundreds of milliseconds).
func (tr *podTracker) catchUp(ctx context.Context) {
	tr.t.Helper()
	l, err := cfg.kc.CoreV1().Pods(tr.ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"app": tr.setName}).String()})
	if err != nil {
		tr.t.Fatalf("list pods of %s: %v", tr.setName, err)
	}
	listed := map[string]uint64{}
	for i := range l.Items {
		listed[l.Items[i].Name] = resourceVersion(tr.t, l.Items[i].ResourceVersion)
	}
	at := resourceVersion(tr.t, l.ResourceVersion)
	tr.waitFor(ctx, fmt.Sprintf("the tracker's watch at the pods as listed at resourceVersion %d", at), time.Minute, func(v podView) bool {
		for name, rv := range listed {
			if p := v.live[name]; p == nil || resourceVersion(tr.t, p.ResourceVersion) < rv {
				return false
			}
		}
		for name, p := range v.live {
			if _, ok := listed[name]; !ok && resourceVersion(tr.t, p.ResourceVersion) <= at {
				return false // deleted before the list; the watch has not delivered it yet
			}
		}
		return true
	})
}

// resourceVersion reads a resourceVersion as the number kube-apiserver's etcd storage makes it (tests only:
// the API promises nothing about its form, but this cluster's is etcd's revision).
func resourceVersion(t *testing.T, rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q is not a number: %v", rv, err)
	}
	return n
}

func (tr *podTracker) snapshot() map[string]*corev1.Pod {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return maps.Clone(tr.live)
}

// uidsByName returns the live pods' UIDs by name, once the tracker has caught up with the API server
// (catchUp): tests take it right after a wait on the set's status.
func (tr *podTracker) uidsByName(ctx context.Context) map[string]types.UID {
	tr.t.Helper()
	tr.catchUp(ctx)
	out := map[string]types.UID{}
	for n, p := range tr.snapshot() {
		out[n] = p.UID
	}
	return out
}

// stepsOf returns the steps of the given kind, in order, from index from.
func (tr *podTracker) stepsOf(kind stepKind, from int) []step {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.stepsOfLocked(kind, from)
}

// stepsOfLocked is stepsOf for a caller holding tr.mu (a waitFor condition).
func (tr *podTracker) stepsOfLocked(kind stepKind, from int) []step {
	var out []step
	for _, s := range tr.steps[min(from, len(tr.steps)):] {
		if s.kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// mark returns the current position in the timeline (for stepsOf).
func (tr *podTracker) mark() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.steps)
}

func ordinals(steps []step) []int {
	var out []int
	for _, s := range steps {
		out = append(out, s.ordinal)
	}
	return out
}

// checkInvariants reports the violations recorded by the tracker's checks.
func (tr *podTracker) checkInvariants() {
	tr.t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, v := range tr.violations {
		tr.t.Errorf("invariant violated: %s", v)
	}
	for n := range tr.live {
		if podOrdinal(n) < 0 {
			tr.t.Errorf("pod %s has no ordinal", n)
		}
	}
}

// podsPerOrdinal returns how many distinct pods (UIDs) each ordinal had.
func (tr *podTracker) podsPerOrdinal() map[int]int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := map[int]int{}
	for o, u := range tr.uids {
		out[o] = len(u)
	}
	return out
}

func (tr *podTracker) describe() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	names := make([]string, 0, len(tr.live))
	for n := range tr.live {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return podOrdinal(names[i]) < podOrdinal(names[j]) })
	var b strings.Builder
	for _, n := range names {
		p := tr.live[n]
		fmt.Fprintf(&b, "  %s uid=%.8s rev=%s phase=%s ready=%v terminating=%v node=%s\n", n, p.UID, podRevision(p),
			p.Status.Phase, podReady(p), p.DeletionTimestamp != nil, p.Spec.NodeName)
	}
	if len(names) == 0 {
		b.WriteString("  (none)\n")
	}
	return b.String()
}

func (tr *podTracker) timeline() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var b strings.Builder
	for _, s := range tr.steps {
		b.WriteString("  " + s.String() + "\n")
	}
	return b.String()
}

// ---------------------------------------------------------------------------------------------- misc

func deleteOptions(p metav1.DeletionPropagation) metav1.DeleteOptions {
	return metav1.DeleteOptions{PropagationPolicy: &p}
}

// runOrdinal runs bin/ordinal with args and returns its stdout, stderr and exit code.
func runOrdinal(t *testing.T, ctx context.Context, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %s %v: %v", cfg.bin, args, err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

// gcCanary creates a ConfigMap owned by the given object: once the garbage collector has deleted it
// (waitCanaryGone), it has acted on that owner's dependents. Tests that check the collector left something alone
// wait for this instead of pausing.
func gcCanary(t *testing.T, ctx context.Context, ns, kind, apiVersion, name string, uid types.UID) string {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gc-canary-", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid}}}}
	got, err := cfg.kc.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.Name
}

// waitCanaryGone waits until the canary ConfigMap name is deleted.
func waitCanaryGone(t *testing.T, ctx context.Context, ns, name string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := cfg.kc.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the garbage collector did not delete %s within 2m (err %v)", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kwokCaughtUp is the positive signal for "kwok left these pods alone" (a never-ready pod stays not Ready):
// it creates a plain pod in ns after the pods in question reached the state being checked, waits until
// kwok has made it Running and Ready, and deletes it. kwok (v0.8, scripts/localk8s/kwok) reads every pod
// event through one watch, in resourceVersion order, and matches each to a stage on one goroutine in that
// order, queueing the matched stage (the stages that set a pod's phase and readiness have no delay). The
// probe's events all come after the other pods' current states, so once kwok has played the probe's stage
// it has matched those states too, and queued, ahead of the probe's, any stage that would change them:
// what a test sees after this is what kwok made of them, however slow the machine.
func kwokCaughtUp(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	name := fmt.Sprintf("kwok-probe-%04d", rand.IntN(10000))
	pods := cfg.kc.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, simplePod(name, nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create kwok probe pod: %v", err)
	}
	waitPod(t, ctx, ns, name, "kwok probe Running and Ready", 2*time.Minute, podReady)
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete kwok probe pod: %v", err)
	}
}

// samePods checks with a consistent list from the API server that each named pod still has the uid it had
// in before and is not terminating. Called once the controller has written the status of the sync that
// observed a change: every write of that sync came before its status, so a pod that sync deleted or
// replaced shows here, without watching a window of time.
func samePods(t *testing.T, ctx context.Context, ns string, before map[string]types.UID, why string, names ...string) {
	t.Helper()
	l, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := map[string]*corev1.Pod{}
	for i := range l.Items {
		now[l.Items[i].Name] = &l.Items[i]
	}
	for _, n := range names {
		p := now[n]
		switch {
		case p == nil:
			t.Errorf("%s: pod %s is gone", why, n)
		case p.UID != before[n]:
			t.Errorf("%s: pod %s was replaced", why, n)
		case p.DeletionTimestamp != nil:
			t.Errorf("%s: pod %s is being deleted", why, n)
		}
	}
}

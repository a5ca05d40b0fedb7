//go:build integration

// Integration tests against a real API server (with kube-controller-manager
// running without its StatefulSet controller, and kwok making pods Ready), e.g.
// the cluster of /work/shared/reference/local-cluster/cluster-up.sh:
//
//	ORDINAL_TEST_KUBECONFIG=/tmp/kubeconfig go test -tags integration ./host/controller/
//
// Without ORDINAL_TEST_KUBECONFIG the tests skip.
package controller

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

func testConfig(t *testing.T) *rest.Config {
	t.Helper()
	path := os.Getenv("ORDINAL_TEST_KUBECONFIG")
	if path == "" {
		t.Skip("ORDINAL_TEST_KUBECONFIG not set")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	cfg.QPS, cfg.Burst = 50, 100
	return cfg
}

func testNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ordinal-it-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	// Pods need the namespace's default ServiceAccount (created by KCM).
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatal("no default ServiceAccount:", err)
	}
	return ns.Name
}

type runningController struct {
	c      *Controller
	cancel context.CancelFunc
	done   chan error
}

func startController(t *testing.T, cfg *rest.Config, ns string) *runningController {
	t.Helper()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	m, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{RESTConfig: cfg, Module: NewModuleRef(m), Namespace: ns, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	rc := &runningController{c: c, cancel: cancel, done: make(chan error, 1)}
	go func() { rc.done <- c.Run(ctx) }()
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return c.HasSynced(), nil
	}); err != nil {
		t.Fatal("caches did not sync:", err)
	}
	t.Cleanup(func() { rc.stop(t); _ = m.Close(context.Background()) })
	return rc
}

func (rc *runningController) stop(t *testing.T) {
	if rc.cancel == nil {
		return
	}
	rc.cancel()
	rc.cancel = nil
	select {
	case <-rc.done:
	case <-time.After(30 * time.Second):
		t.Error("controller did not stop")
	}
}

func webSet(ns string, replicas int32, image string) *appsv1.StatefulSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "web",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}

// podLog watches pods and records, in order, "add web-N (ready predecessors: ...)" and "delete web-N".
type podLog struct {
	mu              sync.Mutex
	events          []string
	ready           map[string]bool
	adds            map[string]int
	orderViolations []string
}

func watchPods(t *testing.T, client kubernetes.Interface, ns string) *podLog {
	t.Helper()
	w, err := client.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	pl := &podLog{ready: map[string]bool{}, adds: map[string]int{}}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			pl.mu.Lock()
			switch ev.Type {
			case watch.Added:
				pl.events = append(pl.events, "add "+p.Name)
				pl.adds[p.Name]++
				// OrderedReady: web-N is created only once web-0..web-N-1 are Ready.
				var ord int
				fmt.Sscanf(strings.TrimPrefix(p.Name, "web-"), "%d", &ord)
				for i := 0; i < ord; i++ {
					if !pl.ready[fmt.Sprintf("web-%d", i)] {
						pl.orderViolations = append(pl.orderViolations, fmt.Sprintf("%s created while web-%d not Ready", p.Name, i))
					}
				}
				pl.ready[p.Name] = podReady(p) && p.DeletionTimestamp == nil
			case watch.Modified:
				pl.ready[p.Name] = podReady(p) && p.DeletionTimestamp == nil
			case watch.Deleted:
				pl.events = append(pl.events, "delete "+p.Name)
				pl.ready[p.Name] = false
			}
			pl.mu.Unlock()
		}
	}()
	return pl
}

func (pl *podLog) snapshot() (events, violations []string, adds map[string]int) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	a := map[string]int{}
	for k, v := range pl.adds {
		a[k] = v
	}
	return append([]string(nil), pl.events...), append([]string(nil), pl.orderViolations...), a
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func setSettled(client kubernetes.Interface, ns string, replicas int32) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		s, err := client.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		st := s.Status
		return st.ObservedGeneration == s.Generation && st.Replicas == replicas && st.ReadyReplicas == replicas &&
			st.AvailableReplicas == replicas && st.UpdatedReplicas == replicas && st.CurrentReplicas == replicas &&
			st.CurrentRevision != "" && st.CurrentRevision == st.UpdateRevision, nil
	}
}

func TestIntegrationOrderedReadyLifecycle(t *testing.T) {
	cfg := testConfig(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ns := testNamespace(t, client)
	pods := watchPods(t, client, ns)
	rc := startController(t, cfg, ns)
	ctx := context.Background()

	// 1. A fresh 3-replica OrderedReady set with a volumeClaimTemplate.
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, webSet(ns, 3, "app:v1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "3 ready replicas", 60*time.Second, setSettled(client, ns, 3))
	events, violations, adds := pods.snapshot()
	if len(violations) > 0 {
		t.Errorf("OrderedReady violated: %v", violations)
	}
	if want := "add web-0,add web-1,add web-2"; strings.Join(events, ",") != want {
		t.Errorf("pod events %v, want %s", events, want)
	}
	for _, name := range []string{"data-web-0", "data-web-1", "data-web-2"} {
		if _, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("claim %s: %v", name, err)
		}
	}
	for _, p := range []string{"web-0", "web-1", "web-2"} {
		if adds[p] != 1 {
			t.Errorf("%s created %d times", p, adds[p])
		}
	}

	// 2. The controller's cached snapshot equals the live one (same code, live Lists).
	waitFor(t, "a quiet cache", 10*time.Second, func(ctx context.Context) (bool, error) {
		now := time.Now()
		cached, err := rc.c.Snapshot(ns, "web", now)
		if err != nil {
			return false, nil
		}
		objs, err := LiveObjects(ctx, client, ns, "web")
		if err != nil {
			return false, err
		}
		sel, err := SelectObjects(objs)
		if err != nil {
			return false, err
		}
		live, err := BuildSnapshot(sel, StatefulSetTarget, now, nil)
		if err != nil {
			return false, err
		}
		return string(cached.JSON) == string(live.JSON), nil
	})

	// 3. A template change rolls the pods, highest ordinal first.
	set, err := client.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldRev := set.Status.CurrentRevision
	set.Spec.Template.Spec.Containers[0].Image = "app:v2"
	if _, err := client.AppsV1().StatefulSets(ns).Update(ctx, set, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the roll", 60*time.Second, func(ctx context.Context) (bool, error) {
		ok, _ := setSettled(client, ns, 3)(ctx)
		if !ok {
			return false, nil
		}
		s, _ := client.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
		return s.Status.CurrentRevision != oldRev, nil
	})
	podList, _ := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	set, _ = client.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
	for _, p := range podList.Items {
		if p.Labels[appsv1.ControllerRevisionHashLabelKey] != set.Status.UpdateRevision || p.Spec.Containers[0].Image != "app:v2" {
			t.Errorf("pod %s at %s/%s after the roll", p.Name, p.Labels[appsv1.ControllerRevisionHashLabelKey], p.Spec.Containers[0].Image)
		}
	}
	events, violations, _ = pods.snapshot()
	var deletes []string
	for _, e := range events {
		if strings.HasPrefix(e, "delete ") {
			deletes = append(deletes, strings.TrimPrefix(e, "delete "))
		}
	}
	if strings.Join(deletes, ",") != "web-2,web-1,web-0" {
		t.Errorf("roll deleted %v, want web-2,web-1,web-0", deletes)
	}
	if len(violations) > 0 {
		t.Errorf("OrderedReady violated: %v", violations)
	}

	// 4. Scale down to 1: web-2 then web-1 go, claims stay (Retain).
	set.Spec.Replicas = ptrTo(int32(1))
	if _, err := client.AppsV1().StatefulSets(ns).Update(ctx, set, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "scale down to 1", 60*time.Second, setSettled(client, ns, 1))
	pvcs, _ := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if len(pvcs.Items) != 3 {
		t.Errorf("%d claims after scale-down, want 3 (Retain)", len(pvcs.Items))
	}

	// 5. No write failed, nothing was created twice.
	if n := counterSum(t, rc.c.Metrics(), "ordinal_actions_total", "result", "error"); n != 0 {
		t.Errorf("%v writes failed", n)
	}

	// 6. A restarted controller (empty consistency store, fresh caches) plans nothing on a settled set.
	rc.stop(t)
	before := counterSum(t, rc.c.Metrics(), "ordinal_actions_total", "", "")
	rc2 := startController(t, cfg, ns)
	// a sync is counted after its writes: once one has ended, its writes (none, on a settled set) are in
	deadline := time.Now().Add(2 * time.Minute)
	for counterSum(t, rc2.c.Metrics(), "ordinal_syncs_total", "result", "success") < 1 {
		if time.Now().After(deadline) {
			t.Fatal("restarted controller did not sync the set")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := counterSum(t, rc2.c.Metrics(), "ordinal_actions_total", "", ""); n != 0 {
		t.Errorf("restarted controller issued %v writes on a settled set (first run issued %v)", n, before)
	}
}

func ptrTo[T any](v T) *T { return &v }

// counterSum adds up a counter family's samples, optionally only those with label=value.
func counterSum(t *testing.T, m *Metrics, name, label, value string) float64 {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, mt := range mf.GetMetric() {
			if label != "" {
				for _, lp := range mt.GetLabel() {
					if lp.GetName() == label && lp.GetValue() != value {
						continue metric
					}
				}
			}
			sum += mt.GetCounter().GetValue()
		}
	}
	return sum
}

func TestIntegrationLeaderElectionHandover(t *testing.T) {
	cfg := testConfig(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ns := testNamespace(t, client)
	le := func(id string) LeaderElection {
		return LeaderElection{Namespace: ns, Name: "ordinal-it", Identity: id,
			LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 200 * time.Millisecond}
	}
	type replica struct {
		cancel  context.CancelFunc
		done    chan error
		leading chan bool
		ran     chan struct{}
	}
	start := func(id string) *replica {
		ctx, cancel := context.WithCancel(context.Background())
		r := &replica{cancel: cancel, done: make(chan error, 1), leading: make(chan bool, 10), ran: make(chan struct{}, 1)}
		go func() {
			r.done <- RunLeaderElected(ctx, client, le(id), func(l bool) { r.leading <- l }, func(ctx context.Context) error {
				r.ran <- struct{}{}
				<-ctx.Done()
				time.Sleep(300 * time.Millisecond) // a sync in flight: the lease must still be held
				return nil
			})
		}()
		return r
	}
	a := start("a")
	select {
	case <-a.ran:
	case <-time.After(20 * time.Second):
		t.Fatal("a did not become leader")
	}
	b := start("b")
	select {
	case <-b.ran:
		t.Fatal("b leads while a holds the lease")
	case <-time.After(1 * time.Second):
	}
	t0 := time.Now()
	a.cancel() // SIGTERM
	if err := <-a.done; err != nil {
		t.Fatalf("a: %v", err)
	}
	if time.Since(t0) < 300*time.Millisecond {
		t.Error("a returned before its run function drained")
	}
	// a released the lease on its way out (no holder, or b already), rather than letting it expire
	held, err := client.CoordinationV1().Leases(ns).Get(context.Background(), "ordinal-it", metav1.GetOptions{})
	if err != nil || (held.Spec.HolderIdentity != nil && *held.Spec.HolderIdentity != "" && *held.Spec.HolderIdentity != "b") {
		t.Fatalf("lease after a stopped: %v %v; want released", held, err)
	}
	select {
	case <-b.ran:
	case <-time.After(2 * time.Minute):
		t.Fatal("b did not take over after a released the lease")
	}
	lease, err := client.CoordinationV1().Leases(ns).Get(context.Background(), "ordinal-it", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "b" {
		t.Fatalf("lease holder: %v %v", lease, err)
	}
	b.cancel()
	if err := <-b.done; err != nil {
		t.Fatalf("b: %v", err)
	}
}

package controller

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/conformance"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
)

// Test modules (testdata/modules/build.sh).
const (
	hostileModule = "testdata/modules/hostile.wasm"
	variantModule = "testdata/modules/ordinal-maxunavailable-off.wasm"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadModule(ctx context.Context, code []byte) (*wasm.Module, error) {
	return wasm.Load(ctx, code, wasm.Config{Timeout: 30 * time.Second})
}

var (
	casesOnce   sync.Once
	pinnedCases []conformance.Case
	casesErr    error
)

func gateCases(t testing.TB) []conformance.Case {
	t.Helper()
	casesOnce.Do(func() {
		var all []conformance.Case
		if all, casesErr = conformance.All(); casesErr == nil {
			pinnedCases, casesErr = conformance.Pinned(all)
		}
	})
	if casesErr != nil {
		t.Fatal(casesErr)
	}
	return pinnedCases
}

// The swapper refuses what does not compile, speaks another ABI or fails a conformance case, keeping
// the active module; it accepts a module with other but valid behaviour (the variant with
// MaxUnavailableStatefulSet off by default, which passes every case with the reference's gates) and
// ignores a candidate equal to the active one.
func TestSwapperChecks(t *testing.T) {
	ctx := context.Background()
	base, err := loadModule(ctx, embedded.Module())
	if err != nil {
		t.Fatal(err)
	}
	ref := &module.Ref{}
	var baseReleased atomic.Bool
	ref.Install(base, module.InfoOf(base), func() { baseReleased.Store(true); base.Close(ctx) })
	metrics := NewMetrics(nil)
	rec := record.NewFakeRecorder(20)
	s, err := module.NewSwapper(module.SwapConfig{Ref: ref, Load: loadModule, Cases: gateCases(t), Metrics: metrics, Recorder: rec, CustomSetKind: snapshot.CRDTarget.String()})
	if err != nil {
		t.Fatal(err)
	}
	obj := &corev1.ObjectReference{Kind: "Lease", Namespace: "ns", Name: "ordinal-controller"}
	abi2, err := os.ReadFile("../wasm/testdata/abi2.wasm")
	if err != nil {
		t.Fatal(err)
	}
	trap, err := os.ReadFile("../wasm/testdata/trap.wasm") // a describe without customSetKinds
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, reason string
		code         []byte
	}{
		{"not wasm", module.RefusedLoad, []byte("\x00asm but not really")},
		{"truncated module", module.RefusedLoad, embedded.Module()[:len(embedded.Module())/2]},
		{"another ABI", module.RefusedABI, abi2},
		{"owns as apps/v1 only", module.RefusedCustomSetKinds, trap},
		{"hostile module", module.RefusedConformance, readFile(t, hostileModule)},
	} {
		swapped, err := s.Offer(ctx, "test:"+tc.name, tc.code, obj)
		var re *module.RefusedError
		if swapped || !errors.As(err, &re) || re.Reason != tc.reason {
			t.Fatalf("%s: swapped=%v err=%v, want refused (%s)", tc.name, swapped, err, tc.reason)
		}
		t.Logf("%s: %v", tc.name, err)
		if _, info := ref.Load(); info.Digest != module.InfoOf(base).Digest {
			t.Fatalf("%s: active module changed to %s", tc.name, info.Digest)
		}
		if got := metricValue(metrics.moduleRefusals.WithLabelValues(tc.reason)); got < 1 {
			t.Errorf("%s: ordinal_module_refusals_total{reason=%q} = %v", tc.name, tc.reason, got)
		}
		if ev := <-rec.Events; !strings.HasPrefix(ev, "Warning ModuleRefused") {
			t.Errorf("%s: event %q", tc.name, ev)
		}
	}
	// The same refused bytes again: ignored (no second check, no event).
	if swapped, err := s.Offer(ctx, "again", readFile(t, hostileModule), obj); swapped || err != nil {
		t.Fatalf("re-offered refused module: swapped=%v err=%v", swapped, err)
	}
	// Equal to the active module: ignored.
	if swapped, err := s.Offer(ctx, "same", embedded.Module(), obj); swapped || err != nil {
		t.Fatalf("re-offered active module: swapped=%v err=%v", swapped, err)
	}
	// Other but valid behaviour: accepted.
	swapped, err := s.Offer(ctx, "file:variant", readFile(t, variantModule), obj)
	if !swapped || err != nil {
		t.Fatalf("variant: swapped=%v err=%v", swapped, err)
	}
	_, info := ref.Load()
	if info.Describe.Features["MaxUnavailableStatefulSet"] || !strings.HasSuffix(info.Describe.ModuleVersion, "+maxunavailable-off") || info.Source != "file:variant" {
		t.Fatalf("active after swap: %+v", info)
	}
	if ev := <-rec.Events; !strings.HasPrefix(ev, "Normal ModuleSwapped") {
		t.Errorf("event %q", ev)
	}
	if !baseReleased.Load() {
		t.Errorf("the swapped-out module was not released")
	}
	if got := metricValue(metrics.moduleSwaps); got != 1 {
		t.Errorf("ordinal_module_swaps_total = %v", got)
	}
	if got := metricValue(metrics.moduleInfo.WithLabelValues("ordinal", info.Describe.ModuleVersion, info.Digest, info.Describe.KubernetesVersion, "1")); got != 1 {
		t.Errorf("ordinal_module_info of the new module = %v", got)
	}
	st := s.Status()
	if st.Swaps != 1 || st.Refusals != 5 || st.LastSwap == nil || st.LastSwap.GateCases != len(gateCases(t)) || st.LastRefusal == nil {
		t.Errorf("status %+v", st)
	}
	t.Logf("variant swapped in: load %s, gate %s (%d cases)", st.LastSwap.Load, st.LastSwap.Gate, st.LastSwap.GateCases)
	r, _ := ref.Load()
	r.(*wasm.Module).Close(ctx)
}

// The --module file is watched: a new module written over it becomes active; a broken one is refused.
func TestWatchModuleFile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	path := filepath.Join(dir, "module.wasm")
	if err := os.WriteFile(path, embedded.Module(), 0o644); err != nil {
		t.Fatal(err)
	}
	base, err := loadModule(ctx, embedded.Module())
	if err != nil {
		t.Fatal(err)
	}
	ref := &module.Ref{}
	ref.Install(base, module.InfoOf(base), func() { base.Close(ctx) })
	s, err := module.NewSwapper(module.SwapConfig{Ref: ref, Load: loadModule, Cases: gateCases(t)})
	if err != nil {
		t.Fatal(err)
	}
	go module.WatchModuleFile(ctx, s, path, 20*time.Millisecond, 0, nil)
	replace := func(code []byte) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, code, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what string, cond func(module.SwapStatus) bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !cond(s.Status()) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; status %+v", what, s.Status())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	replace([]byte("not a module"))
	waitFor("the broken module to be refused", func(st module.SwapStatus) bool { return st.Refusals == 1 })
	t0 := time.Now()
	replace(readFile(t, variantModule))
	waitFor("the variant to become active", func(st module.SwapStatus) bool { return st.Swaps == 1 })
	t.Logf("file change to active module: %s", time.Since(t0))
	cancel()
	r, _ := ref.Load()
	r.(*wasm.Module).Close(context.Background())
}

// A hostile module whose plans reach beyond its set, made active by bypassing the conformance gate,
// is stopped by the action firewall in the real sync path: no request reaches the API server, the
// set gets a PlanRefused warning, and ordinal_plan_refusals_total counts it.
func TestHostileModuleStoppedByFirewall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := loadModule(ctx, readFile(t, hostileModule))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	// Made active through the swapper with the gate bypassed (as the test-only flag does).
	ref := &module.Ref{}
	base, err := loadModule(ctx, embedded.Module())
	if err != nil {
		t.Fatal(err)
	}
	ref.Install(base, module.InfoOf(base), func() { base.Close(ctx) })
	s, err := module.NewSwapper(module.SwapConfig{Ref: ref, Load: loadModule, SkipGate: true})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Offer(ctx, "test:hostile", readFile(t, hostileModule), nil); !ok || err != nil {
		t.Fatalf("offer with the gate bypassed: %v %v", ok, err)
	}

	// what each attack's refusal says (rule and the part it names), where the attack is one rule's
	wantReason := map[string]string{
		"update-pod-image":    "object: containers/nginx: the image changes",
		"create-hostpath-pod": "spec.volumes",
	}
	for _, attack := range []string{"", "delete-foreign-pod", "create-other-namespace", "delete-pvc", "patch-foreign-pod", "status-other-set",
		"update-pod-image", "create-hostpath-pod"} {
		t.Run("attack="+attack, func(t *testing.T) {
			set := kubetest.Set()
			set.Spec.Replicas = ptr.To[int32](2)
			set.Spec.Template.Labels = map[string]string{"app": "web"}
			set.Spec.Template.Spec.Containers = []corev1.Container{{Name: "nginx", Image: "registry.k8s.io/nginx-slim:0.27"}}
			set.Annotations = map[string]string{"ordinal.dev/hostile": attack}
			web0 := kubetest.Pod("web-0", "ns", map[string]string{"app": "web"}, kubetest.ControllerRef("StatefulSet", "web", "set-uid"))
			web0.Spec = set.Spec.Template.Spec
			objs := []runtime.Object{set, web0,
				kubetest.Pod("web-1", "ns", map[string]string{"app": "web"}, kubetest.ControllerRef("StatefulSet", "web-legacy", "other-uid")),
				kubetest.Pod("db-0", "ns", map[string]string{"app": "db"}, kubetest.ControllerRef("StatefulSet", "db", "db-uid")),
				&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-web-0", Namespace: "ns", UID: "claim-uid"}},
			}
			api := &fakeAPI{}
			c := newFakeController(t, ctx, ref, api, objs...)
			rec := record.NewFakeRecorder(10)
			c.recorder = rec
			_, err := c.sync(ctx, "ns/web")
			if err == nil || !strings.Contains(err.Error(), "firewall") {
				t.Fatalf("sync error %v, want a firewall refusal", err)
			}
			t.Log(err)
			if want := wantReason[attack]; want != "" && !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not say %q", err, want)
			}
			if len(api.reqs) != 0 {
				t.Fatalf("the API server got %d requests, want none: %+v", len(api.reqs), api.reqs)
			}
			// (beside it, UnknownAnnotation: the module reads ordinal.dev/hostile without describing it)
			var events []string
			for len(rec.Events) > 0 {
				events = append(events, <-rec.Events)
			}
			if !slices.ContainsFunc(events, func(ev string) bool { return strings.HasPrefix(ev, "Warning PlanRefused") }) {
				t.Errorf("events %q: no PlanRefused", events)
			}
			if got := metricValue(c.metrics.errors.WithLabelValues(stageFirewall)); got != 1 {
				t.Errorf("ordinal_errors_total{stage=firewall} = %v", got)
			}
		})
	}
}

// newFakeController is a controller over a fake clientset holding objs (informers synced) whose
// writes go to api.
func newFakeController(t *testing.T, ctx context.Context, ref *module.Ref, api *fakeAPI, objs ...runtime.Object) *Controller {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	rc, err := newRESTClients(&rest.Config{Host: srv.URL}, snapshot.StatefulSetTarget)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Module: ref, Targets: []snapshot.Target{snapshot.StatefulSetTarget}, Workers: 1, StaleTimeout: time.Second, Now: time.Now}
	m, err := newManager(cfg, fake.NewClientset(objs...), rc)
	if err != nil {
		t.Fatal(err)
	}
	c := m.controllers[0]
	c.caches.all.start(ctx)
	t.Cleanup(c.caches.all.stop)
	if !c.caches.all.waitSynced(ctx) {
		t.Fatal("caches did not sync")
	}
	return c
}

func metricValue(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		return -1
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	return -1
}

package controller

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/wasm"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
)

// A set chooses its module with ordinal.dev/module: the extended module pauses a set that asks for it
// (ordinal.dev/paused) where the active, faithful module creates its first pod; a set naming a
// module the controller lacks is left alone with an UnknownModule warning, and nothing is written.
func TestSetChoosesItsModule(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	refOf := func(code []byte) *module.Ref {
		m, err := loadModule(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		ref := &module.Ref{}
		ref.Install(m, module.InfoOf(m), func() { m.Close(ctx) })
		return ref
	}
	active := refOf(embedded.Module())
	registry := module.NewRegistry(loadModule, map[string][]byte{"extended": embedded.ExtendedModule()})
	defer registry.Close()
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		wantCreate  bool
		wantEvent   string
	}{
		{"no choice: the active module", map[string]string{"ordinal.dev/paused": "true"}, true, ""},
		{"extended, paused", map[string]string{abi.AnnotationModule: "extended", "ordinal.dev/paused": "true"}, false, "Normal Paused"},
		{"extended, not paused", map[string]string{abi.AnnotationModule: "extended"}, true, ""},
		{"unknown module", map[string]string{abi.AnnotationModule: "nope"}, false, "Warning UnknownModule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := defaulted(t, kubetest.Set())
			set.Spec.Replicas = ptr.To[int32](1)
			set.Annotations = tc.annotations
			objs := []runtime.Object{set}
			api := &fakeAPI{}
			c := newFakeController(t, ctx, active, api, objs...)
			c.cfg.Modules = registry
			rec := record.NewFakeRecorder(20)
			c.recorder = rec
			if _, err := c.sync(ctx, "ns/web"); err != nil {
				t.Fatal(err)
			}
			created := false
			for _, r := range api.reqs {
				if r.Method == "POST" && strings.HasSuffix(r.Path, "/pods") {
					created = true
				}
				if tc.wantEvent == "Warning UnknownModule" {
					t.Errorf("a set naming an unknown module: %s %s", r.Method, r.Path)
				}
			}
			if created != tc.wantCreate {
				t.Errorf("pod created: %v, want %v (requests %v)", created, tc.wantCreate, api.reqs)
			}
			var events []string
			for len(rec.Events) > 0 {
				events = append(events, <-rec.Events)
			}
			found := tc.wantEvent == ""
			for _, e := range events {
				if tc.wantEvent != "" && strings.HasPrefix(e, tc.wantEvent) {
					found = true
				}
			}
			if !found {
				t.Errorf("events %q, want one %q", events, tc.wantEvent)
			}
			if tc.wantEvent == "Warning UnknownModule" && !strings.Contains(strings.Join(events, "\n"), `"extended"`) {
				t.Errorf("the UnknownModule event does not list the modules: %q", events)
			}
		})
	}
}

// defaulted is set as the API server stores it (host/kube's defaulting).
func defaulted(t *testing.T, set *appsv1.StatefulSet) *appsv1.StatefulSet {
	t.Helper()
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = kube.DefaultStatefulSetJSON(b); err != nil {
		t.Fatal(err)
	}
	var out appsv1.StatefulSet
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// The registry loads a module when it is first named, once, and refuses a name it lacks with
// module.ErrUnknownModule listing the names it has.
func TestRegistryLoadsOnFirstUse(t *testing.T) {
	ctx := context.Background()
	loads := 0
	reg := module.NewRegistry(func(ctx context.Context, code []byte) (*wasm.Module, error) {
		loads++
		return loadModule(ctx, code)
	}, map[string][]byte{"extended": embedded.ExtendedModule(), "faithful": embedded.Module()})
	defer reg.Close()
	if loads != 0 {
		t.Fatalf("%d modules loaded before any was named", loads)
	}
	a, err := reg.Get(ctx, "extended")
	if err != nil {
		t.Fatal(err)
	}
	b, err := reg.Get(ctx, "extended")
	if err != nil || a != b || loads != 1 {
		t.Errorf("second Get: same ref %v, %d loads, %v", a == b, loads, err)
	}
	if _, info := a.Load(); len(info.Describe.Extensions) == 0 || info.Source != "registry:extended" {
		t.Errorf("extended module info %+v", info)
	}
	if _, err := reg.Get(ctx, "nope"); !errors.Is(err, module.ErrUnknownModule) || !strings.Contains(err.Error(), `"extended", "faithful"`) {
		t.Errorf("unknown name: %v", err)
	}
	var none *module.Registry
	if _, err := none.Get(ctx, "extended"); !errors.Is(err, module.ErrUnknownModule) {
		t.Errorf("nil registry: %v", err)
	}
}

// Modules supplied at run time (a ConfigMap's NAME.wasm keys) are loaded through the check when first
// named; a refusal is kept until the bytes change; new bytes replace the loaded module; a built-in name
// cannot be supplied; a name no longer supplied is unknown.
func TestRegistrySuppliedModules(t *testing.T) {
	ctx := context.Background()
	reg := module.NewRegistry(loadModule, map[string][]byte{"extended": embedded.ExtendedModule()})
	defer reg.Close()
	checks := 0
	refuse := false
	check := func(ctx context.Context, code []byte) (*wasm.Module, error) {
		checks++
		if refuse {
			return nil, errors.New("fails conformance case x")
		}
		return loadModule(ctx, code)
	}
	variant := readFile(t, variantModule)
	reg.Supply(check, map[string][]byte{"variant": variant, "extended": []byte("not this")})
	if n := reg.Names(); n != `"extended", "variant"` {
		t.Errorf("names %s", n)
	}
	ref, err := reg.Get(ctx, "variant")
	if err != nil || checks != 1 {
		t.Fatalf("supplied module: %v, %d checks", err, checks)
	}
	if _, info := ref.Load(); !strings.HasSuffix(info.Describe.ModuleVersion, "+maxunavailable-off") {
		t.Errorf("variant info %+v", info)
	}
	if r, _ := reg.Get(ctx, "extended"); r == nil || checks != 1 {
		t.Errorf("the built-in extended module was replaced or checked (%d checks)", checks)
	}
	// Same bytes again: kept, not checked again. Other bytes: checked anew, refused, and the refusal kept.
	reg.Supply(check, map[string][]byte{"variant": variant})
	if again, _ := reg.Get(ctx, "variant"); again != ref || checks != 1 {
		t.Errorf("unchanged module reloaded (%d checks)", checks)
	}
	refuse = true
	reg.Supply(check, map[string][]byte{"variant": embedded.Module()})
	for range 2 {
		if _, err := reg.Get(ctx, "variant"); !errors.Is(err, module.ErrModuleRefused) || !strings.Contains(err.Error(), "fails conformance case x") {
			t.Errorf("refused module: %v", err)
		}
	}
	if checks != 2 {
		t.Errorf("%d checks, want the refused bytes checked once", checks)
	}
	reg.Supply(check, nil)
	if _, err := reg.Get(ctx, "variant"); !errors.Is(err, module.ErrUnknownModule) {
		t.Errorf("a module no longer supplied: %v", err)
	}
}

// A supplied module's gate runs without the registry's lock: while it runs, a set naming another module
// gets it, and a Get of the same name waits for that one load rather than starting another.
func TestRegistryGateDoesNotBlockOtherModules(t *testing.T) {
	ctx := context.Background()
	reg := module.NewRegistry(loadModule, map[string][]byte{"extended": embedded.ExtendedModule()})
	defer reg.Close()
	entered, release := make(chan struct{}), make(chan struct{})
	var checks atomic.Int32
	reg.Supply(func(ctx context.Context, code []byte) (*wasm.Module, error) {
		if checks.Add(1) == 1 {
			close(entered)
		}
		<-release
		return loadModule(ctx, code)
	}, map[string][]byte{"variant": readFile(t, variantModule)})
	first := make(chan error, 2)
	for range 2 {
		go func() { _, err := reg.Get(ctx, "variant"); first <- err }()
	}
	<-entered
	if _, err := reg.Get(ctx, "extended"); err != nil { // would wait for release if the gate held the lock
		t.Fatal(err)
	}
	close(release)
	for range 2 {
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	}
	if n := checks.Load(); n != 1 {
		t.Errorf("%d gate runs for one supplied module", n)
	}
}

// Regression (issue 32, finding 1): a supplied module was gated on the first caller's context, so a
// webhook review's 3 s deadline ("reconcile exceeded the caller's deadline") was cached as the module's
// refusal until the ConfigMap changed. The gate runs on its own context: a caller past its deadline (here
// already past, and the gate held until that caller has given up) stops waiting and is told the module
// is still being checked; nothing is refused; the next caller gets the module, from that one gate.
func TestCallersDeadlineIsNeverCachedAsAModuleRefusal(t *testing.T) {
	reg := module.NewRegistry(loadModule, nil)
	defer reg.Close()
	release := make(chan struct{})
	var checks atomic.Int32
	reg.Supply(func(ctx context.Context, code []byte) (*wasm.Module, error) {
		checks.Add(1)
		select { // a gate on the caller's context would load (and fail) at once
		case <-release:
		case <-ctx.Done():
		}
		return loadModule(ctx, code)
	}, map[string][]byte{"copy": embedded.ExtendedModule()})
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	_, err := reg.Get(expired, "copy")
	if !errors.Is(err, wasm.ErrStillChecking) || errors.Is(err, module.ErrModuleRefused) ||
		!strings.Contains(err.Error(), `module "copy" is still being checked`) || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("a caller past its deadline: %v, want the module still being checked", err)
	}
	close(release)
	ref, err := reg.Get(context.Background(), "copy")
	if err != nil {
		t.Fatalf("the next caller: %v", err)
	}
	if _, info := ref.Load(); len(info.Describe.Extensions) == 0 {
		t.Errorf("the supplied copy of the extended module: %+v", info)
	}
	if n := checks.Load(); n != 1 {
		t.Errorf("%d gate runs, want the one the first caller started", n)
	}
}

// Regression (issue 32, finding 1), the hot swap: a check the controller's own end interrupts is no
// verdict on the candidate, so it is neither refused (no ModuleRefused, no refusal counted) nor skipped
// when offered again.
func TestCallersDeadlineIsNeverCachedAsASwapRefusal(t *testing.T) {
	ref := &module.Ref{}
	s, err := module.NewSwapper(module.SwapConfig{Ref: ref, Load: loadModule, Cases: gateCases(t)})
	if err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if swapped, err := s.Offer(ended, "test", embedded.Module(), nil); swapped || err == nil {
		t.Fatalf("an offer whose context ended: swapped %v, %v", swapped, err)
	}
	if st := s.Status(); st.Refusals != 0 || st.LastRefusal != nil {
		t.Fatalf("an interrupted check was counted as a refusal: %+v", st.LastRefusal)
	}
	if swapped, err := s.Offer(context.Background(), "test", embedded.Module(), nil); !swapped || err != nil {
		t.Fatalf("the same module offered again: swapped %v, %v", swapped, err)
	}
}

// A module withdrawn between a sync's lookup of it and its use (a supplied module whose ConfigMap changed: the
// registry empties the Ref the sync holds) fails the sync, to be retried with the module as it is then; it
// used to call a nil module and crash the controller (e2e TestChaos/fault-free/supplied-swap).
func TestSyncOfAWithdrawnModuleIsRetriedNotACrash(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set := defaulted(t, kubetest.Set())
	set.Spec.Replicas = ptr.To[int32](1)
	api := &fakeAPI{}
	withdrawn := &module.Ref{} // as Registry.Supply leaves the Ref of a module it replaced
	c := newFakeController(t, ctx, withdrawn, api, set)
	_, err := c.sync(ctx, "ns/web")
	if !errors.Is(err, errModuleWithdrawn) {
		t.Fatalf("sync: %v, want errModuleWithdrawn", err)
	}
	if len(api.reqs) != 0 {
		t.Errorf("requests %v: want none", api.reqs)
	}
}

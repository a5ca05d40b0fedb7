//go:build e2e

package e2e

// Hot swap of the reconcile module in a running `ordinal controller`, and the action firewall, on the
// real control plane. The controller runs with --module pointing at a file the test replaces (write to a
// temporary file, rename over); test modules come from host/controller/testdata/modules (build.sh).

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func modulesDir() string { return filepath.Join(cfg.root, "host", "controller", "testdata", "modules") }

func readModule(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read module: %v", err)
	}
	return b
}

func digestOf(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

// embeddedModule is the module bin/ordinal embeds (the committed host/embedded/ordinal.wasm).
func embeddedModule(t *testing.T) []byte {
	return readModule(t, filepath.Join(cfg.root, "host", "embedded", "ordinal.wasm"))
}

var (
	stdgoOnce sync.Once
	stdgoPath string
	stdgoErr  error
)

// equivalentModule rebuilds the guest with the standard Go toolchain (GOOS=wasip1): other bytes, other
// compiler, the same reconcile logic (it passes the same conformance cases).
func equivalentModule(t *testing.T) []byte {
	t.Helper()
	stdgoOnce.Do(func() {
		stdgoPath = filepath.Join(cfg.artifacts, "ordinal-stdgo.wasm")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-o", stdgoPath, "./guest")
		cmd.Dir = cfg.root
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			stdgoErr = fmt.Errorf("go build ./guest for wasip1: %v\n%s", err, out)
		}
	})
	if stdgoErr != nil {
		t.Fatal(stdgoErr)
	}
	return readModule(t, stdgoPath)
}

// moduleFile writes code to a file in the test's artifacts and returns its path.
func moduleFile(t *testing.T, code []byte) string {
	t.Helper()
	dir := filepath.Join(cfg.artifacts, dirSanitize.ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "module.wasm")
	replaceModule(t, p, code)
	return p
}

// replaceModule writes code over path atomically (temporary file + rename).
func replaceModule(t *testing.T, path string, code []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, code, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote module %s (%d bytes) to %s", digestOf(code), len(code), path)
}

// startSwapController starts a controller on the module file and waits until it is ready.
func startSwapController(t *testing.T, ctx context.Context, ns, modPath string, extra ...string) *controllerProc {
	t.Helper()
	// --timeout also bounds compiling a module (10 s by default): the standard-Go build these tests swap to
	// (4.9 MB) compiled for longer than that on a loaded 2-core machine and the swap was refused. What is
	// tested here is the swap, not the machine's speed (host/wasm's TestTimeoutBoundsCompile tests the bound).
	args := append([]string{"--module", modPath, "--module-poll-interval", "200ms", "--timeout", "2m"}, extra...)
	c := startController(t, ns, ctrlOpts{extraArgs: args})
	c.waitReady(ctx)
	return c
}

type moduleStatus struct {
	Active struct {
		Digest   string `json:"digest"`
		Source   string `json:"source"`
		Describe struct {
			Module, ModuleVersion string
			Features              map[string]bool
		} `json:"describe"`
	} `json:"active"`
	Swaps       int `json:"swaps"`
	Refusals    int `json:"refusals"`
	LastRefusal *struct {
		Digest, Reason, Detail string
	} `json:"lastRefusal"`
	LastSwap *struct {
		Load, Gate, Total time.Duration
	} `json:"lastSwap"`
}

func (c *controllerProc) moduleStatus(t *testing.T) moduleStatus {
	t.Helper()
	resp, err := http.Get("http://" + c.health + "/module")
	if err != nil {
		t.Fatalf("GET /module: %v", err)
	}
	defer resp.Body.Close()
	var st moduleStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatalf("decode /module: %v", err)
	}
	return st
}

// waitModule polls /module until cond holds.
func (c *controllerProc) waitModule(t *testing.T, desc string, timeout time.Duration, cond func(moduleStatus) bool) moduleStatus {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := c.moduleStatus(t)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) || c.hasExited() {
			t.Fatalf("controller %s: %s: not after %s; /module: %+v; log:\n%s", c.name, desc, timeout, st, c.logTail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *controllerProc) metricsText(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + c.metrics + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func (c *controllerProc) readyzVerbose(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + c.health + "/readyz?verbose")
	if err != nil {
		t.Fatalf("GET /readyz?verbose: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

var syncModuleRE = regexp.MustCompile(`"msg":"Synced StatefulSet".*"module":"([0-9a-f]+)"`)

// syncModules returns, in log order, the short digest of the module of every successful sync.
func (c *controllerProc) syncModules() []string {
	var out []string
	for _, l := range c.logLines(`"Synced StatefulSet"`) {
		if m := syncModuleRE.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

func short(digest string) string { return strings.TrimPrefix(digest, "sha256:")[:12] }

func moduleEvents(t *testing.T, ctx context.Context, ns, reason string) []corev1.Event {
	t.Helper()
	l, err := cfg.kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// ---------------------------------------------------------------------------------------------- tests

// Swap the module in the middle of a rolling update to a rebuilt, equivalent module (the guest built with
// the standard Go toolchain instead of TinyGo): the rollout continues on the new module and completes,
// every pod is replaced exactly once, in order, and no more than one at a time. A partition holds the
// rollout halfway (pods 4 and 3 replaced) until the swap has landed, so the swap is mid-rollout however long
// loading and gating take: the first version raced a minReadySeconds rollout and lost on a loaded machine.
func TestHotSwapMidRollout(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	equivalent := equivalentModule(t)
	base := embeddedModule(t)
	ns := newNamespace(t, ctx)
	modPath := moduleFile(t, base)
	c := startSwapController(t, ctx, ns, modPath)
	if st := c.moduleStatus(t); st.Active.Digest != digestOf(base) {
		t.Fatalf("active module %s, want %s", st.Active.Digest, digestOf(base))
	}
	tr := trackPods(t, ctx, ns, "swap", true)
	createSet(t, ctx, ns, newSet("swap", 5))
	rev1 := waitRolledOut(t, ctx, ns, "swap", 5).Status.UpdateRevision
	peak := tr.armMaxUnavailable(ctx, 5, 1)
	mark := tr.mark()
	patchSet(t, ctx, ns, "swap", fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:"v2"}}},"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":3}}}}`, annVersion))
	s := waitSet(t, ctx, ns, "swap", "pods 4 and 3 updated, held by partition 3", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		st := s.Status
		return st.ObservedGeneration >= s.Generation && st.UpdateRevision != rev1 && st.UpdatedReplicas == 2 && st.ReadyReplicas == 5
	})
	if s.Status.CurrentRevision != rev1 {
		t.Fatalf("current revision %s before the swap, want %s (the rollout is not halfway)", s.Status.CurrentRevision, rev1)
	}

	replaceModule(t, modPath, equivalent)
	st := c.waitModule(t, "the equivalent module active", 2*time.Minute, func(st moduleStatus) bool { return st.Active.Digest == digestOf(equivalent) })
	t.Logf("swapped with %d of 5 pods updated (load %s, gate %s, total %s)", s.Status.UpdatedReplicas, st.LastSwap.Load, st.LastSwap.Gate, st.LastSwap.Total)
	patchSet(t, ctx, ns, "swap", `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}`)

	s = waitRolledOut(t, ctx, ns, "swap", 5)
	tr.waitFor(ctx, "5 pods ready at the new revision", 30*time.Second, func(v podView) bool { return v.readyAt(5, s.Status.UpdateRevision) })
	tr.checkInvariants()
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 4, 3, 2, 1, 0)
	wantEachReplacedOnce(t, tr, 5)
	if p := peak(); p != 1 {
		t.Errorf("peak unavailable pods: %d, want 1", p)
	}
	wantNoAlreadyExists(t, ctx, ns, c)

	// Syncs ran on the old module, then only on the new one.
	mods := c.syncModules()
	oldShort, newShort := short(digestOf(base)), short(digestOf(equivalent))
	first := -1
	for i, m := range mods {
		if m == newShort && first < 0 {
			first = i
		}
		if first >= 0 && m != newShort {
			t.Errorf("sync %d ran on %s after the swap to %s", i, m, newShort)
		}
	}
	if first <= 0 || mods[0] != oldShort {
		t.Errorf("syncs by module: %v; want %s first, then %s", mods, oldShort, newShort)
	}
	t.Logf("syncs: %d on the old module, %d on the new", first, len(mods)-first)
	m := c.metricsText(t)
	if !strings.Contains(m, `digest="`+digestOf(equivalent)+`"`) || !strings.Contains(m, "ordinal_module_swaps_total 1") {
		t.Errorf("metrics do not show the swap:\n%s", swapGrep(m, "ordinal_module"))
	}
	if r := c.readyzVerbose(t); !strings.Contains(r, digestOf(equivalent)) {
		t.Errorf("/readyz?verbose does not name the active module: %s", r)
	}
	if out, _, code := runOrdinal(t, ctx, "version", "--controller", c.health); code != 0 || !strings.Contains(out, digestOf(equivalent)) {
		t.Errorf("ordinal version --controller: exit %d: %s", code, out)
	}
}

// Swap to broken modules in the middle of a rolling update: a truncated file (does not compile) and the
// hostile test module (fails the conformance cases) are refused, with an event and a metric each; the
// active module keeps running and the rollout completes, every pod replaced once.
func TestHotSwapBrokenModuleRefused(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	base := embeddedModule(t)
	ns := newNamespace(t, ctx)
	modPath := moduleFile(t, base)
	c := startSwapController(t, ctx, ns, modPath)
	tr := trackPods(t, ctx, ns, "broken", true)
	createSet(t, ctx, ns, newSet("broken", 4, minReady(2)))
	waitRolledOut(t, ctx, ns, "broken", 4)
	tr.armMaxUnavailable(ctx, 4, 1)
	mark := tr.mark()
	patchSet(t, ctx, ns, "broken", setVersion("v2"))

	replaceModule(t, modPath, base[:len(base)/3])
	st := c.waitModule(t, "the truncated module refused", time.Minute, func(st moduleStatus) bool { return st.Refusals == 1 })
	t.Logf("refused: %s: %s", st.LastRefusal.Reason, st.LastRefusal.Detail)
	if st.LastRefusal.Reason != "load" {
		t.Errorf("refusal reason %q, want load", st.LastRefusal.Reason)
	}
	hostile := readModule(t, filepath.Join(modulesDir(), "hostile.wasm"))
	replaceModule(t, modPath, hostile)
	st = c.waitModule(t, "the hostile module refused", time.Minute, func(st moduleStatus) bool { return st.Refusals == 2 })
	t.Logf("refused: %s: %s", st.LastRefusal.Reason, st.LastRefusal.Detail)
	if st.LastRefusal.Reason != "conformance" || st.LastRefusal.Digest != digestOf(hostile) {
		t.Errorf("last refusal %+v, want the hostile module refused for conformance", st.LastRefusal)
	}
	if st.Active.Digest != digestOf(base) || st.Swaps != 0 {
		t.Errorf("active module %s after %d swaps, want the original %s", st.Active.Digest, st.Swaps, digestOf(base))
	}

	s := waitRolledOut(t, ctx, ns, "broken", 4)
	tr.waitFor(ctx, "4 pods ready at the new revision", 30*time.Second, func(v podView) bool { return v.readyAt(4, s.Status.UpdateRevision) })
	tr.checkInvariants()
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 3, 2, 1, 0)
	wantEachReplacedOnce(t, tr, 4)
	for _, m := range c.syncModules() {
		if m != short(digestOf(base)) {
			t.Errorf("a sync ran on module %s", m)
		}
	}
	m := c.metricsText(t)
	for _, want := range []string{`ordinal_module_refusals_total{reason="load"} 1`, `ordinal_module_refusals_total{reason="conformance"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, swapGrep(m, "ordinal_module"))
		}
	}
	if evs := moduleEvents(t, ctx, ns, "ModuleRefused"); len(evs) != 2 {
		t.Errorf("%d ModuleRefused events, want 2", len(evs))
	} else {
		t.Logf("event on %s %s: %s", evs[0].InvolvedObject.Kind, evs[0].InvolvedObject.Name, evs[0].Message)
	}
	if r := c.readyzVerbose(t); !strings.Contains(r, "last refused: "+digestOf(hostile)) {
		t.Errorf("/readyz?verbose: %s", r)
	}
}

// Swap to a module with different but valid behaviour: the real guest built with
// MaxUnavailableStatefulSet off by default. A rollout with maxUnavailable 2 replaces two pods at a
// time on the shipped module; after the swap the next rollout replaces one at a time.
func TestHotSwapNewBehaviour(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	base := embeddedModule(t)
	variant := readModule(t, filepath.Join(modulesDir(), "ordinal-maxunavailable-off.wasm"))
	ns := newNamespace(t, ctx)
	modPath := moduleFile(t, base)
	c := startSwapController(t, ctx, ns, modPath)
	tr := trackPods(t, ctx, ns, "mu", true)
	createSet(t, ctx, ns, newSet("mu", 5, maxUnavailable(2)))
	waitRolledOut(t, ctx, ns, "mu", 5)

	peak := tr.armMaxUnavailable(ctx, 5, 2)
	patchSet(t, ctx, ns, "mu", setVersion("v2"))
	s := waitRolledOut(t, ctx, ns, "mu", 5)
	tr.waitFor(ctx, "5 pods ready at v2", 30*time.Second, func(v podView) bool { return v.readyAt(5, s.Status.UpdateRevision) })
	if p := peak(); p != 2 {
		t.Errorf("shipped module: peak unavailable %d, want 2 (maxUnavailable 2)", p)
	}

	replaceModule(t, modPath, variant)
	st := c.waitModule(t, "the variant active", 2*time.Minute, func(st moduleStatus) bool { return st.Active.Digest == digestOf(variant) })
	if st.Active.Describe.Features["MaxUnavailableStatefulSet"] {
		t.Fatalf("variant describes MaxUnavailableStatefulSet=true")
	}
	t.Logf("active: %s %s", st.Active.Describe.Module, st.Active.Describe.ModuleVersion)

	peak = tr.armMaxUnavailable(ctx, 5, 1)
	mark := tr.mark()
	patchSet(t, ctx, ns, "mu", setVersion("v3"))
	s = waitRolledOut(t, ctx, ns, "mu", 5)
	tr.waitFor(ctx, "5 pods ready at v3", 30*time.Second, func(v podView) bool { return v.readyAt(5, s.Status.UpdateRevision) })
	tr.checkInvariants()
	if p := peak(); p != 1 {
		t.Errorf("variant module: peak unavailable %d, want 1 (gate off: one at a time)", p)
	}
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 4, 3, 2, 1, 0)
}

// With the conformance gate bypassed (a test-only flag), the hostile module becomes active; the action
// firewall refuses each of its plans: the pod of another set it tries to delete survives, nothing of
// the set is touched (neither an image changed by a pod update nor a pod created with a hostPath), and the
// set gets PlanRefused warnings that name what each plan changes.
func TestHotSwapHostileModuleStoppedByFirewall(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	base := embeddedModule(t)
	hostile := readModule(t, filepath.Join(modulesDir(), "hostile.wasm"))
	ns := newNamespace(t, ctx)
	modPath := moduleFile(t, base)
	c := startSwapController(t, ctx, ns, modPath, "--insecure-skip-module-conformance")
	tr := trackPods(t, ctx, ns, "web", true)
	// Another set's pod, victim-0: the hostile module's delete-foreign-pod attack deletes it (the first
	// pod of web's snapshot not controlled by web, else a pod named victim-0).
	createSet(t, ctx, ns, newSet("web", 2))
	waitRolledOut(t, ctx, ns, "web", 2)
	createSet(t, ctx, ns, newSet("victim", 1))
	waitRolledOut(t, ctx, ns, "victim", 1)
	before := tr.uidsByName(ctx)
	vPod, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, "victim-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replaceModule(t, modPath, hostile)
	c.waitModule(t, "the hostile module active (gate bypassed)", time.Minute, func(st moduleStatus) bool { return st.Active.Digest == digestOf(hostile) })
	patchSet(t, ctx, ns, "web", `{"metadata":{"annotations":{"ordinal.dev/hostile":"delete-pvc"}}}`)
	deadline := time.Now().Add(time.Minute)
	for len(moduleEvents(t, ctx, ns, "PlanRefused")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no PlanRefused event; log:\n%s", c.logTail(20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	mark := tr.mark()
	patchSet(t, ctx, ns, "web", `{"metadata":{"annotations":{"ordinal.dev/hostile":"delete-foreign-pod"}}}`)
	// A positive signal, not a pause: the plan that deletes the foreign pod has been made and refused.
	deadline = time.Now().Add(time.Minute)
	for !refusedSaying(t, ctx, ns, "victim-0") {
		if time.Now().After(deadline) {
			t.Fatalf("no PlanRefused event for the foreign delete; log:\n%s", c.logTail(20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The attacks on the set's own pods: an image changed by a pod update on a set not annotated for in-place
	// updates, and a pod of the set created with the node's root mounted. Each is refused for what it changes.
	for _, a := range []struct{ attack, says string }{
		{"update-pod-image", "the image changes"},
		{"create-hostpath-pod", "spec.volumes"},
	} {
		patchSet(t, ctx, ns, "web", `{"metadata":{"annotations":{"ordinal.dev/hostile":"`+a.attack+`"}}}`)
		deadline = time.Now().Add(time.Minute)
		for !refusedSaying(t, ctx, ns, a.says) {
			if time.Now().After(deadline) {
				t.Fatalf("no PlanRefused event saying %q for %s; log:\n%s", a.says, a.attack, c.logTail(20))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if p, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, "victim-0", metav1.GetOptions{}); err != nil || p.UID != vPod.UID || p.DeletionTimestamp != nil {
		t.Errorf("victim-0 was touched: %v", err)
	}
	if steps := append(tr.stepsOf(stepTerminating, mark), tr.stepsOf(stepCreated, mark)...); len(steps) > 0 {
		t.Errorf("the hostile module's refused plans changed pods: %v", steps)
	}
	if now := tr.uidsByName(ctx); len(now) != len(before) || now["web-0"] != before["web-0"] || now["web-1"] != before["web-1"] {
		t.Errorf("web's pods changed: %v -> %v", before, now)
	}
	evs := moduleEvents(t, ctx, ns, "PlanRefused")
	t.Logf("%d PlanRefused events; first: %s", len(evs), evs[0].Message)
	m := c.metricsText(t)
	for _, rule := range []string{"kind-verb", "object"} {
		if !strings.Contains(m, `ordinal_plan_refusals_total{rule="`+rule+`"}`) {
			t.Errorf("no refusal counted for rule %s; metrics:\n%s", rule, swapGrep(m, "ordinal_plan_refusals_total", "ordinal_errors_total"))
		}
	}
	for _, name := range []string{"web-0", "web-1"} {
		p, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if img := p.Spec.Containers[0].Image; strings.Contains(img, "hostile") || len(p.Spec.Volumes) > 0 && p.Spec.Volumes[len(p.Spec.Volumes)-1].HostPath != nil {
			t.Errorf("%s was changed by a refused plan: image %s, volumes %+v", name, img, p.Spec.Volumes)
		}
	}
	for _, l := range c.logLines(`"msg":"Sync failed"`) {
		if !strings.Contains(l, "firewall") {
			t.Errorf("a sync failed for another reason: %s", l)
		}
	}
}

// refusedSaying: a PlanRefused event of the namespace says says.
func refusedSaying(t *testing.T, ctx context.Context, ns, says string) bool {
	for _, e := range moduleEvents(t, ctx, ns, "PlanRefused") {
		if strings.Contains(e.Message, says) {
			return true
		}
	}
	return false
}

func swapGrep(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

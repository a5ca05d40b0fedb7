//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestBenchCluster is `make bench-cluster` (skipped otherwise): the same rollouts driven once by
// `ordinal controller` (kube-controller-manager without its StatefulSet controller, as in every other
// e2e test) and once by kube-controller-manager's own StatefulSet controller, on this cluster. Each
// rollout creates the set and then changes its template three times, waiting for each to roll out.
// It prints, per rollout, the wall time and the CPU time (user+sys from /proc) of the ordinal process
// and of the whole kube-controller-manager process, each with its default API QPS.
// ORDINAL_BENCH_CLUSTER=small runs the 100-replica rollouts only (and TestBenchPolicies).
func TestBenchCluster(t *testing.T) {
	mode := os.Getenv("ORDINAL_BENCH_CLUSTER")
	if mode == "" {
		t.Skip("make bench-cluster runs this (ORDINAL_BENCH_CLUSTER=1)")
	}
	if mode == "policies" {
		t.Skip("ORDINAL_BENCH_CLUSTER=policies runs TestBenchPolicies only")
	}
	requireController(t)
	if got := kcm(t, "status"); got != kcmDefault {
		t.Fatalf("kube-controller-manager runs with --controllers=%s, want %s", got, kcmDefault)
	}
	type rollout struct {
		name     string
		replicas int32
		opts     []setOpt
	}
	rollouts := []rollout{
		{"Parallel, maxUnavailable 10%, 100 pods", 100, []setOpt{parallel, maxUnavailable(10)}},
		{"OrderedReady, 100 pods", 100, nil},
		{"Parallel, maxUnavailable 10%, 1000 pods", 1000, []setOpt{parallel, maxUnavailable(100)}},
	}
	if mode == "small" {
		rollouts = rollouts[:2]
	}
	type result struct {
		wall, cpu, kcmCPU time.Duration
	}
	ctx, cancel := context.WithTimeout(context.Background(), 140*time.Minute) // not testContext's 4 minutes
	t.Cleanup(cancel)
	run := func(r rollout, cpuOf func() time.Duration, ns string) result {
		name := "bench"
		k0, c0, t0 := processCPU(t, kcmPID(t)), cpuOf(), time.Now()
		// kube-controller-manager requeues a sync its informers are behind on with the error backoff,
		// which grows to minutes in a fast rollout: the waits are long enough for that.
		wait := func() { waitSet(t, ctx, ns, name, "rolled out", 30*time.Minute, rolledOut(r.replicas)) }
		createSet(t, ctx, ns, newSet(name, r.replicas, r.opts...))
		wait()
		for v := 2; v <= 4; v++ {
			patchSet(t, ctx, ns, name, setVersion(fmt.Sprintf("v%d", v)))
			wait()
		}
		return result{time.Since(t0), cpuOf() - c0, processCPU(t, kcmPID(t)) - k0}
	}

	ours := make([]result, len(rollouts))
	for i, r := range rollouts {
		ns := newNamespace(t, ctx)
		c := startController(t, ns, ctrlOpts{})
		c.waitReady(ctx)
		pid := c.cmd.Process.Pid
		ours[i] = run(r, func() time.Duration { return processCPU(t, pid) }, ns)
		c.stop()
		t.Logf("ordinal controller, %s: %s, CPU %s (kube-controller-manager meanwhile %s)", r.name, ours[i].wall.Round(time.Millisecond), ours[i].cpu, ours[i].kcmCPU)
	}

	restartKCM(t, kcmBuiltinSTS)
	theirs := make([]result, len(rollouts))
	for i, r := range rollouts {
		ns := newNamespace(t, ctx)
		theirs[i] = run(r, func() time.Duration { return processCPU(t, kcmPID(t)) }, ns)
		t.Logf("kube-controller-manager, %s: %s, CPU %s", r.name, theirs[i].wall.Round(time.Millisecond), theirs[i].cpu)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n== bench-cluster: create + 3 template changes per rollout; CPU = user+sys of the process\n")
	fmt.Fprintf(&b, "%-42s %12s %12s %14s %14s %7s %22s\n", "rollout", "ordinal", "KCM (own)", "ordinal CPU", "KCM CPU (own)", "x-cpu", "KCM CPU beside ordinal")
	for i, r := range rollouts {
		o, k := ours[i], theirs[i]
		fmt.Fprintf(&b, "%-42s %11.1fs %11.1fs %13.2fs %13.2fs %6.2fx %21.2fs\n", r.name, o.wall.Seconds(), k.wall.Seconds(),
			o.cpu.Seconds(), k.cpu.Seconds(), o.cpu.Seconds()/k.cpu.Seconds(), o.kcmCPU.Seconds())
	}
	t.Log(b.String())
	fmt.Println(b.String())
}

// TestBenchPolicies is the rest of `make bench-cluster` (ORDINAL_BENCH_CLUSTER=policies runs it alone): what
// a set's policies add to `ordinal controller`'s work on a real cluster. The same OrderedReady rollout as
// TestBenchCluster's (100 pods, create and three template changes), alternating twice between a set naming
// no policy and one naming the four shipped policies, each configured to allow every write — a window of
// the whole day, no pod with the handoff's role label, one zone (kwok's nodes have none), a
// PodDisruptionBudget of maxUnavailable 100% — so that both rollouts take the same path and the difference
// is the policies' calls, their context (the budgets and nodes listed at each sync that asks) and the pdb
// policy's spends (one budget status write per pod delete).
func TestBenchPolicies(t *testing.T) {
	if os.Getenv("ORDINAL_BENCH_CLUSTER") == "" {
		t.Skip("make bench-cluster runs this (ORDINAL_BENCH_CLUSTER=1)")
	}
	requireController(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	t.Cleanup(cancel)
	const replicas = 100
	type result struct {
		wall, cpu   time.Duration
		syncs, held float64
	}
	run := func(policies bool) result {
		ns := newNamespace(t, ctx)
		c := startController(t, ns, ctrlOpts{})
		c.waitReady(ctx)
		defer c.stop()
		set := newSet("bench", replicas)
		if policies {
			all := intstr.FromString("100%")
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "bench"},
				Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &all, Selector: set.Spec.Selector}}
			if _, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			set.Annotations = map[string]string{"ordinal.dev/policies": "handoff,window,zones,pdb", "window.ordinal.dev/allow": "00:00-24:00"}
		}
		pid := c.cmd.Process.Pid
		c0, t0 := processCPU(t, pid), time.Now()
		wait := func() { waitSet(t, ctx, ns, "bench", "rolled out", 30*time.Minute, rolledOut(replicas)) }
		createSet(t, ctx, ns, set)
		wait()
		for v := 2; v <= 4; v++ {
			patchSet(t, ctx, ns, "bench", setVersion(fmt.Sprintf("v%d", v)))
			wait()
		}
		r := result{wall: time.Since(t0), cpu: processCPU(t, pid) - c0}
		r.syncs, r.held = syncCounts(t, ctx, c)
		return r
	}
	var plain, with []result
	for range 2 {
		plain = append(plain, run(false))
		with = append(with, run(true))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n== bench-cluster, policies: OrderedReady, %d pods, create + 3 template changes; ordinal controller's CPU = user+sys\n", replicas)
	fmt.Fprintf(&b, "%-34s %10s %10s %8s %8s\n", "set", "wall", "CPU", "syncs", "held")
	var cp, cw time.Duration
	for i := range plain {
		for _, r := range []struct {
			name string
			res  result
		}{{"no policy", plain[i]}, {"handoff,window,zones,pdb", with[i]}} {
			fmt.Fprintf(&b, "%-34s %9.1fs %9.2fs %8.0f %8.0f\n", r.name, r.res.wall.Seconds(), r.res.cpu.Seconds(), r.res.syncs, r.res.held)
		}
		cp, cw = cp+plain[i].cpu, cw+with[i].cpu
	}
	fmt.Fprintf(&b, "the four policies add %.1f%% to the controller's CPU (sums of the alternating runs)\n", 100*(cw.Seconds()/cp.Seconds()-1))
	for _, r := range with {
		if r.held != 0 {
			t.Errorf("a policy held a write (%v held syncs): the rows would not take the same path", r.held)
		}
	}
	t.Log(b.String())
	fmt.Println(b.String())
}

// kcmPID is kube-controller-manager's pid, from the cluster's pid file (it changes on restarts).
func kcmPID(t *testing.T) int {
	t.Helper()
	run := os.Getenv("LOCALK8S_RUN")
	if run == "" {
		run = "/tmp/ordinal-localk8s"
	}
	b, err := os.ReadFile(filepath.Join(run, "pids", "3-kube-controller-manager.pid"))
	if err != nil {
		t.Fatalf("kube-controller-manager's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("kube-controller-manager's pid: %v", err)
	}
	return pid
}

// processCPU is the user+sys CPU time a process has used so far (/proc/PID/stat, clock ticks of 10 ms).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("CPU of %d: %v", pid, err)
	}
	// the command name (2nd field) is parenthesised and may hold spaces: count from after it
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

var syncsRE = regexp.MustCompile(`(?m)^ordinal_syncs_total\{result="([a-z_]+)"\} (\d+)$`)

// syncCounts are the controller's syncs so far (ordinal_syncs_total, every result) and those a policy held.
func syncCounts(t *testing.T, _ context.Context, c *controllerProc) (all, held float64) {
	t.Helper()
	for _, m := range syncsRE.FindAllStringSubmatch(c.metricsText(t), -1) {
		n, _ := strconv.ParseFloat(m[2], 64)
		all += n
		if m[1] == "held" {
			held = n
		}
	}
	return all, held
}

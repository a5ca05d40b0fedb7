//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
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
	if mode == "policies" || mode == "inplace" {
		t.Skip("ORDINAL_BENCH_CLUSTER=" + mode + " runs another bench only")
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
// is the policies' calls, their context (the budgets' and nodes' informers, and the syncs a budget's change
// brings) and the pdb policy's spends (one budget status write per pod delete). Each row's process first
// rolls a one-replica set (the same policies or none): the policies compile once per process. ORDINAL_BENCH_PROFILE=DIR writes each row's
// controller CPU profile (its first 25 s) there.
func TestBenchPolicies(t *testing.T) {
	if m := os.Getenv("ORDINAL_BENCH_CLUSTER"); m == "" || m == "inplace" {
		t.Skip("make bench-cluster runs this (ORDINAL_BENCH_CLUSTER=1)")
	}
	requireController(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	t.Cleanup(cancel)
	const replicas = 100
	type result struct {
		wall, cpu   time.Duration
		syncs, held float64
		calls       float64       // policy calls (ordinal_policy_duration_seconds, every policy)
		callTime    time.Duration // their time: the input written, the call, the answer checked
	}
	run := func(policies bool) result {
		ns := newNamespace(t, ctx)
		profile := os.Getenv("ORDINAL_BENCH_PROFILE") // a directory: each row's CPU profile (the first 25 s)
		var o ctrlOpts
		if profile != "" {
			o.extraArgs = []string{"--profiling"}
		}
		c := startController(t, ns, o)
		c.waitReady(ctx)
		defer c.stop()
		if profile != "" {
			name := "plain"
			if policies {
				name = "policies"
			}
			go func() {
				resp, err := http.Get("http://" + c.metrics + "/debug/pprof/profile?seconds=25")
				if err != nil {
					t.Logf("profile: %v", err)
					return
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				_ = os.WriteFile(filepath.Join(profile, name+"-"+ns+".pprof"), b, 0o644)
			}()
		}
		named := func(name string, n int32) *appsv1.StatefulSet {
			set := newSet(name, n)
			if policies {
				all := intstr.FromString("100%")
				pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &all, Selector: set.Spec.Selector}}
				if _, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				set.Annotations = map[string]string{"ordinal.dev/policies": "handoff,window,zones,pdb", "window.ordinal.dev/allow": "00:00-24:00"}
			}
			return set
		}
		// What a process does once: a one-replica set rolled first compiles the policies (about 0.6 s of
		// CPU for the four) and starts the budgets' and nodes' informers; the rows measure what follows.
		createSet(t, ctx, ns, named("warm", 1))
		waitSet(t, ctx, ns, "warm", "rolled out", 5*time.Minute, rolledOut(1))
		patchSet(t, ctx, ns, "warm", setVersion("v2"))
		waitSet(t, ctx, ns, "warm", "rolled out", 5*time.Minute, rolledOut(1))
		set := named("bench", replicas)
		pid := c.cmd.Process.Pid
		s0, h0 := syncCounts(t, ctx, c)
		n0, d0 := policyCalls(t, c)
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
		r.syncs, r.held = r.syncs-s0, r.held-h0
		n1, d1 := policyCalls(t, c)
		r.calls, r.callTime = n1-n0, d1-d0
		return r
	}
	var plain, with []result
	for range 2 {
		plain = append(plain, run(false))
		with = append(with, run(true))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n== bench-cluster, policies: OrderedReady, %d pods, create + 3 template changes; ordinal controller's CPU = user+sys\n", replicas)
	fmt.Fprintf(&b, "%-26s %8s %8s %7s %5s %7s %10s %13s\n", "set", "wall", "CPU", "syncs", "held", "calls", "per call", "CPU per sync")
	var cp, cw, calls time.Duration
	var syncs, n float64
	for i := range plain {
		for _, r := range []struct {
			name string
			res  result
		}{{"no policy", plain[i]}, {"handoff,window,zones,pdb", with[i]}} {
			per := "-"
			if r.res.calls > 0 {
				per = fmt.Sprintf("%.3fms", r.res.callTime.Seconds()*1000/r.res.calls)
			}
			fmt.Fprintf(&b, "%-26s %7.1fs %7.2fs %7.0f %5.0f %7.0f %10s %11.2fms\n", r.name, r.res.wall.Seconds(), r.res.cpu.Seconds(),
				r.res.syncs, r.res.held, r.res.calls, per, r.res.cpu.Seconds()*1000/r.res.syncs)
		}
		cp, cw, calls = cp+plain[i].cpu, cw+with[i].cpu, calls+with[i].callTime
		syncs, n = syncs+plain[i].syncs, n+with[i].calls
	}
	perSync := cp.Seconds() / syncs // the controller's CPU per sync without policies
	fmt.Fprintf(&b, "a policy call: %.3f ms, %.1f%% of a sync's CPU without policies (%.2f ms); the four policies, their context and\n",
		calls.Seconds()*1000/n, 100*calls.Seconds()/n/perSync, perSync*1000)
	fmt.Fprintf(&b, "spends add %.1f%% to the controller's CPU (sums of the alternating runs)\n", 100*(cw.Seconds()/cp.Seconds()-1))
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

var policyCallsRE = regexp.MustCompile(`(?m)^ordinal_policy_duration_seconds_(sum|count)\{policy="[^"]*"\} (\S+)$`)

// policyCalls are the controller's policy calls so far and their time (ordinal_policy_duration_seconds).
func policyCalls(t *testing.T, c *controllerProc) (n float64, d time.Duration) {
	t.Helper()
	var sum float64
	for _, m := range policyCallsRE.FindAllStringSubmatch(c.metricsText(t), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		if m[1] == "sum" {
			sum += v
		} else {
			n += v
		}
	}
	return n, time.Duration(sum * float64(time.Second))
}

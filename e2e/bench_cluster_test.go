//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBenchCluster is `make bench-cluster` (skipped otherwise): the same rollouts driven once by
// `ordinal controller` (kube-controller-manager without its StatefulSet controller, as in every other
// e2e test) and once by kube-controller-manager's own StatefulSet controller, on this cluster. Each
// rollout creates the set and then changes its template three times, waiting for each to roll out.
// It prints, per rollout, the wall time and the CPU time (user+sys from /proc) of the ordinal process
// and of the whole kube-controller-manager process, each with its default API QPS.
// ORDINAL_BENCH_CLUSTER=small runs the 100-replica rollouts only.
func TestBenchCluster(t *testing.T) {
	mode := os.Getenv("ORDINAL_BENCH_CLUSTER")
	if mode == "" {
		t.Skip("make bench-cluster runs this (ORDINAL_BENCH_CLUSTER=1)")
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

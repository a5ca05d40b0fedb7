//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ordinal-dev/ordinal/host/controller"
)

// TestBenchShardMemory is `make bench-shards` (issue 34 item 3; skipped otherwise): what a sharded replica
// caches, in memory. SHARD_BENCH_SETS sets (default 60) of SHARD_BENCH_PODS kwok pods each (default 50), one
// set per namespace, are created under one unsharded replica and rolled out; then, the pods in place and
// nothing changing, a fresh unsharded replica runs until its caches hold them all and its queue is empty, and
// its memory is read; then two replicas with --shards 8 run together, each until its caches hold what it
// should (its shards' pods where the API server filters by shard, all of them otherwise) and its queue is
// empty, and theirs is read. Memory: VmRSS, and the Go heap in use (go_memstats_heap_inuse_bytes), the median
// of 10 samples a second apart. Figures only: nothing here is timed.
func TestBenchShardMemory(t *testing.T) {
	if os.Getenv("ORDINAL_BENCH_SHARDS") == "" {
		t.Skip("make bench-shards runs this (ORDINAL_BENCH_SHARDS=1)")
	}
	requireController(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	t.Cleanup(cancel)
	sets, perSet := envInt(t, "SHARD_BENCH_SETS", 60), envInt(t, "SHARD_BENCH_PODS", 50)
	run := fmt.Sprintf("%04d", rand.IntN(10000))
	const label = "e2e.ordinal.dev/bench-shards"
	selector := label + "=" + run
	leaseNs := newNamespace(t, ctx)
	namespaces := make([]string, sets)
	for i := range namespaces {
		// the varying part first: FNV-1a's high bits, the shard, barely move with a name's last characters
		namespaces[i] = newNamespaceNamed(t, ctx, fmt.Sprintf("%03d-e2e-bench-shards-%s", i, run))
	}
	labelled := func(s *appsv1.StatefulSet) {
		s.Labels = map[string]string{label: run}
		s.Spec.Template.Labels[label] = run
	}

	creator := startController(t, leaseNs, ctrlOpts{identity: "creator", everyNamespace: true, selector: selector, workers: 5})
	creator.waitReady(ctx)
	parallelDo(namespaces, func(ns string) { createSet(t, ctx, ns, newSet("db", int32(perSet), parallel, labelled)) })
	for _, ns := range namespaces {
		waitSet(t, ctx, ns, "db", "rolled out", 60*time.Minute, rolledOut(int32(perSet)))
	}
	creator.stop()

	profiling := []string{"--profiling"} // /debug/pprof/heap?gc=1 collects the garbage before a reading
	one := startController(t, leaseNs, ctrlOpts{identity: "unsharded", everyNamespace: true, selector: selector, extraArgs: profiling})
	one.waitReady(ctx)
	oneMem := settledMemory(t, ctx, one, sets*perSet)
	one.stop()

	a, b := "bench-a-"+run, "bench-b-"+run
	ra := startController(t, leaseNs, ctrlOpts{identity: a, shards: testShards, leaseID: shardLeaseID, selector: selector, extraArgs: profiling})
	rb := startController(t, leaseNs, ctrlOpts{identity: b, shards: testShards, leaseID: shardLeaseID, selector: selector, extraArgs: profiling})
	ra.waitReady(ctx)
	rb.waitReady(ctx)
	waitShardHolders(t, ctx, leaseNs, []string{a, b})
	probe, err := cfg.kc.CoreV1().Pods("").List(ctx, metav1.ListOptions{ShardSelector: controller.ShardSelector(0, testShards), Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	filtered := probe.ShardInfo != nil
	held := map[string]int{} // replica -> its namespaces
	for _, ns := range namespaces {
		held[controller.PreferredOwner(controllerShardOf(ns), []string{a, b})]++
	}
	want := func(id string) int {
		if !filtered {
			return sets * perSet
		}
		return held[id] * perSet
	}
	memA, memB := settledMemory(t, ctx, ra, want(a)), settledMemory(t, ctx, rb, want(b))

	var out strings.Builder
	fmt.Fprintf(&out, "%d sets x %d pods in %d namespaces; the API server filters by shard: %v\n", sets, perSet, sets, filtered)
	fmt.Fprintf(&out, "%-34s %8s %10s %10s\n", "replica", "pods", "RSS", "heap inuse")
	row := func(name string, m memory) {
		fmt.Fprintf(&out, "%-34s %8d %6.0f MiB %6.0f MiB\n", name, m.pods, m.rss/(1<<20), m.heap/(1<<20))
	}
	row("unsharded (every namespace)", oneMem)
	row(fmt.Sprintf("--shards %d, replica a (%d ns)", testShards, held[a]), memA)
	row(fmt.Sprintf("--shards %d, replica b (%d ns)", testShards, held[b]), memB)
	t.Log(out.String())
	fmt.Println(out.String())
	ra.stop()
	rb.stop()
}

type memory struct {
	pods      int
	rss, heap float64 // bytes
}

// settledMemory waits until the replica's caches hold pods pods and its queue is empty, then collects its
// garbage (a replica starting first holds every shard until the other is live, and gives half back) and
// reads its memory: the median of 10 samples a second apart, from 20 s after (the runtime returns freed pages
// to the system in the background).
func settledMemory(t *testing.T, ctx context.Context, p *controllerProc, pods int) memory {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 20*time.Minute, true, func(context.Context) (bool, error) {
		text := p.metricsText(t)
		got = metricOf(text, `ordinal_cached_objects{resource="pods"}`) + " pods, queue " + metricOf(text, "ordinal_queue_depth")
		return got == strconv.Itoa(pods)+" pods, queue 0", nil
	})
	if err != nil {
		t.Fatalf("%s: caches and queue %s, want %d pods, queue 0", p.name, got, pods)
	}
	if _, err := httpText(http.DefaultClient, "http://"+p.metrics+"/debug/pprof/heap?gc=1"); err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	time.Sleep(20 * time.Second)
	var rssS, heapS []float64
	for range 10 {
		time.Sleep(time.Second)
		rssS = append(rssS, rss(t, p.cmd.Process.Pid))
		h, _ := strconv.ParseFloat(metricOf(p.metricsText(t), "go_memstats_heap_inuse_bytes"), 64)
		heapS = append(heapS, h)
	}
	slices.Sort(rssS)
	slices.Sort(heapS)
	return memory{pods: pods, rss: rssS[len(rssS)/2], heap: heapS[len(heapS)/2]}
}

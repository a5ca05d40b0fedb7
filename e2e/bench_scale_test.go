//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/ordinal-dev/ordinal/host/controller"
)

// TestBenchScale is `make bench-scale` (issue 34 item 1; skipped otherwise): many sets at once, run under
// `ordinal controller` (kube-controller-manager without its StatefulSet controller, as in every other e2e
// test) and under kube-controller-manager's own StatefulSet controller, alternating SCALE_ROUNDS times
// (default 1). Each run, in namespaces of its own (deleted, and gone, before the other controller starts):
// SCALE_SETS sets (default 200) of SCALE_PODS_PER_SET pods (default 10), Parallel with maxUnavailable 20%,
// spread round-robin over SCALE_NAMESPACES namespaces (default 1), created at once and waited for; then
// SCALE_WAVES waves (default 2) in which every set's template changes at once and every fourth set is also
// scaled by +2 (and back in the next wave). It prints, side by side: the controller's RSS once the sets
// settled and per cached pod (growth over the RSS before the sets, per pod), CPU, sync latency p50/p99
// (workqueue_work_duration_seconds of the sets' queue: the same histogram in both), queue depth
// (workqueue_depth, sampled each second), and the time from each set's edit to its rollout complete. Each
// controller runs with SCALE_WORKERS concurrent syncs (default 5, kube-controller-manager's
// --concurrent-statefulset-syncs default) and its own default API rate.
//
// SCALE_REPLICAS=R (issue 34 item 4) compares instead one replica of `ordinal controller --shards S` with R
// replicas sharing the S shards (SCALE_SHARDS, default 4R), on the same sets, alternating: the sets' shards
// are their namespaces', so spread them (SCALE_NAMESPACES, e.g. 16). The figures add each replica's RSS, CPU,
// syncs and shards held. All replicas run on this machine's cores beside the API server: what this shows is
// how the work divides, not a speedup.
func TestBenchScale(t *testing.T) {
	if os.Getenv("ORDINAL_BENCH_SCALE") == "" {
		t.Skip("make bench-scale runs this (ORDINAL_BENCH_SCALE=1)")
	}
	requireController(t)
	if got := kcm(t, "status"); got != kcmDefault {
		t.Fatalf("kube-controller-manager runs with --controllers=%s, want %s", got, kcmDefault)
	}
	sc := scaleConfig{sets: envInt(t, "SCALE_SETS", 200), perSet: envInt(t, "SCALE_PODS_PER_SET", 10),
		waves: envCount(t, "SCALE_WAVES", 2), workers: envInt(t, "SCALE_WORKERS", 5),
		namespaces: envInt(t, "SCALE_NAMESPACES", 1), replicas: envInt(t, "SCALE_REPLICAS", 0),
		rest: time.Duration(envCount(t, "SCALE_REST_SECONDS", 240)) * time.Second}
	if sc.namespaces > sc.sets {
		t.Fatalf("SCALE_NAMESPACES=%d: more namespaces than sets (%d)", sc.namespaces, sc.sets)
	}
	rounds := envInt(t, "SCALE_ROUNDS", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 170*time.Minute) // not testContext's 4 minutes
	t.Cleanup(cancel)
	var ours, theirs []scaleResult
	if sc.replicas > 0 {
		if sc.replicas < 2 {
			t.Fatalf("SCALE_REPLICAS=%d: want 2 or more (compared with one)", sc.replicas)
		}
		sc.shards = envInt(t, "SCALE_SHARDS", 4*sc.replicas)
		for r := range rounds { // one replica first in odd rounds, last in even ones: the machine's load drifts
			ours, theirs = append(ours, scaleResult{}), append(theirs, scaleResult{})
			for _, many := range []bool{r%2 == 1, r%2 == 0} {
				if many {
					theirs[r] = sc.runReplicas(t, ctx, sc.replicas, fmt.Sprintf("round %d, %d replicas", r+1, sc.replicas))
				} else {
					ours[r] = sc.runReplicas(t, ctx, 1, fmt.Sprintf("round %d, 1 replica", r+1))
				}
			}
		}
		out := sc.table([2]string{"ordinal, 1 replica", fmt.Sprintf("ordinal, %d replicas", sc.replicas)}, ours, theirs)
		t.Log(out)
		fmt.Println(out)
		return
	}
	// SCALE_CONTROLLERS=ordinal or kcm runs one side only (a run of tens of thousands of pods lost to the
	// machine can be redone alone); the table then shows "-" for the other.
	only := os.Getenv("SCALE_CONTROLLERS")
	if only != "" && only != "ordinal" && only != "kcm" {
		t.Fatalf("SCALE_CONTROLLERS=%q: want ordinal, kcm or unset (both)", only)
	}
	for r := range rounds {
		ours, theirs = append(ours, scaleResult{}), append(theirs, scaleResult{})
		if only != "kcm" {
			var c *controllerProc
			var leaseNs []string
			nss, run := sc.newNamespaces(t, ctx)
			if sc.namespaces == 1 {
				c = startController(t, nss[0], ctrlOpts{workers: sc.workers})
				c.waitReady(ctx)
			} else { // every namespace (and the run's sets alone): the single leader of --shards 1
				leaseNs = append(leaseNs, newNamespace(t, ctx))
				c = startShardReplicaWith(t, ctx, leaseNs[0], "ordinal", run, ctrlOpts{shards: 1, workers: sc.workers})
			}
			ours[r] = sc.run(t, ctx, nss, run, ordinalProcs(c))
			t.Logf("round %d, ordinal controller: %s", r+1, ours[r])
			c.stop()
			sc.deleteNamespaces(t, ctx, append(nss, leaseNs...))
		}
		if only != "ordinal" {
			restartKCM(t, kcmBuiltinSTS)
			nss, run := sc.newNamespaces(t, ctx)
			theirs[r] = sc.run(t, ctx, nss, run, scaleProc{name: "kube-controller-manager", queue: "statefulset",
				procs: []measured{{pid: kcmPID(t), metrics: func() (string, error) {
					return httpText(insecureClient, "https://127.0.0.1:"+kcmPort(t)+"/metrics")
				}}}})
			t.Logf("round %d, kube-controller-manager: %s", r+1, theirs[r])
			sc.deleteNamespaces(t, ctx, nss)
			restartKCM(t, kcmDefault)
		}
	}
	out := sc.table([2]string{"ordinal", "KCM (own controller)"}, ours, theirs)
	t.Log(out)
	fmt.Println(out)
}

type scaleConfig struct {
	sets, perSet, waves, workers int
	namespaces                   int           // the sets spread round-robin over them
	replicas, shards             int           // SCALE_REPLICAS (0: ordinal against kube-controller-manager) and SCALE_SHARDS
	rest                         time.Duration // SCALE_REST_SECONDS: the wait after the last rollout before "at rest"
}

// newNamespaces creates a run's namespaces: newNamespace's one, or sc.namespaces named after the run, the
// i-th in shard i mod sc.shards when sharded (FNV-1a spreads names differing only at their end poorly:
// docs/scale.md "Sharded replicas"), so that the sets divide evenly over the shards. The run labels the sets and
// their pods when there are several namespaces (the controller's --selector: it watches them all).
func (sc scaleConfig) newNamespaces(t *testing.T, ctx context.Context) (nss []string, run string) {
	t.Helper()
	if sc.namespaces == 1 && sc.replicas == 0 {
		return []string{newNamespace(t, ctx)}, ""
	}
	run = fmt.Sprintf("%04d", rand.IntN(10000))
	for n := 0; len(nss) < sc.namespaces; n++ {
		name := fmt.Sprintf("%d-bench-%s", n, run)
		if sc.shards > 1 && controller.ShardOf(name, sc.shards) != len(nss)%sc.shards {
			continue
		}
		nss = append(nss, newNamespaceNamed(t, ctx, name))
	}
	return nss, run
}

// deleteNamespaces deletes a run's namespaces, once the run is over and its figures logged, and waits until
// they are gone: at 20,000 pods, 5 to more than 12 minutes here. (The 20,000-pod run's namespace vanishing 24
// minutes in, "deleted by an unknown client", was this: the run had just ended, and its figures were logged
// only after the deletion.)
func (sc scaleConfig) deleteNamespaces(t *testing.T, ctx context.Context, nss []string) {
	t.Helper()
	t.Logf("the run is over: deleting its namespaces %s", strings.Join(nss, ", "))
	parallelDo(nss, func(ns string) { deleteNamespace(t, ctx, ns) })
}

// runReplicas runs the sets under n replicas of `ordinal controller --shards sc.shards` (default Lease
// terms), started and holding their shards before the sets are created.
func (sc scaleConfig) runReplicas(t *testing.T, ctx context.Context, n int, desc string) scaleResult {
	t.Helper()
	leaseNs := newNamespace(t, ctx)
	nss, run := sc.newNamespaces(t, ctx)
	var cs []*controllerProc
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("bench-%s-%d", run, i))
		cs = append(cs, startShardReplicaWith(t, ctx, leaseNs, ids[i], run, ctrlOpts{shards: sc.shards, workers: sc.workers}))
	}
	waitShardHoldersOf(t, ctx, leaseNs, ids, sc.shards)
	res := sc.run(t, ctx, nss, run, ordinalProcs(cs...))
	for i := range sc.sets { // set i is in nss[i mod len(nss)]; its shard's preferred replica syncs it
		owner := controller.PreferredOwner(controller.ShardOf(nss[i%len(nss)], sc.shards), ids)
		res.replicas[slices.Index(ids, owner)].sets++
	}
	t.Logf("%s: %s", desc, res)
	for _, c := range cs {
		c.stop()
	}
	sc.deleteNamespaces(t, ctx, append(nss, leaseNs))
	return res
}

// scaleProc is what a run measures: one controller process, or the replicas of a sharded run (CPU, RSS and
// histograms summed; each replica's figures kept too).
type scaleProc struct {
	name    string
	ordinal bool   // ordinal's own metrics too (ordinal_sync_duration_seconds, ordinal_shards_held)
	queue   string // the sets' work queue (workqueue_*{name})
	procs   []measured
}

type measured struct {
	pid     int
	metrics func() (string, error)
}

func ordinalProcs(cs ...*controllerProc) scaleProc {
	p := scaleProc{name: "ordinal", ordinal: true, queue: "ordinal-statefulset"}
	for _, c := range cs {
		p.procs = append(p.procs, measured{pid: c.cmd.Process.Pid,
			metrics: func() (string, error) { return httpText(http.DefaultClient, "http://"+c.metrics+"/metrics") }})
	}
	return p
}

func (p scaleProc) cpu(t *testing.T) (sum time.Duration, each []time.Duration) {
	t.Helper()
	for _, m := range p.procs {
		c := processCPU(t, m.pid)
		sum, each = sum+c, append(each, c)
	}
	return sum, each
}

func (p scaleProc) rss(t *testing.T) (sum float64, each []float64) {
	t.Helper()
	for _, m := range p.procs {
		r := rss(t, m.pid)
		sum, each = sum+r, append(each, r)
	}
	return sum, each
}

// histogram is the processes' histogram name{name=queue} (any labels when queue is ""), summed, and each one's.
func (p scaleProc) histogram(t *testing.T, name, queue string) (sum hist, each []hist) {
	t.Helper()
	for i, m := range p.procs {
		text, err := m.metrics()
		if err != nil {
			t.Fatalf("%s's metrics (process %d): %v", p.name, i+1, err)
		}
		h := histogramOf(text, name, queue)
		if len(h.le) == 0 {
			t.Fatalf("%s's metrics (process %d) have no %s{name=%q}", p.name, i+1, name, queue)
		}
		each = append(each, h)
		if i == 0 {
			sum = h
		} else {
			sum = sum.plus(h)
		}
	}
	return sum, each
}

type scaleResult struct {
	pods                     int
	ordinal                  bool          // ordinal's run (its own metrics read)
	create, edits            time.Duration // wall: all sets created and rolled out; all waves
	rss0, rssSettled         float64       // bytes: before the sets, once created and settled
	rssPeak                  float64
	rssRest                  float64 // bytes: sc.rest after the last rollout
	heap0, heapRest          float64 // go_gc_heap_live_bytes (summed) before the sets and at rest
	setCaches                float64 // ordinal_set_caches then (ordinal only)
	cpuCreate, cpuEdits      time.Duration
	syncs                    float64 // work items processed during the waves
	syncP50, syncP99         time.Duration
	depthMax, depthMean      float64 // during creation and the waves
	editP50, editP99, editMx time.Duration
	kcmBeside                float64       // kube-controller-manager's RSS growth meanwhile, in ordinal's runs
	kcmCPUBeside             time.Duration // and its CPU (creation and waves)
	ownP50, ownP99           time.Duration // ordinal_sync_duration_seconds (finer buckets), ordinal only
	ownSyncs                 float64       // and its count: syncs done (a sharded replica's queue drops other replicas' keys)
	phase                    time.Duration // wall of the phase the syncs are counted in: the waves, or the creation
	replicas                 []replicaResult
}

// replicaResult is one process's share of a run.
type replicaResult struct {
	rss0, rssSettled    float64
	cpuCreate, cpuEdits time.Duration
	syncs               float64 // ordinal_sync_duration_seconds' count over the phase
	shards              float64 // ordinal_shards_held at the end
	sets                int     // the sets in the shards it prefers (runReplicas)
}

func (r scaleResult) String() string {
	return fmt.Sprintf("%d pods: created in %s, waves %s; RSS %.0f MiB (%.1f KiB/pod), at rest %.0f MiB (%.1f KiB/pod), heap live at rest %.1f KiB/pod; CPU %s + %s; sync p50 %s p99 %s; depth max %.0f; edit->done p50 %s p99 %s",
		r.pods, r.create.Round(time.Second), r.edits.Round(time.Second), r.rssSettled/(1<<20), r.perPod()/1024,
		r.rssRest/(1<<20), r.perPodAtRest()/1024, r.heapPerPodAtRest()/1024, r.cpuCreate, r.cpuEdits,
		r.syncP50, r.syncP99, r.depthMax, r.editP50.Round(time.Millisecond), r.editP99.Round(time.Millisecond))
}

func (r scaleResult) perPod() float64 { return (r.rssSettled - r.rss0) / float64(r.pods) }

func (r scaleResult) perPodAtRest() float64 { return (r.rssRest - r.rss0) / float64(r.pods) }

func (r scaleResult) heapPerPodAtRest() float64 { return (r.heapRest - r.heap0) / float64(r.pods) }

// gaugeSum is the gauge series summed over the processes' metrics (each must have it). go_gc_heap_live_bytes
// is the heap their last GC kept, whatever the GC's phase when read (RSS moves by tens of MiB with it); both
// controllers publish it.
func (p scaleProc) gaugeSum(t *testing.T, series string) float64 {
	t.Helper()
	sum := 0.0
	for i, m := range p.procs {
		text, err := m.metrics()
		if err != nil {
			t.Fatalf("%s's metrics (process %d): %v", p.name, i+1, err)
		}
		v, err := strconv.ParseFloat(metricOf(text, series), 64)
		if err != nil {
			t.Fatalf("%s's metrics (process %d) have no %s: %v", p.name, i+1, series, err)
		}
		sum += v
	}
	return sum
}

// run measures one run of the sets (set i in nss[i mod len(nss)], labelled with the run unless it is "").
func (sc scaleConfig) run(t *testing.T, ctx context.Context, nss []string, run string, p scaleProc) scaleResult {
	t.Helper()
	res := scaleResult{pods: sc.sets * sc.perSet, ordinal: p.ordinal, replicas: make([]replicaResult, len(p.procs))}
	kcmRSS0, kcmCPU0 := rss(t, kcmPID(t)), processCPU(t, kcmPID(t))
	var rss0 []float64
	res.rss0, rss0 = p.rss(t)
	res.heap0 = p.gaugeSum(t, "go_gc_heap_live_bytes")
	names := make([]string, sc.sets)
	nsOf := map[string]string{}
	for i := range names {
		names[i] = fmt.Sprintf("s%05d", i)
		nsOf[names[i]] = nss[i%len(nss)]
	}
	var opts []setOpt
	if run != "" {
		opts = append(opts, inShardRun(run))
	}
	tracker := newSetTracker(t, ctx, nss...)
	stopSampling := sampleQueue(t, p, &res)
	defer stopSampling() // idempotent: stopped below before the result is read

	// Sync latency and edit-to-rollout times are the waves', or the creation's when there are none
	// (SCALE_WAVES=0: the largest runs, where a wave would take hours).
	var h0, o0 hist
	var o0each []hist
	sample := func() {
		h0, _ = p.histogram(t, "workqueue_work_duration_seconds", p.queue)
		if p.ordinal {
			o0, o0each = p.histogram(t, "ordinal_sync_duration_seconds", "")
		}
	}
	if sc.waves == 0 {
		sample()
	}

	// Creation: every set at once.
	c0, c0each := p.cpu(t)
	t0 := time.Now()
	want := map[string]int32{}
	for _, n := range names {
		want[n] = int32(sc.perSet)
	}
	tracker.expect(want, 1)
	parallelDo(names, func(n string) {
		createSet(t, ctx, nsOf[n], newSet(n, int32(sc.perSet), append([]setOpt{parallel, maxUnavailable(max(1, sc.perSet/5))}, opts...)...))
	})
	took := tracker.waitAll(t, "every set created and rolled out", 60*time.Minute)
	res.create = time.Since(t0)
	c1, c1each := p.cpu(t)
	res.cpuCreate = c1 - c0
	var rssSettled []float64
	res.rssSettled, rssSettled = p.rss(t)
	for i := range res.replicas {
		res.replicas[i] = replicaResult{rss0: rss0[i], rssSettled: rssSettled[i], cpuCreate: c1each[i] - c0each[i]}
	}
	res.phase = res.create

	// Waves of edits: every set's template, and every fourth set's replicas +2 (and back the next wave).
	if sc.waves > 0 {
		sample()
		took = nil
	}
	c0, c0each = p.cpu(t)
	t0 = time.Now()
	for w := range sc.waves {
		want := map[string]int32{}
		for i, n := range names {
			want[n] = int32(sc.perSet)
			if i%4 == 0 && w%2 == 0 {
				want[n] += 2
			}
		}
		edited := tracker.expect(want, math.MaxInt64)
		parallelDo(names, func(n string) {
			patch := fmt.Sprintf(`{"spec":{"replicas":%d,"template":{"metadata":{"annotations":{%q:"w%d"}}}}}`, want[n], annVersion, w+2)
			at := time.Now()
			s, err := cfg.kc.AppsV1().StatefulSets(nsOf[n]).Patch(ctx, n, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			if err != nil {
				t.Errorf("patch %s: %v", n, err)
				return
			}
			edited(n, at, s.Generation)
		})
		if t.Failed() {
			t.FailNow()
		}
		took = append(took, tracker.waitAll(t, fmt.Sprintf("wave %d rolled out", w+1), 60*time.Minute)...)
	}
	res.edits = time.Since(t0)
	c1, c1each = p.cpu(t)
	res.cpuEdits = c1 - c0
	for i := range res.replicas {
		res.replicas[i].cpuEdits = c1each[i] - c0each[i]
	}
	if sc.waves > 0 {
		res.phase = res.edits
	}
	stopSampling()
	h1, _ := p.histogram(t, "workqueue_work_duration_seconds", p.queue)
	res.syncs = h1.count - h0.count
	res.syncP50, res.syncP99 = h1.minus(h0).quantile(0.5), h1.minus(h0).quantile(0.99)
	slices.Sort(took)
	res.editP50, res.editP99, res.editMx = pct(took, 0.5), pct(took, 0.99), took[len(took)-1]
	if p.ordinal {
		res.kcmBeside, res.kcmCPUBeside = rss(t, kcmPID(t))-kcmRSS0, processCPU(t, kcmPID(t))-kcmCPU0
		o1, o1each := p.histogram(t, "ordinal_sync_duration_seconds", "")
		o1 = o1.minus(o0)
		res.ownP50, res.ownP99, res.ownSyncs = o1.quantile(0.5), o1.quantile(0.99), o1.count
		for i, m := range p.procs {
			res.replicas[i].syncs = o1each[i].count - o0each[i].count
			if text, err := m.metrics(); err == nil {
				if v, err := strconv.ParseFloat(metricOf(text, "ordinal_shards_held"), 64); err == nil {
					res.replicas[i].shards = v
				}
			}
		}
	}

	// At rest: a while after the last rollout, nothing changing (ordinal drops a set's encoded objects and
	// module session --set-cache-idle, 1 min by default, after its last sync, swept each half minute:
	// set_cache.go; the Go runtime collects at least every 2 minutes, so the default rest of 4 minutes sees
	// a collection after the drop).
	select {
	case <-ctx.Done():
		t.Fatalf("waiting %s at rest: %v", sc.rest, ctx.Err())
	case <-time.After(sc.rest):
	}
	res.rssRest, _ = p.rss(t)
	res.heapRest = p.gaugeSum(t, "go_gc_heap_live_bytes")
	if p.ordinal {
		res.setCaches = p.gaugeSum(t, "ordinal_set_caches")
	}
	return res
}

func (sc scaleConfig) table(cols [2]string, ours, theirs []scaleResult) string {
	var b strings.Builder
	waves := fmt.Sprintf("%d waves of edits (every set's template; every 4th set's replicas +2, then back)", sc.waves)
	if sc.waves == 0 {
		waves = "creation only (SCALE_WAVES=0)"
	}
	spread := ""
	if sc.namespaces > 1 {
		spread = fmt.Sprintf(" in %d namespaces", sc.namespaces)
	}
	fmt.Fprintf(&b, "\n== bench-scale: %d sets x %d pods (%d pods)%s, Parallel, maxUnavailable 20%%; %s; %d workers each\n",
		sc.sets, sc.perSet, sc.sets*sc.perSet, spread, waves, sc.workers)
	if sc.replicas > 0 {
		fmt.Fprintf(&b, "`ordinal controller --shards %d`: 1 replica, then %d sharing the shards (default Lease terms), on this machine's cores\n",
			sc.shards, sc.replicas)
	}
	fmt.Fprintf(&b, "%-46s %24s %24s\n", "figure", cols[0], cols[1])
	row := func(name string, f func(scaleResult) string) {
		for i := range ours {
			label := name
			if len(ours) > 1 {
				label = fmt.Sprintf("%s [round %d]", name, i+1)
			}
			cell := func(r scaleResult) string {
				if r.pods == 0 { // the side SCALE_CONTROLLERS did not run
					return "-"
				}
				return f(r)
			}
			fmt.Fprintf(&b, "%-46s %24s %24s\n", label, cell(ours[i]), cell(theirs[i]))
		}
	}
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
	row("creation: all sets rolled out (wall)", func(r scaleResult) string { return sec(r.create) })
	row("controller RSS: before the sets / settled", func(r scaleResult) string {
		return fmt.Sprintf("%.0f / %.0f MiB", r.rss0/(1<<20), r.rssSettled/(1<<20))
	})
	row("RSS per cached pod (growth / pods)", func(r scaleResult) string { return fmt.Sprintf("%.1f KiB", r.perPod()/1024) })
	row(fmt.Sprintf("RSS at rest (%s after) / per cached pod", sc.rest), func(r scaleResult) string {
		return fmt.Sprintf("%.0f MiB / %.1f KiB", r.rssRest/(1<<20), r.perPodAtRest()/1024)
	})
	row("Go heap live (last GC): before / at rest", func(r scaleResult) string {
		return fmt.Sprintf("%.0f / %.0f MiB", r.heap0/(1<<20), r.heapRest/(1<<20))
	})
	row("  heap live per cached pod at rest", func(r scaleResult) string {
		return fmt.Sprintf("%.1f KiB", r.heapPerPodAtRest()/1024)
	})
	row("  ordinal: sets whose caches are kept at rest", func(r scaleResult) string {
		if !r.ordinal {
			return "-"
		}
		return fmt.Sprintf("%.0f of %d", r.setCaches, sc.sets)
	})
	row("peak RSS (sampled)", func(r scaleResult) string { return fmt.Sprintf("%.0f MiB", r.rssPeak/(1<<20)) })
	row("CPU: creation / waves (user+sys)", func(r scaleResult) string { return sec(r.cpuCreate) + " / " + sec(r.cpuEdits) })
	row("waves: all rolled out (wall)", func(r scaleResult) string { return sec(r.edits) })
	phase := "the waves"
	if sc.waves == 0 {
		phase = "the creation"
	}
	row("syncs in "+phase+" (work items)", func(r scaleResult) string { return fmt.Sprintf("%.0f", r.syncs) })
	row("sync latency p50 / p99 (workqueue, "+phase+")", func(r scaleResult) string { return ms(r.syncP50) + " / " + ms(r.syncP99) })
	row("  ordinal_sync_duration_seconds p50 / p99", func(r scaleResult) string {
		if r.ownP50 == 0 && r.ownP99 == 0 {
			return "-"
		}
		return ms(r.ownP50) + " / " + ms(r.ownP99)
	})
	row("queue depth max / mean (each second)", func(r scaleResult) string { return fmt.Sprintf("%.0f / %.1f", r.depthMax, r.depthMean) })
	row("edit (creation) -> its set rolled out p50 / p99", func(r scaleResult) string { return sec(r.editP50) + " / " + sec(r.editP99) })
	row("edit (creation) -> its set rolled out max", func(r scaleResult) string { return sec(r.editMx) })
	if sc.replicas > 0 {
		each := func(r scaleResult, f func(replicaResult) string) string {
			var s []string
			for _, x := range r.replicas {
				s = append(s, f(x))
			}
			return strings.Join(s, " ")
		}
		row("syncs done in "+phase+" (ordinal's count) /s", func(r scaleResult) string {
			return fmt.Sprintf("%.0f, %.1f/s", r.ownSyncs, r.ownSyncs/r.phase.Seconds())
		})
		row("each replica: shards held", func(r scaleResult) string {
			return each(r, func(x replicaResult) string { return fmt.Sprintf("%.0f", x.shards) })
		})
		row("each replica: share of the sets (its shards')", func(r scaleResult) string {
			return each(r, func(x replicaResult) string { return fmt.Sprintf("%.0f%%", 100*float64(x.sets)/float64(sc.sets)) })
		})
		row("each replica: share of the syncs", func(r scaleResult) string {
			return each(r, func(x replicaResult) string { return fmt.Sprintf("%.0f%%", 100*x.syncs/max(1, r.ownSyncs)) })
		})
		row("each replica: RSS settled (MiB)", func(r scaleResult) string {
			return each(r, func(x replicaResult) string { return fmt.Sprintf("%.0f", x.rssSettled/(1<<20)) })
		})
		row("each replica: CPU creation+waves (s)", func(r scaleResult) string {
			return each(r, func(x replicaResult) string { return fmt.Sprintf("%.1f", (x.cpuCreate + x.cpuEdits).Seconds()) })
		})
	}
	for i, r := range ours {
		if r.pods == 0 || sc.replicas > 0 {
			continue
		}
		fmt.Fprintf(&b, "beside ordinal, kube-controller-manager's other controllers (round %d): RSS growth %.0f MiB (%.1f KiB/pod), CPU %.1fs\n",
			i+1, r.kcmBeside/(1<<20), r.kcmBeside/float64(r.pods)/1024, r.kcmCPUBeside.Seconds())
	}
	if sc.replicas > 0 {
		fmt.Fprintf(&b, "CPU, RSS and histograms: the replicas' summed (a replica caches its shards' pods where the API server filters by shard, every pod otherwise). A replica's work\n")
		fmt.Fprintf(&b, "items include the other replicas' keys it drops; its syncs (ordinal_sync_duration_seconds' count) are its own sets'. Queue depth: the deepest replica's\n")
		return b.String()
	}
	fmt.Fprintf(&b, "CPU and RSS: the whole process (kube-controller-manager's: all its controllers). Sync latency: workqueue_work_duration_seconds of the\n")
	fmt.Fprintf(&b, "sets' queue, decade buckets interpolated log-linearly (ordinal's own histogram has finer ones). ordinal at --kube-api-qps 50, KCM at its default 20\n")
	return b.String()
}

// setTracker watches every set of its namespaces (names unique across them) and, per set, when it is rolled out at what it was last asked.
type setTracker struct {
	mu      sync.Mutex
	want    map[string]int32 // replicas
	gen     map[string]int64 // the edit's generation (0: not edited in this wave yet)
	edited  map[string]time.Time
	done    map[string]time.Duration
	changed chan struct{}
}

func newSetTracker(t *testing.T, ctx context.Context, nss ...string) *setTracker {
	st := &setTracker{changed: make(chan struct{}, 1)}
	wctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	for _, ns := range nss {
		lw := cache.NewListWatchFromClient(cfg.kc.AppsV1().RESTClient(), "statefulsets", ns, fields.Everything())
		go func() {
			_, _ = watchtools.UntilWithSync(wctx, lw, &appsv1.StatefulSet{}, nil, func(ev watch.Event) (bool, error) {
				if s, ok := ev.Object.(*appsv1.StatefulSet); ok && ev.Type != watch.Deleted {
					st.observe(s)
				}
				return false, nil
			})
		}()
	}
	return st
}

// expect starts a wave: each named set is to reach these replicas at generation gen (creation: 1, from now),
// or at the generation edited(name, at, gen) reports for the edit sent at that time.
func (st *setTracker) expect(want map[string]int32, gen int64) (edited func(name string, at time.Time, gen int64)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.want, st.gen, st.edited, st.done = want, map[string]int64{}, map[string]time.Time{}, map[string]time.Duration{}
	now := time.Now()
	for n := range want {
		st.edited[n], st.gen[n] = now, gen
	}
	return func(name string, at time.Time, gen int64) {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.edited[name], st.gen[name] = at, gen
	}
}

func (st *setTracker) observe(s *appsv1.StatefulSet) {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := s.Name
	want, ok := st.want[n]
	if _, done := st.done[n]; !ok || done || s.Generation < st.gen[n] || !rolledOut(want)(s) || (s.Spec.Replicas != nil && *s.Spec.Replicas != want) {
		return
	}
	st.done[n] = time.Since(st.edited[n])
	select {
	case st.changed <- struct{}{}:
	default:
	}
}

// waitAll waits for every set of the wave and returns each one's time from its edit to rolled out.
func (st *setTracker) waitAll(t *testing.T, desc string, timeout time.Duration) []time.Duration {
	t.Helper()
	deadline := time.After(timeout)
	for {
		st.mu.Lock()
		n, of := len(st.done), len(st.want)
		if n == of {
			out := make([]time.Duration, 0, n)
			for _, d := range st.done {
				out = append(out, d)
			}
			st.mu.Unlock()
			return out
		}
		st.mu.Unlock()
		select {
		case <-st.changed:
		case <-time.After(30 * time.Second):
			t.Logf("%s: %d/%d sets so far", desc, n, of)
		case <-deadline:
			t.Fatalf("timed out after %s waiting for %s: %d/%d sets", timeout, desc, n, of)
		}
	}
}

// sampleQueue samples the queue depth (the deepest process's) and the RSS (summed) each second until the
// returned func is called.
func sampleQueue(t *testing.T, p scaleProc, res *scaleResult) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	depthSeries := `workqueue_depth{name="` + p.queue + `"}`
	go func() {
		defer close(finished)
		var sum float64
		var n int
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				if n > 0 {
					res.depthMean = sum / float64(n)
				}
				return
			case <-tick.C:
			}
			depth, seen, total := 0.0, false, 0.0
			for _, m := range p.procs {
				if text, err := m.metrics(); err == nil {
					if d, err := strconv.ParseFloat(metricOf(text, depthSeries), 64); err == nil {
						depth, seen = max(depth, d), true
					}
				}
				if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.pid)); err == nil {
					total += rssOf(string(b))
				}
			}
			if seen {
				sum, n, res.depthMax = sum+depth, n+1, max(res.depthMax, depth)
			}
			res.rssPeak = max(res.rssPeak, total)
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}

// hist is a Prometheus histogram's cumulative buckets.
type hist struct {
	le    []float64
	cum   []float64
	count float64
}

var bucketRE = regexp.MustCompile(`^(\w+)_bucket\{(.*)\} (\S+)$`)

// histogramOf reads histogram name{name=queue} (any labels when queue is "") from a /metrics text; no
// buckets if it has none.
func histogramOf(text, name, queue string) hist {
	var h hist
	for _, line := range strings.Split(text, "\n") {
		m := bucketRE.FindStringSubmatch(line)
		if m == nil || m[1] != name || (queue != "" && !strings.Contains(m[2], `name="`+queue+`"`)) {
			continue
		}
		le := regexp.MustCompile(`le="([^"]+)"`).FindStringSubmatch(m[2])
		if le == nil {
			continue
		}
		bound, _ := strconv.ParseFloat(le[1], 64) // "+Inf" parses as +Inf
		v, _ := strconv.ParseFloat(m[3], 64)
		h.le, h.cum = append(h.le, bound), append(h.cum, v)
	}
	if len(h.le) > 0 {
		h.count = h.cum[len(h.cum)-1]
	}
	return h
}

// plus adds another process's histogram of the same buckets.
func (h hist) plus(o hist) hist {
	d := hist{le: h.le, cum: make([]float64, len(h.cum)), count: h.count + o.count}
	for i := range h.cum {
		d.cum[i] = h.cum[i] + o.cum[i]
	}
	return d
}

func (h hist) minus(o hist) hist {
	d := hist{le: h.le, cum: make([]float64, len(h.cum)), count: h.count - o.count}
	for i := range h.cum {
		d.cum[i] = h.cum[i] - o.cum[i]
	}
	return d
}

// quantile interpolates log-linearly inside the bucket the quantile falls in (the buckets are decades).
func (h hist) quantile(q float64) time.Duration {
	if h.count == 0 {
		return 0
	}
	rank := q * h.count
	for i, c := range h.cum {
		if c < rank {
			continue
		}
		hi := h.le[i]
		if i == 0 {
			return time.Duration(hi * float64(time.Second))
		}
		lo, below := h.le[i-1], h.cum[i-1]
		if math.IsInf(hi, 1) {
			return time.Duration(lo * float64(time.Second))
		}
		f := (rank - below) / (c - below)
		return time.Duration(math.Exp(math.Log(lo)+f*(math.Log(hi)-math.Log(lo))) * float64(time.Second))
	}
	return 0
}

func pct(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func parallelDo(names []string, f func(string)) {
	work := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for n := range work {
				f(n)
			}
		})
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
}

// deleteNamespace deletes ns and waits until it is gone (its pods too), so that the next run's controller
// neither sees nor caches it.
func deleteNamespace(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	if err := cfg.kc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	waitFor(t, ctx, "namespace "+ns+" to be gone", 30*time.Minute, func() bool {
		_, err := cfg.kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func rss(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("RSS of %d: %v", pid, err)
	}
	return rssOf(string(b))
}

// rssOf reads VmRSS (kB) of /proc/PID/status, in bytes.
func rssOf(status string) float64 {
	for _, line := range strings.Split(status, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	return 0
}

// envCount is envInt where 0 is allowed.
func envCount(t *testing.T, name string, def int) int {
	t.Helper()
	if os.Getenv(name) == "0" {
		return 0
	}
	return envInt(t, name, def)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// kcmPort is kube-controller-manager's secure port, from the cluster's cluster.env.
func kcmPort(t *testing.T) string {
	t.Helper()
	run := os.Getenv("LOCALK8S_RUN")
	if run == "" {
		run = "/tmp/ordinal-localk8s"
	}
	b, err := os.ReadFile(filepath.Join(run, "cluster.env"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^KCM_PORT='?(\d+)'?$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s/cluster.env has no KCM_PORT", run)
	}
	return string(m[1])
}

// insecureClient reads kube-controller-manager's /metrics (self-signed serving certificate; the local
// cluster's scripts/cluster-kcm.sh allows the path without authentication).
var insecureClient = &http.Client{Timeout: 10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

func httpText(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

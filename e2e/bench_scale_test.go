//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
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
)

// TestBenchScale is `make bench-scale` (issue 34 item 1; skipped otherwise): many sets at once, run under
// `ordinal controller` (kube-controller-manager without its StatefulSet controller, as in every other e2e
// test) and under kube-controller-manager's own StatefulSet controller, alternating SCALE_ROUNDS times
// (default 1). Each run, in a namespace of its own (deleted, and gone, before the other controller starts):
// SCALE_SETS sets (default 200) of SCALE_PODS_PER_SET pods (default 10), Parallel with maxUnavailable 20%,
// created at once and waited for; then SCALE_WAVES waves (default 2) in which every set's template changes
// at once and every fourth set is also scaled by +2 (and back in the next wave). It prints, side by side:
// the controller's RSS once the sets settled and per cached pod (growth over the RSS before the sets, per
// pod), CPU, sync latency p50/p99 (workqueue_work_duration_seconds of the sets' queue: the same histogram in
// both), queue depth (workqueue_depth, sampled each second), and the time from each set's edit to its rollout
// complete. Each controller runs with SCALE_WORKERS concurrent syncs (default 5, kube-controller-manager's
// --concurrent-statefulset-syncs default) and its own default API rate.
func TestBenchScale(t *testing.T) {
	if os.Getenv("ORDINAL_BENCH_SCALE") == "" {
		t.Skip("make bench-scale runs this (ORDINAL_BENCH_SCALE=1)")
	}
	requireController(t)
	if got := kcm(t, "status"); got != kcmDefault {
		t.Fatalf("kube-controller-manager runs with --controllers=%s, want %s", got, kcmDefault)
	}
	sc := scaleConfig{sets: envInt(t, "SCALE_SETS", 200), perSet: envInt(t, "SCALE_PODS_PER_SET", 10),
		waves: envCount(t, "SCALE_WAVES", 2), workers: envInt(t, "SCALE_WORKERS", 5)}
	rounds := envInt(t, "SCALE_ROUNDS", 1)
	// SCALE_CONTROLLERS=ordinal or kcm runs one side only (a run of tens of thousands of pods lost to the
	// machine can be redone alone); the table then shows "-" for the other.
	only := os.Getenv("SCALE_CONTROLLERS")
	if only != "" && only != "ordinal" && only != "kcm" {
		t.Fatalf("SCALE_CONTROLLERS=%q: want ordinal, kcm or unset (both)", only)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 170*time.Minute) // not testContext's 4 minutes
	t.Cleanup(cancel)
	var ours, theirs []scaleResult
	for r := range rounds {
		ours, theirs = append(ours, scaleResult{}), append(theirs, scaleResult{})
		if only != "kcm" {
			ns := newNamespace(t, ctx)
			c := startController(t, ns, ctrlOpts{workers: sc.workers})
			c.waitReady(ctx)
			ours[r] = sc.run(t, ctx, ns, scaleProc{name: "ordinal", pid: c.cmd.Process.Pid, queue: "ordinal-statefulset",
				metrics: func() (string, error) { return httpText(http.DefaultClient, "http://"+c.metrics+"/metrics") }})
			c.stop()
			deleteNamespace(t, ctx, ns)
			t.Logf("round %d, ordinal controller: %s", r+1, ours[r])
		}
		if only != "ordinal" {
			restartKCM(t, kcmBuiltinSTS)
			ns := newNamespace(t, ctx)
			theirs[r] = sc.run(t, ctx, ns, scaleProc{name: "kube-controller-manager", pid: kcmPID(t), queue: "statefulset",
				metrics: func() (string, error) { return httpText(insecureClient, "https://127.0.0.1:"+kcmPort(t)+"/metrics") }})
			deleteNamespace(t, ctx, ns)
			restartKCM(t, kcmDefault)
			t.Logf("round %d, kube-controller-manager: %s", r+1, theirs[r])
		}
	}
	out := sc.table(ours, theirs)
	t.Log(out)
	fmt.Println(out)
}

type scaleConfig struct{ sets, perSet, waves, workers int }

// scaleProc is the controller process a run measures.
type scaleProc struct {
	name    string
	pid     int
	queue   string // the sets' work queue (workqueue_*{name})
	metrics func() (string, error)
}

type scaleResult struct {
	pods                     int
	create, edits            time.Duration // wall: all sets created and rolled out; all waves
	rss0, rssSettled         float64       // bytes: before the sets, once created and settled
	rssPeak                  float64
	cpuCreate, cpuEdits      time.Duration
	syncs                    float64 // work items processed during the waves
	syncP50, syncP99         time.Duration
	depthMax, depthMean      float64 // during creation and the waves
	editP50, editP99, editMx time.Duration
	kcmBeside                float64       // kube-controller-manager's RSS growth meanwhile, in ordinal's runs
	kcmCPUBeside             time.Duration // and its CPU (creation and waves)
	ownP50, ownP99           time.Duration // ordinal_sync_duration_seconds (finer buckets), ordinal only
}

func (r scaleResult) String() string {
	return fmt.Sprintf("%d pods: created in %s, waves %s; RSS %.0f MiB (%.1f KiB/pod); CPU %s + %s; sync p50 %s p99 %s; depth max %.0f; edit->done p50 %s p99 %s",
		r.pods, r.create.Round(time.Second), r.edits.Round(time.Second), r.rssSettled/(1<<20), r.perPod()/1024, r.cpuCreate, r.cpuEdits,
		r.syncP50, r.syncP99, r.depthMax, r.editP50.Round(time.Millisecond), r.editP99.Round(time.Millisecond))
}

func (r scaleResult) perPod() float64 { return (r.rssSettled - r.rss0) / float64(r.pods) }

func (sc scaleConfig) run(t *testing.T, ctx context.Context, ns string, p scaleProc) scaleResult {
	t.Helper()
	res := scaleResult{pods: sc.sets * sc.perSet}
	kcmRSS0, kcmCPU0 := rss(t, kcmPID(t)), processCPU(t, kcmPID(t))
	res.rss0 = rss(t, p.pid)
	names := make([]string, sc.sets)
	for i := range names {
		names[i] = fmt.Sprintf("s%05d", i)
	}
	tracker := newSetTracker(t, ctx, ns)
	stopSampling := sampleQueue(t, p, &res)
	defer stopSampling() // idempotent: stopped below before the result is read

	// Sync latency and edit-to-rollout times are the waves', or the creation's when there are none
	// (SCALE_WAVES=0: the largest runs, where a wave would take hours).
	var h0, o0 hist
	sample := func() {
		h0 = histogram(t, p, "workqueue_work_duration_seconds", p.queue)
		if p.name == "ordinal" {
			o0 = histogram(t, p, "ordinal_sync_duration_seconds", "")
		}
	}
	if sc.waves == 0 {
		sample()
	}

	// Creation: every set at once.
	c0, t0 := processCPU(t, p.pid), time.Now()
	want := map[string]int32{}
	for _, n := range names {
		want[n] = int32(sc.perSet)
	}
	tracker.expect(want, 1)
	parallelDo(names, func(n string) {
		createSet(t, ctx, ns, newSet(n, int32(sc.perSet), parallel, maxUnavailable(max(1, sc.perSet/5))))
	})
	took := tracker.waitAll(t, "every set created and rolled out", 60*time.Minute)
	res.create, res.cpuCreate = time.Since(t0), processCPU(t, p.pid)-c0
	res.rssSettled = rss(t, p.pid)

	// Waves of edits: every set's template, and every fourth set's replicas +2 (and back the next wave).
	if sc.waves > 0 {
		sample()
		took = nil
	}
	c0, t0 = processCPU(t, p.pid), time.Now()
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
			s, err := cfg.kc.AppsV1().StatefulSets(ns).Patch(ctx, n, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
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
	res.edits, res.cpuEdits = time.Since(t0), processCPU(t, p.pid)-c0
	stopSampling()
	h1 := histogram(t, p, "workqueue_work_duration_seconds", p.queue)
	res.syncs = h1.count - h0.count
	res.syncP50, res.syncP99 = h1.minus(h0).quantile(0.5), h1.minus(h0).quantile(0.99)
	slices.Sort(took)
	res.editP50, res.editP99, res.editMx = pct(took, 0.5), pct(took, 0.99), took[len(took)-1]
	if p.name == "ordinal" {
		res.kcmBeside, res.kcmCPUBeside = rss(t, kcmPID(t))-kcmRSS0, processCPU(t, kcmPID(t))-kcmCPU0
		o1 := histogram(t, p, "ordinal_sync_duration_seconds", "").minus(o0)
		res.ownP50, res.ownP99 = o1.quantile(0.5), o1.quantile(0.99)
	}
	return res
}

func (sc scaleConfig) table(ours, theirs []scaleResult) string {
	var b strings.Builder
	waves := fmt.Sprintf("%d waves of edits (every set's template; every 4th set's replicas +2, then back)", sc.waves)
	if sc.waves == 0 {
		waves = "creation only (SCALE_WAVES=0)"
	}
	fmt.Fprintf(&b, "\n== bench-scale: %d sets x %d pods (%d pods), Parallel, maxUnavailable 20%%; %s; %d workers each\n",
		sc.sets, sc.perSet, sc.sets*sc.perSet, waves, sc.workers)
	fmt.Fprintf(&b, "%-46s %22s %22s\n", "figure", "ordinal", "KCM (own controller)")
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
			fmt.Fprintf(&b, "%-46s %22s %22s\n", label, cell(ours[i]), cell(theirs[i]))
		}
	}
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
	row("creation: all sets rolled out (wall)", func(r scaleResult) string { return sec(r.create) })
	row("controller RSS: before the sets / settled", func(r scaleResult) string {
		return fmt.Sprintf("%.0f / %.0f MiB", r.rss0/(1<<20), r.rssSettled/(1<<20))
	})
	row("RSS per cached pod (growth / pods)", func(r scaleResult) string { return fmt.Sprintf("%.1f KiB", r.perPod()/1024) })
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
	for i, r := range ours {
		if r.pods == 0 {
			continue
		}
		fmt.Fprintf(&b, "beside ordinal, kube-controller-manager's other controllers (round %d): RSS growth %.0f MiB (%.1f KiB/pod), CPU %.1fs\n",
			i+1, r.kcmBeside/(1<<20), r.kcmBeside/float64(r.pods)/1024, r.kcmCPUBeside.Seconds())
	}
	fmt.Fprintf(&b, "CPU and RSS: the whole process (kube-controller-manager's: all its controllers). Sync latency: workqueue_work_duration_seconds of the\n")
	fmt.Fprintf(&b, "sets' queue, decade buckets interpolated log-linearly (ordinal's own histogram has finer ones). ordinal at --kube-api-qps 50, KCM at its default 20\n")
	return b.String()
}

// setTracker watches every set of a namespace and, per set, when it is rolled out at what it was last asked.
type setTracker struct {
	mu      sync.Mutex
	want    map[string]int32 // replicas
	gen     map[string]int64 // the edit's generation (0: not edited in this wave yet)
	edited  map[string]time.Time
	done    map[string]time.Duration
	changed chan struct{}
}

func newSetTracker(t *testing.T, ctx context.Context, ns string) *setTracker {
	st := &setTracker{changed: make(chan struct{}, 1)}
	wctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	lw := cache.NewListWatchFromClient(cfg.kc.AppsV1().RESTClient(), "statefulsets", ns, fields.Everything())
	go func() {
		_, _ = watchtools.UntilWithSync(wctx, lw, &appsv1.StatefulSet{}, nil, func(ev watch.Event) (bool, error) {
			if s, ok := ev.Object.(*appsv1.StatefulSet); ok && ev.Type != watch.Deleted {
				st.observe(s)
			}
			return false, nil
		})
	}()
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

// sampleQueue samples the queue depth and the RSS each second until the returned func is called.
func sampleQueue(t *testing.T, p scaleProc, res *scaleResult) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	depthRE := regexp.MustCompile(`(?m)^workqueue_depth\{name="` + regexp.QuoteMeta(p.queue) + `"\} (\S+)$`)
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
			if text, err := p.metrics(); err == nil {
				if m := depthRE.FindStringSubmatch(text); m != nil {
					d, _ := strconv.ParseFloat(m[1], 64)
					sum, n, res.depthMax = sum+d, n+1, max(res.depthMax, d)
				}
			}
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid)); err == nil {
				res.rssPeak = max(res.rssPeak, rssOf(string(b)))
			}
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

func histogram(t *testing.T, p scaleProc, name, queue string) hist {
	t.Helper()
	text, err := p.metrics()
	if err != nil {
		t.Fatalf("%s's metrics: %v", p.name, err)
	}
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
	if len(h.le) == 0 {
		t.Fatalf("%s's metrics have no %s{name=%q}", p.name, name, queue)
	}
	h.count = h.cum[len(h.cum)-1]
	return h
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

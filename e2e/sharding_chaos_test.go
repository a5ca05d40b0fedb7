//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Sharded chaos (issue 34 item 4): per seed, replicas of `ordinal controller --shards`, each behind a fault
// proxy of its own, roll sets in several namespaces while the seed's schedule SIGKILLs replicas, partitions
// owners of the sets' shards from the API server (their Lease writes alone, or all their traffic) for 0.5 to
// 2.5 lease durations and heals them (one whose member Lease lapsed has exited, as designed, and is started
// again, as its pod would be), and adds replicas, all mid-rollout. Invariants: every rollout completes; no ordinal ever had two
// pods at once (the pod trackers), nor more than one pod per revision (v1, v2: two); from the API server's
// audit log (checkTerms), every write of a replica to a set's objects was received within one of that
// replica's terms of the set's shard Lease, and no two replicas' runs of writes to a set interleave; and at
// the end every shard is held by the replica it prefers among the live ones.
//
// ORDINAL_SHARD_CHAOS_RUNS seeds (default 1, so `make e2e` runs one) from ORDINAL_SHARD_CHAOS_FIRST_SEED
// (default 1); ORDINAL_SHARD_CHAOS_SEEDS=3,9 replays given seeds. build/e2e/shard-chaos-progress.txt has a
// line per seed with its figures.
func TestShardedChaos(t *testing.T) {
	requireController(t)
	seeds := seedsFromEnv(t, "ORDINAL_SHARD_CHAOS", 1)
	var failing []string
	progress, err := os.Create(filepath.Join(cfg.artifacts, "shard-chaos-progress.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer progress.Close()
	var total shardChaosFigures
	for i, seed := range seeds {
		var f shardChaosFigures
		ok := t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) { f = shardChaosRun(t, seed) })
		if !ok {
			failing = append(failing, strconv.FormatInt(seed, 10))
		}
		total.add(f)
		fmt.Fprintf(progress, "%d/%d seed %d ok=%v %s; failing so far %v\n", i+1, len(seeds), seed, ok, f, failing)
	}
	t.Logf("sharded chaos: %d seeds, %d failing %v; %s", len(seeds), len(failing), failing, total)
	fmt.Fprintf(progress, "total: %d seeds, %d failing; %s\n", len(seeds), len(failing), total)
	if len(failing) > 0 {
		t.Errorf("failing seeds: %s (replay: ORDINAL_SHARD_CHAOS_SEEDS=%s)", strings.Join(failing, ","), strings.Join(failing, ","))
	}
}

// shardChaosFigures counts what a run did and saw.
type shardChaosFigures struct {
	kills, partitions, leasesOnly, restarts, joins int
	takes, expired                                 int // shard Lease terms begun by another replica; terms ended by expiry
	multiWriter, writes, late                      int // sets written by two replicas or more; replica writes; late (termChecks)
	latest                                         time.Duration
}

func (f *shardChaosFigures) add(o shardChaosFigures) {
	f.kills += o.kills
	f.partitions += o.partitions
	f.leasesOnly += o.leasesOnly
	f.restarts += o.restarts
	f.joins += o.joins
	f.takes += o.takes
	f.expired += o.expired
	f.multiWriter += o.multiWriter
	f.writes += o.writes
	f.late += o.late
	f.latest = max(f.latest, o.latest)
}

func (f shardChaosFigures) String() string {
	return fmt.Sprintf("kills %d, partitions %d (%d of Lease writes alone), restarts after one %d, joins %d; "+
		"shard takes %d, terms expired %d; sets written by 2+ replicas %d, replica writes %d, finished after their term %d (at most %s)",
		f.kills, f.partitions, f.leasesOnly, f.restarts, f.joins, f.takes, f.expired, f.multiWriter, f.writes, f.late, f.latest)
}

// shardChaosEvent is one step of a seed's schedule, at a delay after the rollout's edit: SIGKILL a live
// replica (the i-th, modulo those live), partition one (its Lease writes alone, or all its traffic) until
// its heal, or start a new one.
type shardChaosEvent struct {
	at   time.Duration
	what string // kill, partition, heal, join
	i    int
	// partition: of its Lease writes alone; heal: the index in the schedule of the partition it ends
	leasesOnly bool
	of         int
}

// shardReplica is a replica with its fault proxy.
type shardReplica struct {
	p     *controllerProc
	proxy *faultProxy
	heal  func() // while partitioned
}

func shardChaosRun(t *testing.T, seed int64) (fig shardChaosFigures) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	rng := rand.New(rand.NewPCG(uint64(seed), 34))
	leaseNs := newNamespace(t, ctx)
	audit := markAudit(t)
	run := fmt.Sprintf("%d-%04d", seed, rand.IntN(10000))
	// three namespaces in distinct shards (names differing in their last characters alone often share one:
	// FNV-1a's high bits barely move with them)
	var namespaces []string
	used := map[int]bool{}
	for k := 0; len(namespaces) < 3 && k < 1000; k++ {
		ns := fmt.Sprintf("e2e-shchaos-%s-%d", run, k)
		if i := controllerShardOf(ns); !used[i] {
			used[i] = true
			namespaces = append(namespaces, newNamespaceNamed(t, ctx, ns))
		}
	}
	if len(namespaces) < 3 {
		t.Fatalf("no three namespaces in distinct shards: %v", namespaces)
	}
	var schedule []shardChaosEvent
	draw := func(what string, n int) {
		for range n {
			ev := shardChaosEvent{at: time.Duration(rng.IntN(8000)) * time.Millisecond, what: what, i: rng.IntN(8)}
			if what == "partition" {
				ev.leasesOnly = rng.IntN(2) == 0
				// held for 0.5 to 2.5 lease durations: some lapse only its shards' terms, some its member Lease too
				hold := shardLeaseDuration/2 + time.Duration(rng.Int64N(int64(2*shardLeaseDuration)))
				schedule = append(schedule, ev, shardChaosEvent{at: ev.at + hold, what: "heal", of: -1})
				continue
			}
			schedule = append(schedule, ev)
		}
	}
	draw("kill", 1+rng.IntN(2))
	draw("partition", 1+rng.IntN(2))
	draw("join", 1+rng.IntN(2))
	// heals follow their partition in the drawing: number them before the sort
	for k := range schedule {
		if schedule[k].what == "partition" {
			schedule[k].of = k
			schedule[k+1].of = k
		}
	}
	sort.SliceStable(schedule, func(a, b int) bool { return schedule[a].at < schedule[b].at })
	t.Logf("seed %d: namespaces %v (shards %v); schedule %+v", seed, namespaces, shardsOf(namespaces), schedule)

	dir := t.TempDir()
	counts := &faultCounts{}
	n := 0
	var live []*shardReplica
	start := func(id string, proxy *faultProxy) *shardReplica {
		r := &shardReplica{proxy: proxy}
		r.p = startShardReplica(t, ctx, leaseNs, id, run, "--kubeconfig", proxy.kubeconfig(t, filepath.Join(dir, id)))
		return r
	}
	join := func() {
		n++
		id := fmt.Sprintf("r%d-%s", n, run)
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		live = append(live, start(id, startFaultProxy(t, seed<<8+int64(n), faultRates{}, counts)))
	}
	ids := func() []string {
		var out []string
		for _, r := range live {
			out = append(out, r.p.name)
		}
		return out
	}
	join()
	join()
	waitShardHolders(t, ctx, leaseNs, ids())
	trackers := rollOutShardedSets(t, ctx, namespaces, run)

	for _, ns := range namespaces {
		patchSet(t, ctx, ns, "db", setVersion("v2"))
	}
	edit := time.Now()
	partitioned := map[int]*shardReplica{} // by the index of the partition in the schedule
	for _, ev := range schedule {
		time.Sleep(time.Until(edit.Add(ev.at)))
		switch ev.what {
		case "kill":
			if len(live) > 0 {
				k := ev.i % len(live)
				live[k].p.kill()
				live = slices.Delete(live, k, k+1)
				fig.kills++
			}
		case "join":
			join()
			fig.joins++
		case "partition":
			// the owner of a set's shard (the i-th namespace's) if it can be; else another replica
			var free []*shardReplica
			owner := shardHolder(ctx, leaseNs, controllerShardOf(namespaces[ev.i%len(namespaces)]))
			for _, r := range live {
				if r.heal == nil && r.p.name == owner {
					free = []*shardReplica{r}
					break
				}
				if r.heal == nil {
					free = append(free, r)
				}
			}
			if len(free) == 0 {
				continue
			}
			r := free[ev.i%len(free)]
			r.heal = r.proxy.partition(ev.leasesOnly)
			partitioned[ev.of] = r
			fig.partitions++
			if ev.leasesOnly {
				fig.leasesOnly++
			}
			t.Logf("partitioned %s from the API server (Lease writes alone: %v)", r.p.name, ev.leasesOnly)
		case "heal":
			r := partitioned[ev.of]
			if r == nil {
				continue
			}
			r.heal()
			r.heal = nil
			if r.p.signaled { // killed meanwhile
				continue
			}
			if k := slices.Index(live, r); k >= 0 && !stillMember(t, ctx, leaseNs, r.p, time.Now()) {
				t.Logf("%s exited when its member Lease lapsed; started again", r.p.name)
				live[k] = start(r.p.name, r.proxy)
				fig.restarts++
			}
		}
	}
	if len(live) == 0 {
		join()
	}
	for _, ns := range namespaces {
		waitSet(t, ctx, ns, "db", "v2 rolled out through the kills, partitions and joins", 5*time.Minute, rolledOut(3))
	}
	waitShardHolders(t, ctx, leaseNs, ids())
	for _, ns := range namespaces {
		trackers[ns].checkInvariants()
		for o, c := range trackers[ns].podsPerOrdinal() {
			if c > 2 {
				t.Errorf("%s: ordinal %d had %d pods over two revisions", ns, o, c)
			}
		}
	}
	for _, r := range live {
		r.p.stop()
	}

	events := readAudit(t, audit, append([]string{leaseNs}, namespaces...))
	terms := leaseTerms(events, leaseNs)
	if len(terms) == 0 {
		t.Fatalf("the audit log %s has no Lease writes with their holder: restart the cluster with scripts/cluster-up.sh (its policy logs them)", audit.path)
	}
	for i := range testShards {
		ts := terms[shardLeaseID+"-shard-"+strconv.Itoa(i)]
		for k := range ts {
			if k > 0 && ts[k].holder != ts[k-1].holder {
				fig.takes++
			}
			if ts[k].expired {
				fig.expired++
			}
		}
	}
	for _, ns := range namespaces {
		lease := shardLeaseID + "-shard-" + strconv.Itoa(controllerShardOf(ns))
		c := checkTerms(t, ns, setWrites(events, ns), terms[lease])
		if c.writes == 0 {
			t.Errorf("%s: no write by a replica in the audit log %s (no identity in their user agent?)", ns, audit.path)
		}
		if c.writers > 1 {
			fig.multiWriter++
		}
		fig.writes += c.writes
		fig.late += c.late
		fig.latest = max(fig.latest, c.latest)
		t.Logf("%s: %d writes by %d replicas; Lease %s: %s", ns, c.writes, c.writers, lease, formatTerms(terms[lease]))
	}
	t.Logf("seed %d: %s; proxies: %s", seed, fig, counts)
	return fig
}

// shardHolder returns the holder of shard i's Lease ("" if none or unread).
func shardHolder(ctx context.Context, leaseNs string, i int) string {
	l, err := cfg.kc.CoordinationV1().Leases(leaseNs).Get(ctx, shardLeaseID+"-shard-"+strconv.Itoa(i), metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// stillMember waits until a replica healed at healed either renews its member Lease again (it still leads
// it) or has exited (it lost it, and stops, as designed), and says which.
func stillMember(t *testing.T, ctx context.Context, leaseNs string, p *controllerProc, healed time.Time) bool {
	t.Helper()
	var renewed bool
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if p.hasExited() {
			return true, nil
		}
		l, err := cfg.kc.CoordinationV1().Leases(leaseNs).Get(ctx, shardLeaseID+"-member-"+p.name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		renewed = l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == p.name && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(healed)
		return renewed, nil
	})
	if err != nil {
		t.Fatalf("%s neither renewed its member Lease nor exited after the partition healed: %v", p.name, err)
	}
	return renewed
}

func shardsOf(namespaces []string) []int {
	var out []int
	for _, ns := range namespaces {
		out = append(out, controllerShardOf(ns))
	}
	return out
}

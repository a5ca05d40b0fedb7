//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ordinal-dev/ordinal/host/controller"
)

const (
	testShards         = 8
	shardLeaseID       = "e2e-shards"
	shardLeaseDuration = 4 * time.Second
)

// Issue 34 item 3: replicas of `ordinal controller --shards` split the sets by namespace through Leases.
// Two replicas sync every set, each set's pods written by the replica its shard prefers; one replica is
// SIGKILLed mid-rollout and the other takes its shards once their Leases expire, finishing the rollouts;
// a third joins and takes the shards that prefer it. Who wrote is read from the events each pod create and
// delete leaves (source.host is the replica's identity), ordered by the nanosecond time in their names:
// no set has writes from a replica after another replica's (each replica's writes to a set are one
// unbroken run), and every pod ordinal had at most one pod at a time.
func TestShardedReplicas(t *testing.T) {
	requireController(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	leaseNs := newNamespace(t, ctx)
	// Namespaces whose shards are spread so that each step moves some: some prefer a and some b of {a, b};
	// some prefer c of {b, c}. Not every run's names allow it (FNV-1a puts names differing at their end in
	// few shards; a run's three identities may leave c preferred nowhere): then another run is drawn.
	var run, a, b, c string
	var namespaces []string
	for tries := 0; namespaces == nil; tries++ {
		if tries == 100 {
			t.Fatal("no run of 100 has 4 namespaces in distinct shards spread over the replicas")
		}
		run = fmt.Sprintf("%04d", rand.IntN(10000))
		a, b, c = "shard-a-"+run, "shard-b-"+run, "shard-c-"+run
		namespaces = spreadNamespaces(run, a, b, c)
	}
	shardOf := map[string]int{}
	for _, ns := range namespaces {
		shardOf[ns] = controller.ShardOf(ns, testShards)
	}
	for _, ns := range namespaces {
		newNamespaceNamed(t, ctx, ns)
		t.Logf("namespace %s: shard %d, prefers %s of {a, b}, %s of {b, c}", ns, shardOf[ns],
			controller.PreferredOwner(shardOf[ns], []string{a, b}), controller.PreferredOwner(shardOf[ns], []string{b, c}))
	}

	start := func(id string) *controllerProc { return startShardReplica(t, ctx, leaseNs, id, run) }
	pa, pb := start(a), start(b)
	waitShardHolders(t, ctx, leaseNs, []string{a, b})

	trackers := rollOutShardedSets(t, ctx, namespaces, run)
	checkShardCaches(t, ctx, leaseNs, namespaces, map[string]*controllerProc{a: pa, b: pb})
	// Before any handover: each set's writes came from the replica its shard prefers.
	for _, ns := range namespaces {
		want := controller.PreferredOwner(shardOf[ns], []string{a, b})
		if hosts := writers(t, ctx, ns, "db"); len(hosts) != 1 || hosts[0] != want {
			t.Errorf("%s (shard %d): pods written by %v, want %s alone", ns, shardOf[ns], hosts, want)
		}
	}

	// SIGKILL a mid-rollout of one of its sets: b takes its shards when their Leases expire.
	var ofA string
	for _, ns := range namespaces {
		if controller.PreferredOwner(shardOf[ns], []string{a, b}) == a {
			ofA = ns
		}
	}
	for _, ns := range namespaces {
		patchSet(t, ctx, ns, "db", setVersion("v2"))
	}
	trackers[ofA].waitFor(ctx, "a pod of v2 created", 2*time.Minute, func(v podView) bool {
		for i := 0; i < 3; i++ {
			if p := v.pod(i); p != nil && p.Annotations[annVersion] == "v2" {
				return true
			}
		}
		return false
	})
	pa.kill()
	for _, ns := range namespaces {
		waitSet(t, ctx, ns, "db", "v2 rolled out after a was killed", 4*time.Minute, rolledOut(3))
	}
	waitShardHolders(t, ctx, leaseNs, []string{b})

	// c joins: it takes the shards that prefer it, given up by b once c has been live for two lease terms.
	pc := start(c)
	waitShardHolders(t, ctx, leaseNs, []string{b, c})
	for _, ns := range namespaces {
		patchSet(t, ctx, ns, "db", setVersion("v3"))
	}
	for _, ns := range namespaces {
		waitSet(t, ctx, ns, "db", "v3 rolled out with b and c", 4*time.Minute, rolledOut(3))
	}
	var ofC []string
	for _, ns := range namespaces {
		if controller.PreferredOwner(shardOf[ns], []string{b, c}) == c {
			ofC = append(ofC, ns)
		}
	}
	for _, ns := range ofC {
		if hosts := writers(t, ctx, ns, "db"); len(hosts) == 0 || hosts[len(hosts)-1] != c {
			t.Errorf("%s prefers c, which joined before v3: its pods' writers in order: %v", ns, hosts)
		}
	}
	checkShardCaches(t, ctx, leaseNs, namespaces, map[string]*controllerProc{b: pb, c: pc})
	for _, ns := range namespaces {
		trackers[ns].checkInvariants()
		for o, n := range trackers[ns].podsPerOrdinal() {
			if n > 3 { // v1, v2, v3: one pod each
				t.Errorf("%s: ordinal %d had %d pods over three revisions", ns, o, n)
			}
		}
	}
	pb.stop()
	pc.stop()
}

// checkShardCaches checks what each replica's informers hold (its /metrics), the sets rolled out (3 pods
// each): where the API server filters by shard (KEP-5866; make e2e's cluster runs with ShardedListAndWatch),
// the sets and pods of the namespaces whose shard it holds, and no other; elsewhere, every set and pod of the
// run. The replicas watch only the run's sets and pods (--selector).
func checkShardCaches(t *testing.T, ctx context.Context, leaseNs string, namespaces []string, replicas map[string]*controllerProc) {
	t.Helper()
	probe, err := cfg.kc.CoreV1().Pods("").List(ctx, metav1.ListOptions{ShardSelector: controller.ShardSelector(0, testShards), Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	filtered := probe.ShardInfo != nil
	// the shards' holders, read again at each look: under load a replica's Lease can lapse and its shards
	// move while the caches are checked, and what a replica caches follows what it holds
	holders := func() map[int]string {
		h := map[int]string{}
		for i := range testShards {
			l, err := cfg.kc.CoordinationV1().Leases(leaseNs).Get(ctx, shardLeaseID+"-shard-"+strconv.Itoa(i), metav1.GetOptions{})
			if err == nil && l.Spec.HolderIdentity != nil {
				h[i] = *l.Spec.HolderIdentity
			}
		}
		return h
	}
	for id, p := range replicas {
		var got, want string
		var held map[int]string
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			held = holders()
			wantSets := len(namespaces)
			if filtered {
				wantSets = 0
				for _, ns := range namespaces {
					if held[controllerShardOf(ns)] == id {
						wantSets++
					}
				}
			}
			want = fmt.Sprintf("filtered %d, pods %d, statefulsets.apps %d", map[bool]int{true: 1}[filtered], 3*wantSets, wantSets)
			text := p.metricsText(t)
			// a replica that holds no shard has no informers, and reports no series of them: nothing cached
			cached := func(series string) string {
				if v := metricOf(text, series); v != "-" || text == "" {
					return v
				}
				return "0"
			}
			got = fmt.Sprintf("filtered %s, pods %s, statefulsets.apps %s", metricOf(text, "ordinal_shard_informers_filtered"),
				cached(`ordinal_cached_objects{resource="pods"}`), cached(`ordinal_cached_objects{resource="statefulsets.apps"}`))
			return got == want, nil
		})
		if err != nil {
			t.Errorf("%s's caches (server filters by shard: %v; shard holders %v): %s, want %s", id, filtered, held, got, want)
			continue
		}
		t.Logf("%s's caches: %s", id, got)
	}
}

// metricOf is the value of the series named exactly so in a /metrics text ("-" when absent).
func metricOf(text, series string) string {
	for line := range strings.SplitSeq(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return "-"
}

// startShardReplica starts a replica of `ordinal controller --shards` over testShards shards with short
// Lease terms, its Leases in leaseNs, over the sets labelled with the run; extra: more flags (e.g. a fault
// proxy's --kubeconfig).
func startShardReplica(t *testing.T, ctx context.Context, leaseNs, id, run string, extra ...string) *controllerProc {
	t.Helper()
	return startShardReplicaWith(t, ctx, leaseNs, id, run, ctrlOpts{shards: testShards,
		extraArgs: append([]string{"--leader-election-lease-duration", shardLeaseDuration.String(), "--leader-election-renew-deadline", "3s",
			"--leader-election-retry-period", "500ms"}, extra...)})
}

// startShardReplicaWith is startShardReplica with the shards, workers and other arguments of o (make
// bench-scale: its own number of shards, the default Lease terms); the identity, Lease ID and selector are
// the replica's and the run's.
func startShardReplicaWith(t *testing.T, ctx context.Context, leaseNs, id, run string, o ctrlOpts) *controllerProc {
	t.Helper()
	o.identity, o.leaseID, o.selector = id, shardLeaseID, shardRunLabel+"="+run
	p := startController(t, leaseNs, o)
	p.waitReady(ctx)
	return p
}

// shardRunLabel labels a sharded run's sets and pods with the run: the replicas' --selector.
const shardRunLabel = "e2e.ordinal.dev/shard-run"

// inShardRun labels a set and its pods with the run.
func inShardRun(run string) setOpt {
	return func(s *appsv1.StatefulSet) {
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[shardRunLabel] = run
		s.Spec.Template.Labels[shardRunLabel] = run
	}
}

// shardRunSet labels a set and its pods with the run, and makes its rollouts take a few seconds: time to
// kill a replica mid-way.
func shardRunSet(run string) setOpt {
	return func(s *appsv1.StatefulSet) {
		inShardRun(run)(s)
		s.Spec.Template.Annotations[annReadyDelay] = "1s"
	}
}

// spread: of {a, b} the namespaces' shards prefer both, and of {b, c} some prefer c.
// spreadNamespaces finds 4 namespaces of the run in distinct shards that are spread (below), or nil: one
// candidate per shard, then every choice of 4 of them.
func spreadNamespaces(run, a, b, c string) []string {
	byShard := map[int]string{}
	for n := range 10000 {
		ns := fmt.Sprintf("e2e-sharded-%s-%04d", run, n)
		if i := controller.ShardOf(ns, testShards); byShard[i] == "" {
			byShard[i] = ns
		}
	}
	var cands []string
	for i := range testShards {
		if ns := byShard[i]; ns != "" {
			cands = append(cands, ns)
		}
	}
	for i := 0; i < len(cands); i++ {
		for j := i + 1; j < len(cands); j++ {
			for k := j + 1; k < len(cands); k++ {
				for l := k + 1; l < len(cands); l++ {
					if pick := []string{cands[i], cands[j], cands[k], cands[l]}; spread(pick, a, b, c) {
						return pick
					}
				}
			}
		}
	}
	return nil
}

func spread(namespaces []string, a, b, c string) bool {
	prefs := map[string]bool{}
	for _, ns := range namespaces {
		i := controller.ShardOf(ns, testShards)
		prefs[controller.PreferredOwner(i, []string{a, b})] = true
		if controller.PreferredOwner(i, []string{b, c}) == c {
			prefs["c"] = true
		}
	}
	return prefs[a] && prefs[b] && prefs["c"]
}

// waitShardHolders waits until every shard's Lease is held by the replica it prefers among members.
func waitShardHolders(t *testing.T, ctx context.Context, ns string, members []string) {
	t.Helper()
	waitShardHoldersOf(t, ctx, ns, members, testShards)
}

// waitShardHoldersOf is waitShardHolders for a run of that many shards.
func waitShardHoldersOf(t *testing.T, ctx context.Context, ns string, members []string, shards int) {
	t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var wrong []string
		for i := 0; i < shards; i++ {
			want := controller.PreferredOwner(i, members)
			l, err := cfg.kc.CoordinationV1().Leases(ns).Get(ctx, shardLeaseID+"-shard-"+strconv.Itoa(i), metav1.GetOptions{})
			holder := "none"
			if err == nil && l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			if holder != want {
				wrong = append(wrong, fmt.Sprintf("shard %d held by %s, prefers %s", i, holder, want))
			}
		}
		last = strings.Join(wrong, "; ")
		return len(wrong) == 0, nil
	})
	if err != nil {
		t.Fatalf("shards not held by the replicas they prefer among %v: %s", members, last)
	}
	t.Logf("every shard held by the replica it prefers among %v", members)
}

// writers returns the replicas that created or deleted the set's pods, one per unbroken run of writes in
// time order (from the events' names: <set>.<unix nanoseconds in hex>), failing the test if a replica's
// writes to the set resume after another's.
func writers(t *testing.T, ctx context.Context, ns, set string) []string {
	t.Helper()
	type write struct {
		at   int64
		host string
	}
	var ws []write
	for _, reason := range []string{"SuccessfulCreate", "SuccessfulDelete"} {
		evs, err := eventsOf(ctx, ns, set, reason)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Items {
			at, err := strconv.ParseInt(e.Name[strings.LastIndexByte(e.Name, '.')+1:], 16, 64)
			if err != nil || e.Source.Host == "" {
				t.Fatalf("event %s: no time in its name or no source.host (%q)", e.Name, e.Source.Host)
			}
			ws = append(ws, write{at, e.Source.Host})
		}
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].at < ws[j].at })
	var runs []string
	for _, w := range ws {
		if len(runs) > 0 && runs[len(runs)-1] == w.host {
			continue
		}
		if slices.Contains(runs, w.host) {
			t.Errorf("%s/%s: %s wrote again after %v: two replicas wrote the set in turn", ns, set, w.host, runs)
		}
		runs = append(runs, w.host)
	}
	return runs
}

func controllerShardOf(ns string) int { return controller.ShardOf(ns, testShards) }

// rollOutShardedSets creates the set "db" (3 pods) of the run in each namespace, tracking its pods, and waits
// until every one has rolled out.
func rollOutShardedSets(t *testing.T, ctx context.Context, namespaces []string, run string) map[string]*podTracker {
	t.Helper()
	trackers := map[string]*podTracker{}
	for _, ns := range namespaces {
		trackers[ns] = trackPods(t, ctx, ns, "db", true)
		createSet(t, ctx, ns, newSet("db", 3, shardRunSet(run)))
	}
	for _, ns := range namespaces {
		waitRolledOut(t, ctx, ns, "db", 3)
	}
	return trackers
}

package controller

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// selectorSyntax is what kube-apiserver's shard selector parser accepts for one range over the namespace
// (k8s.io/apiserver/pkg/sharding: '0x' and exactly 16 lowercase hex digits, or 2^64 as the end).
var selectorSyntax = regexp.MustCompile(`^shardRange\(object\.metadata\.namespace, '(0x[0-9a-f]{16}|0x10000000000000000)', '(0x[0-9a-f]{16}|0x10000000000000000)'\)$`)

// serverSelector is the API server's own reading of a selector ShardSelector made (apimachinery's sharding
// package: FNV-1a 64 of the field, compared as it compares).
func serverSelector(t testing.TB, sel string) apisharding.Selector {
	t.Helper()
	m := selectorSyntax.FindStringSubmatch(sel)
	if m == nil {
		t.Fatalf("%q is not a selector the API server parses", sel)
	}
	if !apisharding.HexLess(m[1], m[2]) {
		t.Fatalf("%q: start not below end (the server refuses it)", sel)
	}
	return apisharding.NewSelector(apisharding.ShardRangeRequirement{Key: "object.metadata.namespace", Start: m[1], End: m[2]})
}

func inNamespace(ns string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
}

// Shard i's selector selects, on the API server, exactly the namespaces ShardOf puts in shard i: random names
// against the server's hash and comparison, and the hashes at each range's edges against ShardOf's formula.
func TestShardSelectorIsShardOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 5866))
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789-"
	names := []string{"", "default", "kube-system", "team-0", "team-1999"}
	for range 3000 {
		b := make([]byte, 1+rng.IntN(40))
		for j := range b {
			b[j] = letters[rng.IntN(len(letters))]
		}
		names = append(names, string(b))
	}
	for _, n := range []int{1, 2, 3, 5, 7, 8, 16, 100, 1000, 1 << 20, math.MaxInt32} {
		if lo, hi := shardBound(0, n), shardBound(n, n); lo != "0x0000000000000000" || hi != "0x10000000000000000" {
			t.Fatalf("n=%d: the shards span [%s, %s), not the hash space", n, lo, hi)
		}
		for _, ns := range names {
			i := ShardOf(ns, n)
			for _, j := range []int{i - 1, i, i + 1} {
				if j < 0 || j >= n {
					continue
				}
				got, err := serverSelector(t, ShardSelector(j, n)).Matches(inNamespace(ns))
				if err != nil {
					t.Fatal(err)
				}
				if got != (j == i) {
					t.Fatalf("n=%d namespace %q (hash %s, shard %d): shard %d's selector %s matches: %v",
						n, ns, apisharding.HashField(ns), i, j, ShardSelector(j, n), got)
				}
			}
		}
		// The edges: the first and last hash of a sample of ranges, and their neighbours.
		for _, i := range []int{0, 1, n / 2, n - 2, n - 1} {
			if i < 0 || i >= n {
				continue
			}
			var start uint64
			if _, err := fmt.Sscanf(shardBound(i, n), "0x%x", &start); err != nil {
				t.Fatal(err)
			}
			for _, h := range []uint64{start - 1, start, start + 1} {
				if i == 0 && h == start-1 {
					continue
				}
				hex := fmt.Sprintf("0x%016x", h)
				for _, j := range []int{i - 1, i} {
					if j < 0 {
						continue
					}
					m := selectorSyntax.FindStringSubmatch(ShardSelector(j, n))
					in := !apisharding.HexLess(hex, m[1]) && apisharding.HexLess(hex, m[2]) // the server's test
					if in != (shardOfHash(h, n) == j) {
						t.Fatalf("n=%d hash %s: in shard %d's range %v, ShardOf says shard %d", n, hex, j, in, shardOfHash(h, n))
					}
				}
			}
		}
	}
}

// shardFilteringClient is a fake API server with KEP-5866: a list with a shard selector returns only the
// objects it selects, with shardInfo. (Its watches are not filtered: the tests change nothing once started.)
func shardFilteringClient(t testing.TB, objs ...runtime.Object) *fake.Clientset {
	client := fake.NewClientset(objs...)
	client.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		la, ok := a.(k8stesting.ListActionImpl)
		if !ok || la.ListOptions.ShardSelector == "" {
			return false, nil, nil
		}
		sel := serverSelector(t, la.ListOptions.ShardSelector)
		list, err := client.Tracker().List(la.GetResource(), la.GetKind(), la.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return true, nil, err
		}
		var kept []runtime.Object
		for _, o := range items {
			if ok, err := sel.Matches(o); err != nil {
				return true, nil, err
			} else if ok {
				kept = append(kept, o)
			}
		}
		if err := meta.SetList(list, kept); err != nil {
			return true, nil, err
		}
		list.(metav1.ShardedListInterface).SetShardInfo(&metav1.ShardInfo{Selector: sel.String()})
		return true, list, nil
	})
	return client
}

// namespacesOfShards returns, for each of n shards, a namespace in it.
func namespacesOfShards(n int) []string {
	out := make([]string, n)
	for k, left := 0, n; left > 0; k++ {
		ns := fmt.Sprintf("ns-%d", k)
		if i := ShardOf(ns, n); out[i] == "" {
			out[i] = ns
			left--
		}
	}
	return out
}

// shardedManager is a manager sharded n ways over client, its caches chosen as Run chooses them.
func shardedManager(t *testing.T, ctx context.Context, client *fake.Clientset, n int) *Manager {
	t.Helper()
	targets := []snapshot.Target{snapshot.StatefulSetTarget}
	rc, err := newRESTClients(&rest.Config{Host: "http://127.0.0.1:1"}, targets...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newManager(Config{Module: &module.Ref{}, Targets: targets, Sharding: &Sharding{Shards: n,
		LeaderElection: LeaderElection{Namespace: "ordinal", Name: "o", Identity: "a"}}}, client, rc)
	if err != nil {
		t.Fatal(err)
	}
	m.logger, m.shards.logger = klog.Background(), klog.Background()
	if err := m.chooseCaches(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.caches.stopAll)
	return m
}

// objectsIn are a set with one pod, revision and claim in each namespace.
func objectsIn(namespaces []string) []runtime.Object {
	var objs []runtime.Object
	for _, ns := range namespaces {
		set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", UID: types.UID("uid-" + ns)}}
		owned := metav1.ObjectMeta{Namespace: ns, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1",
			Kind: "StatefulSet", Name: "web", UID: set.UID, Controller: ptr.To(true)}}}
		pod, rev, claim := &corev1.Pod{ObjectMeta: owned}, &appsv1.ControllerRevision{ObjectMeta: owned}, &corev1.PersistentVolumeClaim{ObjectMeta: owned}
		pod.Name, rev.Name, claim.Name = "web-0", "web-1234", "data-web-0"
		objs = append(objs, set, pod, rev, claim)
	}
	return objs
}

// Over a server that filters by shard: taking a shard starts informers holding that shard's objects alone,
// every lookup of its namespaces goes to them and none of another's does, and releasing it drops them.
func TestShardCachesFollowTheShards(t *testing.T) {
	ctx := t.Context()
	const n = 4
	namespaces := namespacesOfShards(n)
	m := shardedManager(t, ctx, shardFilteringClient(t, objectsIn(namespaces)...), n)
	c := m.controllers[0]
	if !m.caches.perShard || metricValue(m.metrics.shardInformersFiltered) != 1 {
		t.Fatalf("a server filtering by shard: per shard %v, ordinal_shard_informers_filtered %v", m.caches.perShard, metricValue(m.metrics.shardInformersFiltered))
	}
	none := map[string]int{"pods": 0, "controllerrevisions": 0, "persistentvolumeclaims": 0, "statefulsets.apps": 0}
	if got := m.caches.cached(); fmt.Sprint(got) != fmt.Sprint(none) {
		t.Fatalf("nothing held: cached %v, want %v (a series of 0 per resource, not none)", got, none)
	}
	if err := m.caughtUp(ctx, 1); err != nil {
		t.Fatal(err)
	}
	g := m.caches.ofShard(1)
	if g == nil || m.caches.of(namespaces[1]) != g {
		t.Fatalf("shard 1's namespace is not routed to shard 1's caches")
	}
	want := map[string]int{"pods": 1, "controllerrevisions": 1, "persistentvolumeclaims": 1, "statefulsets.apps": 1}
	if got := m.caches.cached(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("shard 1 held: cached %v, want %v (its namespace's objects alone)", got, want)
	}
	set, err := c.setsIn(namespaces[1]).Get("web")
	if err != nil {
		t.Fatal(err)
	}
	if objs, err := c.candidates(set); err != nil || len(objs.Pods) != 1 || len(objs.Revisions) != 1 || len(objs.Claims) != 1 {
		t.Fatalf("shard 1's set: candidates %d pods, %d revisions, %d claims (%v)", len(objs.Pods), len(objs.Revisions), len(objs.Claims), err)
	}
	if _, err := c.setsIn(namespaces[2]).Get("web"); err == nil || m.caches.of(namespaces[2]) != nil {
		t.Fatal("a namespace of shard 2, not held, is looked up in caches")
	}
	if err := m.caughtUp(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if m.caches.of(namespaces[2]) == nil || m.caches.of(namespaces[2]) == g || len(c.allSets()) != 2 {
		t.Fatalf("shard 2 taken: its own caches %v, sets %d", m.caches.of(namespaces[2]) != g, len(c.allSets()))
	}

	// What the controller keeps per set goes with the shard's caches.
	for _, ns := range namespaces[1:3] {
		c.setCacheOf(ns+"/web", c.now())
		c.held.Store(ns+"/web", true)
		c.consistency.WroteAt(types.NamespacedName{Namespace: ns, Name: "web"}, "u", podResource, "1")
	}
	m.shards.released(1) // as the shard's elector does once its Lease is released or lost
	_, cached1 := c.setCaches.Load(namespaces[1] + "/web")
	_, held1 := c.held.Load(namespaces[1] + "/web")
	_, cached2 := c.setCaches.Load(namespaces[2] + "/web")
	if cached1 || held1 || !cached2 || c.consistency.Len() != 1 {
		t.Fatalf("shard 1 released: its set's state kept %v %v, shard 2's dropped %v, writes waited for %d",
			cached1, held1, !cached2, c.consistency.Len())
	}
	if !g.pods.IsStopped() || !g.sets[snapshot.StatefulSetTarget.GroupResource()].IsStopped() {
		t.Fatal("shard 1 released, its informers still run")
	}
	if m.caches.of(namespaces[1]) != nil || len(c.allSets()) != 1 || m.caches.cached()["pods"] != 1 {
		t.Fatalf("shard 1 released: still routed %v, sets %d, cached %v", m.caches.of(namespaces[1]) != nil, len(c.allSets()), m.caches.cached())
	}
	if _, err := c.candidates(set); err == nil {
		t.Fatal("a set of a released shard still has candidates")
	}
	// Taken again, afresh.
	if err := m.caughtUp(ctx, 1); err != nil || m.caches.ofShard(1) == g || m.caches.ofShard(1) == nil {
		t.Fatalf("shard 1 taken again: %v", err)
	}
}

// A shard's Lease lost while its caches start: none are left running.
func TestShardCachesNotStartedForALostLease(t *testing.T) {
	m := shardedManager(t, t.Context(), shardFilteringClient(t), 2)
	lost, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.caches.acquire(lost, 0); err == nil || m.caches.ofShard(0) != nil {
		t.Fatalf("acquire under a lost Lease: %v, caches %v", err, m.caches.ofShard(0) != nil)
	}
}

// Over a server without the feature (it ignores the selector: no shardInfo), every shard reads the one
// cache of every namespace, and said so.
func TestShardCachesFallBackToOneCache(t *testing.T) {
	ctx := t.Context()
	const n = 4
	namespaces := namespacesOfShards(n)
	m := shardedManager(t, ctx, fake.NewClientset(objectsIn(namespaces)...), n)
	if m.caches.perShard || m.caches.all == nil || metricValue(m.metrics.shardInformersFiltered) != 0 {
		t.Fatalf("a server not filtering: per shard %v, ordinal_shard_informers_filtered %v", m.caches.perShard, metricValue(m.metrics.shardInformersFiltered))
	}
	m.caches.all.start(ctx)
	if err := m.caughtUp(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		if m.caches.of(ns) != m.caches.all {
			t.Fatalf("namespace %s not routed to the one cache", ns)
		}
	}
	if got := m.caches.cached()["pods"]; got != n {
		t.Fatalf("the one cache holds %d pods, want %d", got, n)
	}
	m.caches.release(1) // the one cache stays
	if m.caches.ofShard(1) != m.caches.all || m.caches.all.pods.IsStopped() {
		t.Fatal("releasing a shard stopped the one cache")
	}
}

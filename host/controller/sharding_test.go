package controller

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

func active(s *shards) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for i, st := range s.state {
		if st == shardActive {
			out = append(out, i)
		}
	}
	return out
}

// Two replicas on one API (client-go's fake, with its Lease semantics run by the real electors) split the
// shards as rendezvous hashing says; one stopping releases its Leases, and the other takes every shard.
func TestShardsSplitAndHandOver(t *testing.T) {
	client := fake.NewClientset()
	const n = 6
	var mu sync.Mutex
	// by replica: the shards whose caches it started (caughtUp) and dropped (released)
	took, released := map[string][]int{}, map[string][]int{}
	newReplica := func(id string) (*shards, context.CancelFunc) {
		s := newShards(Sharding{Shards: n, LeaderElection: LeaderElection{Namespace: "ordinal", Name: "o", Identity: id,
			LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}}, client, NewMetrics(nil))
		s.caughtUp = func(_ context.Context, i int) error {
			mu.Lock()
			defer mu.Unlock()
			took[id] = append(took[id], i)
			return nil
		}
		s.enqueue = func(int) {}
		s.released = func(i int) {
			mu.Lock()
			defer mu.Unlock()
			released[id] = append(released[id], i)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := s.start(ctx, func(err error) { t.Errorf("%s: %v", id, err) }); err != nil {
			t.Fatal(err)
		}
		return s, cancel
	}
	a, stopA := newReplica("a")
	b, stopB := newReplica("b")
	defer func() { stopB(); b.Stop() }()
	var wantA, wantB []int
	for i := 0; i < n; i++ {
		if PreferredOwner(i, []string{"a", "b"}) == "a" {
			wantA = append(wantA, i)
		} else {
			wantB = append(wantB, i)
		}
	}
	if len(wantA) == 0 || len(wantB) == 0 {
		t.Fatalf("the case needs shards preferring each: a %v, b %v", wantA, wantB)
	}
	waitUntil := func(desc string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true,
			func(context.Context) (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("%s: a syncs %v, b %v", desc, active(a), active(b))
		}
	}
	waitUntil("split by preference", func() bool { return slices.Equal(active(a), wantA) && slices.Equal(active(b), wantB) })

	stopA()
	a.Stop()
	for _, i := range wantA {
		l, err := client.CoordinationV1().Leases("ordinal").Get(context.Background(), shardLeaseName("o", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := l.Spec.HolderIdentity; h != nil && *h == "a" {
			t.Errorf("shard %d's Lease still held by a after Stop", i)
		}
	}
	mu.Lock()
	slices.Sort(took["a"])
	slices.Sort(released["a"])
	if !slices.Equal(released["a"], took["a"]) || !slices.Equal(slices.Compact(slices.Clone(took["a"])), took["a"]) {
		t.Errorf("a stopped: took shards %v, dropped the caches of %v (each take once, each dropped once)", took["a"], released["a"])
	}
	mu.Unlock()
	all := []int{0, 1, 2, 3, 4, 5}
	waitUntil("b takes every shard", func() bool { return slices.Equal(active(b), all) })
}

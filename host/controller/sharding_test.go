package controller

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
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
		// The electors renew in real time: a term lapses when no renewal lands within RenewDeadline, and a
		// lapsed term is taken again (a second take). 14 electors renewing every 100 ms under -race on a
		// loaded machine missed a 1.5 s deadline; 5 s at 250 ms does not (a's release, not expiry, hands over).
		s := newShards(Sharding{Shards: n, LeaderElection: LeaderElection{Namespace: "ordinal", Name: "o", Identity: id,
			LeaseDuration: 6 * time.Second, RenewDeadline: 5 * time.Second, RetryPeriod: 250 * time.Millisecond}}, client, NewMetrics(nil))
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

// A shard's term ends RenewDeadline after the start of its last Lease write as holder (the Lease's whole
// seconds, less the flags' LeaseDuration-RenewDeadline margin); once it passes unrenewed, the syncs in flight
// are cancelled, no new one begins, and the elector is stopped (the shard is competed for again).
func TestShardTermEndsSyncs(t *testing.T) {
	s := newShards(Sharding{Shards: 4, LeaderElection: LeaderElection{Name: "o", Identity: "a",
		LeaseDuration: 4500 * time.Millisecond, RenewDeadline: 3 * time.Second}}, nil, NewMetrics(nil))
	s.logger = klog.Background()
	ns := "team-x"
	i := ShardOf(ns, 4)
	stopped := make(chan struct{})
	c := holdForTest(s, i, func() { close(stopped) })
	start := time.Now()
	s.renewed(c, i, start, 4) // the Lease says 4 s (the flag's 4.5 s truncated): others wait 4 s
	s.mu.Lock()
	until := c.until
	s.mu.Unlock()
	if want := start.Add(2500 * time.Millisecond); !until.Equal(want) {
		t.Errorf("term until %v after the write's start, want 2.5s", until.Sub(start))
	}
	sctx, syncDone, ok := s.begin(context.Background(), ns)
	if !ok {
		t.Fatal("a held shard refused a sync")
	}
	s.renewed(c, i, time.Now().Add(-time.Hour), 4) // as if the last renewal had started long ago
	<-sctx.Done()
	<-stopped
	syncDone()
	if _, _, ok := s.begin(context.Background(), ns); ok {
		t.Error("a sync began after the term lapsed")
	}
	s.renewed(c, i, time.Now(), 4) // a late renewal does not revive a lapsed term: the shard is taken anew
	if _, _, ok := s.begin(context.Background(), ns); ok {
		t.Error("a sync began on a lapsed term renewed late")
	}
}

// client-go releases a Lease (writes it with no holder, which anyone may take at once) only through
// shardLock: never one last read as another's, and only once no sync of the shard is in flight.
func TestShardLockRelease(t *testing.T) {
	client := fake.NewClientset(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ordinal", Name: "o-shard-0"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("b"), LeaseDurationSeconds: ptr.To[int32](15)}})
	s := newShards(Sharding{Shards: 1, LeaderElection: LeaderElection{Namespace: "ordinal", Name: "o", Identity: "a"}}, client, NewMetrics(nil))
	ns := "team-x"
	c := holdForTest(s, 0, func() {})
	lock := &shardLock{Interface: s.leaseLock("o-shard-0"), s: s, c: c, i: 0}
	ctx := context.Background()
	if _, _, err := lock.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lock.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1}); err == nil {
		t.Error("released a Lease read as b's")
	}
	if err := lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "a", LeaseDurationSeconds: 15}); err != nil {
		t.Fatal(err)
	}
	_, syncDone, ok := s.begin(ctx, ns)
	if !ok {
		t.Fatal("a held shard refused a sync")
	}
	var inflightAtRelease []int
	client.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease); l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			s.mu.Lock()
			inflightAtRelease = append(inflightAtRelease, s.inflight[0])
			s.mu.Unlock()
		}
		return false, nil, nil
	})
	released := make(chan error)
	go func() { released <- lock.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1}) }()
	waitState(s, 0, shardDraining)
	syncDone()
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inflightAtRelease, []int{0}) {
		t.Errorf("syncs in flight at each release write: %v, want one release with none", inflightAtRelease)
	}
}

package controller

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/big"
	"slices"
	"testing"
	"time"
)

// ShardOf is the hash range the design names: shard i = [i*2^64/n, (i+1)*2^64/n) of FNV-1a 64 of the name,
// computed here with exact arithmetic.
func TestShardOfIsTheHashRange(t *testing.T) {
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	for _, n := range []int{2, 3, 7, 16, 1000} {
		for k := 0; k < 2000; k++ {
			ns := fmt.Sprintf("team-%d", k)
			h := fnv.New64a()
			h.Write([]byte(ns))
			hv := new(big.Int).SetUint64(h.Sum64())
			got := ShardOf(ns, n)
			lo := new(big.Int).Div(new(big.Int).Mul(big.NewInt(int64(got)), two64), big.NewInt(int64(n)))
			hi := new(big.Int).Div(new(big.Int).Mul(big.NewInt(int64(got+1)), two64), big.NewInt(int64(n)))
			if hv.Cmp(lo) < 0 || hv.Cmp(hi) >= 0 {
				t.Fatalf("ShardOf(%q, %d) = %d, but its hash %s is outside [%s, %s)", ns, n, got, hv, lo, hi)
			}
		}
	}
	// FNV-1a 64 of "" is its offset basis 0xcbf29ce484222325: in the upper half.
	if got := ShardOf("", 2); got != 1 {
		t.Errorf("ShardOf(\"\", 2) = %d, want 1", got)
	}
	if got := ShardOf("anything", 1); got != 0 {
		t.Errorf("one shard: got %d", got)
	}
}

func owners(n int, members []string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = PreferredOwner(i, members)
	}
	return out
}

// Rendezvous hashing: the choice does not depend on the members' order, a member leaving moves only its
// shards, a member joining takes shards only for itself, and the shards spread.
func TestPreferredOwnerRendezvous(t *testing.T) {
	const n = 64
	abc := []string{"replica-a", "replica-b", "replica-c"}
	base := owners(n, abc)
	if got := owners(n, []string{"replica-c", "replica-a", "replica-b"}); !slices.Equal(got, base) {
		t.Fatalf("the choice depends on the members' order:\n%v\n%v", base, got)
	}
	per := map[string]int{}
	for _, o := range base {
		per[o]++
	}
	for _, m := range abc {
		if per[m] < n/6 {
			t.Errorf("member %s is preferred by %d of %d shards: %v", m, per[m], n, per)
		}
	}
	without := owners(n, []string{"replica-a", "replica-c"})
	for i := range base {
		if base[i] != "replica-b" && without[i] != base[i] {
			t.Errorf("shard %d moved from %s to %s when replica-b left", i, base[i], without[i])
		}
		if without[i] == "replica-b" {
			t.Errorf("shard %d prefers replica-b, which left", i)
		}
	}
	with := owners(n, append(slices.Clone(abc), "replica-d"))
	moved := 0
	for i := range base {
		if with[i] != base[i] {
			moved++
			if with[i] != "replica-d" {
				t.Errorf("shard %d moved from %s to %s when replica-d joined", i, base[i], with[i])
			}
		}
	}
	if moved == 0 || moved > n/2 {
		t.Errorf("replica-d joining moved %d of %d shards", moved, n)
	}
	if PreferredOwner(3, nil) != "" {
		t.Error("no members: want no owner")
	}
}

func TestDecideShards(t *testing.T) {
	t0 := time.Unix(1000, 0)
	settle := 30 * time.Second
	live := map[string]time.Time{"a": t0, "b": t0}
	const n = 8
	pref := owners(n, []string{"a", "b"})
	mineA := func() (m map[int]bool) {
		m = map[int]bool{}
		for i, o := range pref {
			if o == "a" {
				m[i] = true
			}
		}
		return m
	}
	if len(mineA()) == 0 || len(mineA()) == n {
		t.Fatalf("the case needs shards preferring each: %v", pref)
	}

	// Starting: a competes for exactly the shards preferring it.
	d := decideShards("a", n, live, nil, nil, t0, settle)
	if got := toSet(d.Acquire); !mapsEqual(got, mineA()) || d.Release != nil || d.Abandon != nil {
		t.Errorf("start: %+v, want to acquire %v", d, mineA())
	}
	// Competing already: nothing more to do.
	if d := decideShards("a", n, live, mineA(), mineA(), t0, settle); d.Acquire != nil || d.Release != nil || d.Abandon != nil {
		t.Errorf("steady: %+v", d)
	}

	// a holds every shard (b just joined): it keeps b's until b has been live for settle, then gives them up.
	all := map[int]bool{}
	for i := 0; i < n; i++ {
		all[i] = true
	}
	joined := map[string]time.Time{"a": t0, "b": t0.Add(time.Minute)}
	if d := decideShards("a", n, joined, all, all, t0.Add(time.Minute+settle-time.Second), settle); d.Release != nil {
		t.Errorf("gave up %v to a member live for less than settle", d.Release)
	}
	d = decideShards("a", n, joined, all, all, t0.Add(time.Minute+settle), settle)
	if got, want := toSet(d.Release), complement(mineA(), n); !mapsEqual(got, want) {
		t.Errorf("after settle: release %v, want %v", d.Release, want)
	}

	// b gone: a competes for every shard; a shard competed for (not held) that now prefers b is abandoned.
	d = decideShards("a", n, map[string]time.Time{"a": t0}, mineA(), mineA(), t0, settle)
	if got := toSet(d.Acquire); !mapsEqual(got, complement(mineA(), n)) {
		t.Errorf("b gone: acquire %v", d.Acquire)
	}
	bs := complement(mineA(), n)
	d = decideShards("a", n, live, nil, bs, t0, settle)
	if got := toSet(d.Abandon); !mapsEqual(got, bs) {
		t.Errorf("abandon %v, want %v", d.Abandon, bs)
	}
}

func toSet(xs []int) map[int]bool {
	m := map[int]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func complement(m map[int]bool, n int) map[int]bool {
	out := map[int]bool{}
	for i := 0; i < n; i++ {
		if !m[i] {
			out[i] = true
		}
	}
	return out
}

func mapsEqual(a, b map[int]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// A member is live while its Lease record changes within its duration on this replica's clock, whatever
// the renewTime it carries.
func TestMemberTracker(t *testing.T) {
	var tr memberTracker
	t0 := time.Unix(5000, 0)
	d := 10 * time.Second
	tr.observe("m-a", "a", "1999-01-01T00:00:00Z", d, t0) // another machine's clock, far behind
	tr.observe("m-gone", "", "r", d, t0)                  // released
	if got := tr.live(t0.Add(time.Second)); len(got) != 1 || !got["a"].Equal(t0) {
		t.Fatalf("live = %v, want a since t0", got)
	}
	tr.observe("m-a", "a", "1999-01-01T00:00:00Z", d, t0.Add(9*time.Second)) // unchanged: no renewal
	if got := tr.live(t0.Add(d)); len(got) != 0 {
		t.Errorf("a unrenewed for its duration is still live: %v", got)
	}
	tr.observe("m-a", "a", "1999-01-01T00:00:05Z", d, t0.Add(11*time.Second)) // renewed
	if got := tr.live(t0.Add(12 * time.Second)); !got["a"].Equal(t0.Add(11 * time.Second)) {
		t.Errorf("a renewed after lapsing: live since %v, want the renewal", got["a"])
	}
	tr.observe("m-a", "a", "1999-01-01T00:00:07Z", d, t0.Add(15*time.Second))
	if got := tr.live(t0.Add(16 * time.Second)); !got["a"].Equal(t0.Add(11 * time.Second)) {
		t.Errorf("a renewed while live: live since %v, want unchanged", got["a"])
	}
	tr.forget("m-a")
	if got := tr.live(t0.Add(16 * time.Second)); len(got) != 0 {
		t.Errorf("forgotten: %v", got)
	}
}

func TestMemberLeaseName(t *testing.T) {
	a, b := memberLeaseName("ordinal", "node_1"), memberLeaseName("ordinal", "node-1")
	if a == b || b != "ordinal-member-node-1" {
		t.Errorf("names %q and %q", a, b)
	}
	if len(a) == 0 || notNameChars.MatchString(a) {
		t.Errorf("%q is not a valid name", a)
	}
	if err := (Sharding{Shards: 4, LeaderElection: LeaderElection{Name: "ordinal"}}).validate(); err == nil {
		t.Error("no identity: want an error")
	}
	if err := (Sharding{Shards: 0, LeaderElection: LeaderElection{Name: "ordinal", Identity: "x"}}).validate(); err == nil {
		t.Error("0 shards: want an error")
	}
}

// Giving up a shard: once draining, no new sync begins, and the Lease is released only after the syncs in
// flight end.
func TestAbandonDrainsBeforeRelease(t *testing.T) {
	s := newShards(Sharding{Shards: 4, LeaderElection: LeaderElection{Name: "o", Identity: "a"}}, nil, NewMetrics(nil))
	ns := "team-x"
	i := ShardOf(ns, 4)
	if _, _, ok := s.begin(context.Background(), ns); ok {
		t.Fatal("a shard not held began a sync")
	}
	released := make(chan struct{})
	holdForTest(s, i, func() { close(released) })
	_, syncDone, ok := s.begin(context.Background(), ns)
	if !ok {
		t.Fatal("an active shard refused a sync")
	}
	done := make(chan struct{})
	go func() { s.abandon(i, true); close(done) }()
	waitState(s, i, shardDraining)
	if _, _, ok := s.begin(context.Background(), ns); ok {
		t.Error("a draining shard began a sync")
	}
	select {
	case <-released:
		t.Fatal("released with a sync in flight")
	default:
	}
	syncDone()
	<-done
	<-released
}

// holdForTest makes shard i held and active, its term an hour long, as if its Lease had just been written.
func holdForTest(s *shards, i int, cancel context.CancelFunc) *competition {
	c := &competition{cancel: cancel}
	s.mu.Lock()
	s.competing[i] = c
	s.mu.Unlock()
	s.renewed(c, i, time.Now(), 3600)
	s.setState(i, shardActive)
	return c
}

func waitState(s *shards, i int, want shardState) {
	for {
		s.mu.Lock()
		st := s.state[i]
		s.mu.Unlock()
		if st == want {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// A take whose Lease was lost before client-go's OnStartedLeading goroutine ran leaves the shard not held:
// marked catching up then, it would count as held, never be synced and never be competed for again.
func TestTakeLostBeforeItsCallbackIsNotHeld(t *testing.T) {
	s := newShards(Sharding{Shards: 4, LeaderElection: LeaderElection{Name: "o", Identity: "a"}}, nil, NewMetrics(nil))
	lost, cancel := context.WithCancel(context.Background())
	cancel()
	if s.startCatchingUp(lost, 2) {
		t.Error("a take whose Lease had ended started catching up")
	}
	if st := s.state[2]; st != shardNone {
		t.Errorf("shard 2 is %v, want not held", st)
	}
	if !s.startCatchingUp(context.Background(), 1) {
		t.Fatal("a take whose Lease is held did not start catching up")
	}
	if st := s.state[1]; st != shardCatchingUp {
		t.Errorf("shard 1 is %v, want catching up", st)
	}
}

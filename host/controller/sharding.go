package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// Sharding configures several replicas splitting the sets by namespace (docs/scale.md): Shards hash ranges
// of the namespace, one Lease each (<Name>-shard-<i>) and one Lease per live replica (<Name>-member-<identity>),
// all in Namespace, held with client-go's leader election.
type Sharding struct {
	Shards int
	LeaderElection
}

// ErrMemberLost is returned when a sharded replica could not renew its member Lease: the others count it
// gone and take its shards, so it stops (and is restarted, as after losing the leader Lease).
var ErrMemberLost = errors.New("member lease lost")

// shardState is what a replica may do with a shard's sets.
type shardState int

const (
	shardNone       shardState = iota // not held: its keys are dropped
	shardCatchingUp                   // held; the caches are not yet known to have the previous owner's writes
	shardActive                       // held and caught up: its sets are synced
	shardDraining                     // being given up: no new syncs; released once those in flight end
)

// shards runs this replica's side of sharding: its member Lease, one elector per shard it competes for,
// and the gate the workers pass before each sync.
type shards struct {
	cfg     Sharding
	client  kubernetes.Interface
	leases  coordlisters.LeaseNamespaceLister
	factory informers.SharedInformerFactory
	// caughtUp waits until the caches have the writes made to a shard before the call (handover.go).
	caughtUp func(ctx context.Context, shard int) error
	// enqueue enqueues the sets of a shard that became active.
	enqueue func(shard int)
	// released drops what the replica cached for a shard it no longer holds (nil: nothing to drop).
	released func(shard int)
	metrics  *Metrics
	logger   klog.Logger

	mu        sync.Mutex
	changed   *sync.Cond // on state and inflight changes
	state     []shardState
	inflight  []int
	competing map[int]*competition // electors running, by shard
	electors  sync.WaitGroup
	members   memberTracker
	// stopMember ends the member elector (releasing its Lease)
	stopMember context.CancelFunc
	// stopped: Stop has begun; no elector starts after it (a last rebalance may still be running)
	stopped bool
}

// competition is one elector of a shard's Lease and, while it holds the Lease, its term (under shards.mu).
//
// client-go's elector tells the holder it lost the Lease late: it gives up renewing RenewDeadline after its
// last renewal, then releases (a request that can hang for another RenewDeadline, past LeaseDuration) and only
// then cancels the leader's context and calls OnStoppedLeading; and syncs in flight were never told. So the
// term is kept here, from the Lease writes themselves (shardLock): syncs of the shard may start only until
// `until`, RenewDeadline after the start of the last successful write of the Lease as holder (another replica
// counts LeaseDuration from when it saw that write, later), and ctx, which every sync of the shard runs under,
// is cancelled when `until` passes unrenewed. The LeaseDuration-RenewDeadline margin is for a request sent
// before then to reach the API server before the Lease can be taken (Kubernetes has no fencing).
type competition struct {
	cancel context.CancelFunc

	until   time.Time
	ctx     context.Context // the term's; done once it lapses or the Lease is lost (nil before the first write)
	endTerm context.CancelFunc
	timer   *time.Timer
	holder  string // of the Lease as last read
}

func newShards(cfg Sharding, client kubernetes.Interface, metrics *Metrics) *shards {
	le := &cfg.LeaderElection
	le.defaults()
	s := &shards{cfg: cfg, client: client, metrics: metrics,
		state: make([]shardState, cfg.Shards), inflight: make([]int, cfg.Shards), competing: map[int]*competition{}}
	s.changed = sync.NewCond(&s.mu)
	s.factory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(le.Namespace))
	s.leases = s.factory.Coordination().V1().Leases().Lister().Leases(le.Namespace)
	return s
}

// validate reports what is wrong with the configuration, naming the flag.
func (cfg Sharding) validate() error {
	switch {
	case cfg.Shards < 1:
		return fmt.Errorf("--shards %d: must be at least 1", cfg.Shards)
	case cfg.Identity == "":
		return fmt.Errorf("--shards: an --identity is required")
	case memberLeaseName(cfg.Name, cfg.Identity) == "":
		return fmt.Errorf("--identity %q with --leader-election-id %q makes a member Lease name over 253 characters", cfg.Identity, cfg.Name)
	}
	return nil
}

// begin is the gate a worker passes before syncing a set of namespace ns: false when this replica may not
// sync it now (the key is dropped; the owner syncs it). true counts the sync in flight until done is called,
// and returns ctx made to end with the shard's term: the sync's writes stop when the Lease may be lost.
func (s *shards) begin(ctx context.Context, ns string) (context.Context, func(), bool) {
	i := ShardOf(ns, s.cfg.Shards)
	s.mu.Lock()
	c := s.competing[i]
	if s.state[i] != shardActive || c == nil || c.ctx == nil || c.ctx.Err() != nil || !time.Now().Before(c.until) {
		s.mu.Unlock()
		return ctx, nil, false
	}
	s.inflight[i]++
	term := c.ctx
	s.mu.Unlock()
	sctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(term, cancel)
	return sctx, func() { stop(); cancel(); s.end(i) }, true
}

func (s *shards) end(i int) {
	s.mu.Lock()
	s.inflight[i]--
	s.mu.Unlock()
	s.changed.Broadcast()
}

func (s *shards) setState(i int, st shardState) {
	s.mu.Lock()
	s.setStateLocked(i, st)
	s.mu.Unlock()
}

// setStateLocked is setState with s.mu held.
func (s *shards) setStateLocked(i int, st shardState) {
	s.state[i] = st
	n := 0
	for _, x := range s.state {
		if x != shardNone {
			n++
		}
	}
	s.changed.Broadcast()
	s.metrics.shardsHeld.Set(float64(n))
}

// startCatchingUp marks shard i taken and catching up unless lctx, the Lease's, has already ended: client-go
// calls OnStartedLeading in a goroutine, which may run after the Lease was lost and OnStoppedLeading marked
// the shard not held; marking it then would leave it held, never synced and never competed for again.
func (s *shards) startCatchingUp(lctx context.Context, i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lctx.Err() != nil { // checked and set under the lock: OnStoppedLeading comes after the cancel
		return false
	}
	s.setStateLocked(i, shardCatchingUp)
	return true
}

// start holds the member Lease and, while it does and ctx is not done, keeps the shards' electors as
// decideShards says; memberLost is told if the member Lease is lost (ErrMemberLost). Stop releases what is held.
func (s *shards) start(ctx context.Context, memberLost func(error)) error {
	le := s.cfg.LeaderElection
	s.logger = klog.FromContext(ctx).WithValues("identity", le.Identity)
	s.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), s.factory.Coordination().V1().Leases().Informer().HasSynced) {
		return ctx.Err()
	}
	name := memberLeaseName(le.Name, le.Identity)
	// The member elector runs until Stop (not ctx): its Lease is released after the shards'.
	mctx, mcancel := context.WithCancel(context.WithoutCancel(ctx))
	elector, err := s.elector(name, s.leaseLock(name), le.Watchdog, leaderelection.LeaderCallbacks{
		OnStartedLeading: func(lctx context.Context) {
			s.logger.Info("Joined the sharded replicas", "lease", le.Namespace+"/"+name, "shards", s.cfg.Shards)
			wait := time.NewTicker(le.RetryPeriod)
			defer wait.Stop()
			for {
				s.rebalance(ctx)
				select {
				case <-ctx.Done():
					return
				case <-lctx.Done():
					return
				case <-wait.C:
				}
			}
		},
		OnStoppedLeading: func() {
			if mctx.Err() == nil {
				memberLost(fmt.Errorf("%w: %s/%s", ErrMemberLost, le.Namespace, name))
			}
		},
	})
	if err != nil {
		mcancel()
		return err
	}
	s.electors.Go(func() { elector.Run(mctx) })
	s.stopMember = mcancel
	return nil
}

// Stop releases every shard (the workers have stopped: no sync is in flight), then the member Lease.
func (s *shards) Stop() {
	s.mu.Lock()
	s.stopped = true
	for i, c := range s.competing {
		c.cancel()
		delete(s.competing, i)
	}
	s.mu.Unlock()
	if s.stopMember != nil {
		s.stopMember()
	}
	s.electors.Wait()
	s.factory.Shutdown()
}

// rebalance looks at the member Leases once and acts on decideShards.
func (s *shards) rebalance(ctx context.Context) {
	now := time.Now()
	prefix := memberLeasePrefix(s.cfg.Name)
	all, err := s.leases.List(labels.Everything())
	if err != nil {
		return
	}
	present := map[string]bool{}
	for _, l := range all {
		if !strings.HasPrefix(l.Name, prefix) {
			continue
		}
		present[l.Name] = true
		holder, renew, d := leaseRecord(l)
		s.members.observe(l.Name, holder, renew, d, now)
	}
	for name := range s.members.seen {
		if !present[name] {
			s.members.forget(name)
		}
	}
	live := s.members.live(now)
	if _, ok := live[s.cfg.Identity]; !ok { // our own renewals may not have reached the informer yet
		live[s.cfg.Identity] = now
	}
	s.mu.Lock()
	held, competing := map[int]bool{}, map[int]bool{}
	for i, st := range s.state {
		if st != shardNone {
			held[i] = true
		}
	}
	for i := range s.competing {
		competing[i] = true
	}
	s.mu.Unlock()
	d := decideShards(s.cfg.Identity, s.cfg.Shards, live, held, competing, now, 2*s.cfg.LeaseDuration)
	for _, i := range d.Acquire {
		s.compete(ctx, i)
	}
	for _, i := range d.Abandon {
		s.abandon(i, false)
	}
	for _, i := range d.Release {
		s.abandon(i, true)
	}
}

func leaseRecord(l *coordinationv1.Lease) (holder, renew string, d time.Duration) {
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime != nil {
		renew = l.Spec.RenewTime.Format(time.RFC3339Nano)
	}
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return holder, renew, d
}

// compete starts the elector of shard i. Holding its Lease, the replica syncs the shard's sets once the
// caches have caught up (the handover rule).
func (s *shards) compete(ctx context.Context, i int) {
	name := shardLeaseName(s.cfg.Name, i)
	ectx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var led atomic.Bool // this elector held the Lease: only then may it have started caches to drop
	c := &competition{cancel: cancel}
	lock := &shardLock{Interface: s.leaseLock(name), s: s, c: c, i: i}
	elector, err := s.elector(name, lock, nil, leaderelection.LeaderCallbacks{
		OnStartedLeading: func(lctx context.Context) {
			if !s.startCatchingUp(lctx, i) {
				return // lost before this callback ran (client-go runs it in a goroutine of its own)
			}
			led.Store(true)
			s.logger.Info("Took shard; waiting for the caches to have its previous owner's writes", "shard", i, "lease", name)
			// A failed read is retried while the Lease is held: the shard must not stay held and unsynced.
			for err := s.caughtUp(lctx, i); err != nil; err = s.caughtUp(lctx, i) {
				if lctx.Err() != nil {
					return // lost or given up meanwhile
				}
				s.logger.Error(err, "Cannot tell whether the caches have the shard's writes; retrying", "shard", i)
				select {
				case <-lctx.Done():
					return
				case <-time.After(s.cfg.RetryPeriod):
				}
			}
			s.mu.Lock()
			ok := s.state[i] == shardCatchingUp
			if ok {
				s.state[i] = shardActive
			}
			s.mu.Unlock()
			if ok {
				s.logger.Info("Syncing shard", "shard", i)
				s.enqueue(i)
			}
		},
		OnStoppedLeading: func() {
			s.mu.Lock()
			was := s.state[i]
			if c.ctx != nil {
				c.endTerm()
				c.timer.Stop()
			}
			s.mu.Unlock()
			// Before the state: a shard not held may be competed for again, and its next take starts afresh.
			// Only an elector that led: one abandoned before leading may end after the next one took the shard.
			if s.released != nil && led.Load() {
				s.released(i)
			}
			s.setState(i, shardNone)
			if was != shardNone && was != shardDraining {
				s.logger.Info("Lost shard: its Lease was not renewed in time", "shard", i, "lease", name)
			}
		},
	})
	if err != nil {
		cancel()
		s.logger.Error(err, "Cannot compete for shard", "shard", i)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		cancel()
		return
	}
	s.competing[i] = c
	s.electors.Go(func() { // under mu, so never after Stop's Wait has begun
		elector.Run(ectx)
		s.mu.Lock()
		if s.competing[i] == c { // lost, not given up: competed for again at the next look
			delete(s.competing, i)
		}
		s.mu.Unlock()
		cancel()
	})
}

// abandon stops competing for shard i; drain first (a held shard): no new syncs of its sets, wait for those
// in flight, and only then cancel the elector, which releases the Lease.
func (s *shards) abandon(i int, drain bool) {
	s.mu.Lock()
	c := s.competing[i]
	delete(s.competing, i)
	s.mu.Unlock()
	if drain {
		_ = s.drain(context.Background(), i)
	}
	if c != nil {
		if drain {
			s.logger.Info("Giving up shard to its preferred replica; syncs drained, releasing its Lease", "shard", i)
		}
		c.cancel()
	}
}

// drain stops new syncs of shard i and waits until none is in flight (or ctx is done).
func (s *shards) drain(ctx context.Context, i int) error {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.changed.Broadcast()
	})
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state[i] != shardNone {
		s.state[i] = shardDraining
	}
	for s.inflight[i] > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.changed.Wait()
	}
	return nil
}

// renewed extends c's term (shard i) after a write of its Lease as holder that started at start and wrote
// leaseSeconds (the duration others count, whole seconds: the flag's fraction is not in the Lease).
func (s *shards) renewed(c *competition, i int, start time.Time, leaseSeconds int) {
	until := start.Add(time.Duration(leaseSeconds)*time.Second - (s.cfg.LeaseDuration - s.cfg.RenewDeadline))
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ctx == nil {
		c.ctx, c.endTerm = context.WithCancel(context.Background())
		c.timer = time.AfterFunc(time.Until(until), func() { s.lapse(c, i) })
	}
	if c.ctx.Err() != nil { // lapsed: that elector is ending, and the shard taken again starts a new term
		return
	}
	c.until = until
	c.timer.Reset(time.Until(until))
}

// lapse ends c's term when it passed unrenewed: the shard's syncs in flight are cancelled, and its elector
// stopped (releasing the Lease once they have ended), so that the shard is taken again, caught up, as any take.
func (s *shards) lapse(c *competition, i int) {
	s.mu.Lock()
	if d := time.Until(c.until); d > 0 { // renewed meanwhile
		c.timer.Reset(d)
		s.mu.Unlock()
		return
	}
	held := s.state[i] != shardNone
	c.endTerm()
	s.mu.Unlock()
	if held {
		s.logger.Info("Lease of shard not renewed in time: its syncs are cancelled, the shard competed for again", "shard", i)
	}
	c.cancel()
}

// shardLock is a shard's Lease lock that keeps the competition's term from the writes of the Lease, and holds
// back client-go's release of the Lease until it may be released (releasable).
type shardLock struct {
	resourcelock.Interface
	s *shards
	c *competition
	i int
}

func (l *shardLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r, raw, err := l.Interface.Get(ctx)
	if err == nil {
		l.s.mu.Lock()
		l.c.holder = r.HolderIdentity
		l.s.mu.Unlock()
	}
	return r, raw, err
}

func (l *shardLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	start := time.Now()
	err := l.Interface.Create(ctx, r)
	l.wrote(r, start, err)
	return err
}

func (l *shardLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	if r.HolderIdentity == "" {
		if err := l.s.releasable(ctx, l.c, l.i); err != nil {
			return err
		}
	}
	start := time.Now()
	err := l.Interface.Update(ctx, r)
	l.wrote(r, start, err)
	return err
}

func (l *shardLock) wrote(r resourcelock.LeaderElectionRecord, start time.Time, err error) {
	if err != nil {
		return
	}
	l.s.mu.Lock()
	l.c.holder = r.HolderIdentity
	l.s.mu.Unlock()
	if r.HolderIdentity == l.Identity() {
		l.s.renewed(l.c, l.i, start, r.LeaseDurationSeconds)
	}
}

// releasable waits until client-go may release shard i's Lease (an update with no holder, which any replica
// may take at once): only a Lease last read as this replica's (client-go checks the holder it observed
// before, not the one it has just read: releasing another's Lease would let a third take it within the
// holder's term), and only once no sync of the shard is in flight.
func (s *shards) releasable(ctx context.Context, c *competition, i int) error {
	s.mu.Lock()
	holder := c.holder
	s.mu.Unlock()
	if holder != s.cfg.Identity {
		return fmt.Errorf("shard %d: not releasing its Lease, held by %q", i, holder)
	}
	return s.drain(ctx, i)
}

func (s *shards) leaseLock(name string) *resourcelock.LeaseLock {
	le := s.cfg.LeaderElection
	return &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: le.Namespace, Name: name},
		Client:     s.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: le.Identity},
	}
}

func (s *shards) elector(name string, lock resourcelock.Interface, watchdog *leaderelection.HealthzAdaptor, cb leaderelection.LeaderCallbacks) (*leaderelection.LeaderElector, error) {
	le := s.cfg.LeaderElection
	return leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		ReleaseOnCancel: true, Name: name, WatchDog: watchdog, Callbacks: cb,
	})
}

package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/kube"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// Reconciler runs one controller sync (host/plan's): *wasm.Module is one. It must not keep snapshot after
// it returns: the replay writes the next sync's snapshot into the same buffer.
type Reconciler = hostplan.Reconciler

// sessionOf is the module's session for this replay's set, where the module has sessions (a *wasm.Module:
// each sync then pays to parse what changed, abi/README.md "Unchanged objects"); else the module.
func (e *engine) sessionOf(m Reconciler, snapshot []byte) Reconciler {
	wm, ok := m.(*wasm.Module)
	if !ok {
		return m
	}
	if e.sessions == nil {
		e.sessions = map[*wasm.Module]*wasm.Session{}
	}
	s := e.sessions[wm]
	if s == nil {
		s = wm.NewSession()
		e.sessions[wm] = s
	}
	// the layout of the snapshot the engine just wrote (objectsOf), so the session need not read it
	return wasm.LaidOut{Session: s, Snapshot: snapshot, Layout: &e.layout}
}

// describesWriteFailures reports whether a module reads writeFailures (its describe says so; a
// *wasm.Module tells).
func describesWriteFailures(m Reconciler) bool {
	d, ok := m.(interface{ Describe() abi.Describe })
	return ok && d.Describe().WriteFailures
}

// Options configure a replay.
type Options struct {
	Module Reconciler
	// LoadModule loads a module for a swapModule event (path already resolved).
	LoadModule func(ctx context.Context, path string) (Reconciler, error)
	// NamedModule gives the module a set names with ordinal.dev/module (abi.AnnotationModule), as the
	// controller's registry does; nil: a set naming one cannot be replayed.
	NamedModule func(ctx context.Context, name string) (Reconciler, error)
	// NamedPolicy gives the policy a set names with ordinal.dev/policies (abi.AnnotationPolicies); nil: a
	// set naming one cannot be replayed.
	NamedPolicy func(ctx context.Context, name string) (policy.Module, error)
	// Progress, when set, is called after every sync (the CLI draws a progress line with it).
	Progress func(step int, elapsed time.Duration)
	// Model, when set, overrides the scenario's kubelet model ("tick" or "delays").
	Model string
	// Budget, when set, ends the replay early, at a sync boundary: the outcome is then "partial" and a
	// preview estimates the rest from what was replayed. A budget is the caller's (an admission deadline),
	// the scenario's limits are the world's.
	Budget Budget
}

// Budget bounds the work of one replay. At least one sync is always made.
type Budget struct {
	// Syncs, when > 0, is the most syncs replayed.
	Syncs int
	// Deadline, when set, is the wall-clock time by which the replay ends: no sync starts that would
	// end after it, as far as the longest sync so far tells.
	Deadline time.Time
	// Limit, when set, names the budget as a limit of the caller's ("wall-clock limit (--replay-timeout
	// 5m)"; it says "limit"): spent, it ends
	// the replay as its step or time limit does (outcome "limit"), not as a preview's budget, past which
	// the rest is estimated (outcome "partial").
	Limit string
}

// spent: syncs made so far, the longest of them in wall-clock time.
func (b Budget) spent(syncs int, longest time.Duration) (string, bool) {
	switch {
	case b.Limit != "" && (b.Syncs > 0 && syncs >= b.Syncs || !b.Deadline.IsZero() && !time.Now().Add(longest).Before(b.Deadline)):
		return fmt.Sprintf("%s reached after %d syncs", b.Limit, syncs), true
	case b.Syncs > 0 && syncs >= b.Syncs:
		return fmt.Sprintf("the preview's budget of %d syncs was spent", b.Syncs), true
	case !b.Deadline.IsZero() && !time.Now().Add(longest).Before(b.Deadline):
		return fmt.Sprintf("the preview's time budget was spent after %d syncs", syncs), true
	}
	return "", false
}

// Defaults for Limits: the larger of a floor and an allowance per replica of the set as it is now,
// counted from the last change of the world (the start, or a user event), so that each change gets a
// whole rollout of the set, however many a scenario makes (an OrderedReady rollout takes about five syncs
// and a few tick or kubelet delays per pod; creation about three). Limits a scenario sets count from its
// start.
const (
	DefaultMaxSteps    = 2000
	DefaultMaxDuration = 6 * time.Hour
	StepsPerReplica    = 10
	TimePerReplica     = time.Minute
	// maxSyncsPerInstant bounds the re-syncs the controller's own writes trigger at one instant.
	maxSyncsPerInstant = 25
)

// engine is one replay in progress.
type engine struct {
	// lastCheck and longestSync time the syncs in wall-clock time, for a Budget's deadline.
	lastCheck   time.Time
	longestSync time.Duration
	ctx         context.Context
	opts        Options
	sc          *Scenario
	cfg         KubeletConfig
	start       time.Time
	clock       *Clock
	timers      *timers
	api         *APIServer
	kube        *kubelet
	module      Reconciler

	tl        *Timeline
	revLabels map[string]string

	requeueAt *time.Time
	failures  int // consecutive failed syncs, for the rate-limited retry
	sessions  map[*wasm.Module]*wasm.Session
	dirty     bool
	triggers  []string

	next       int       // index of the next user event
	lastEvent  time.Time // when the previous event happened
	eventStep  int       // the steps taken before it (the default limits count from there)
	settledAt  *time.Time
	eventDue   *time.Time // due time of events[next] once known
	newSegment bool
	snapSize   int    // bytes of the last snapshot, to size the next
	snapBuf    []byte // the last snapshot's buffer, for the next (nil when a segment kept it)
	enc        jsonEncoder
	layout     wasm.Layout // where the last snapshot's objects are (objectsOf)
	// world is the engine's view of the world's objects, by kind (world_view.go); viewGen counts the syncs'
	// views.
	world   map[string]*worldKind
	viewGen int
	// scopeObjects are the firewall's objects of the world, by kind and name, kept between syncs, and
	// scopeSet the set they were last scoped with, decoded (scope)
	scopeObjects map[string]map[string]*firewall.Object
	scopeSet     decodedSet
	// podsOfMembers is the membership rule the records' grid states were read with (kube.Members.Key);
	// podScratch the states of the last sync, lastGrid its grid (the next shares its unchanged chunks).
	podsOfMembers string
	podScratch    []PodState
	lastGrid      PodGrid
	named         map[string]Reconciler      // modules the set named, loaded (opts.NamedModule)
	policies      map[string]policy.Module   // policies the set named, loaded (opts.NamedPolicy)
	held          policy.Memory              // what the set's policies have been holding, since when
	signals       map[string]json.RawMessage // what the host supplies the set's policies (scenario signals)
	pdbs          []Obj                      // the world's PodDisruptionBudgets (disruption.go)
	nodes         []Obj                      // the world's Nodes: pods are scheduled onto them (nodes.go)
	heads         []headSpan                 // where the last snapshot's other members are (head)
}

// moduleOfSet is the module this sync runs: the one the set names (abi.AnnotationModule), loaded once,
// else the replay's module (swapModule events change it).
func (e *engine) moduleOfSet() (Reconciler, error) {
	name, ok := jsonobj.GetObj(e.api.StatefulSet(), "metadata.annotations")[abi.AnnotationModule].(string)
	if !ok {
		return e.module, nil
	}
	if m := e.named[name]; m != nil {
		return m, nil
	}
	if e.opts.NamedModule == nil {
		return nil, fmt.Errorf("the set names the module %q (%s), and this replay has no named modules", name, abi.AnnotationModule)
	}
	m, err := e.opts.NamedModule(e.ctx, name)
	if err != nil {
		return nil, fmt.Errorf("the set names the module %q (%s): %w", name, abi.AnnotationModule, err)
	}
	if e.named == nil {
		e.named = map[string]Reconciler{}
	}
	e.named[name] = m
	return m, nil
}

// namedError is a step's error for a module or policy the set names and the replay cannot have: an invalid
// world, unless it is still being checked (its gate outlasted the caller's wait: no fault of the world).
func (e *engine) namedError(err error) error {
	err = fmt.Errorf("step %d: %w", len(e.tl.Steps), err)
	if errors.Is(err, wasm.ErrStillChecking) {
		return err
	}
	return &InvalidWorldError{Err: err}
}

// Run replays a scenario with the given reconcile module and returns its timeline.
func Run(ctx context.Context, sc *Scenario, opts Options) (*Timeline, error) {
	if opts.Module == nil {
		return nil, fmt.Errorf("replay: no module")
	}
	cfg := sc.Kubelet
	if opts.Model != "" {
		cfg.Model = opts.Model
	}
	if cfg.Model == "" {
		cfg.Model = ModelDelays
	}
	if err := cfg.validate(); err != nil {
		return nil, &InvalidWorldError{Err: err}
	}
	e := &engine{lastCheck: time.Now(), ctx: ctx, opts: opts, sc: sc, cfg: cfg, start: sc.start(), timers: &timers{},
		module: opts.Module, revLabels: map[string]string{}}
	e.clock = NewClock(e.start)
	e.setSignals(sc.Signals, func(string, ...any) {}) // null: no such signal, as in a signals event
	e.lastEvent = e.start
	e.tl = &Timeline{Scenario: sc.Name, Description: sc.Description, Model: cfg.Model, Start: e.start.Format(time.RFC3339)}
	if err := e.initWorld(); err != nil {
		var iw *InvalidWorldError
		if !errors.As(err, &iw) {
			err = &InvalidWorldError{Err: err}
		}
		return nil, err
	}
	e.api.HarnessCollector = cfg.Model == ModelTick
	e.kube = newKubelet(cfg, e.api, e.clock, e.timers)
	e.kube.nodes = e.nodeNames()
	e.seedKubelet()
	var err error
	if cfg.Model == ModelTick {
		err = e.runTick()
	} else {
		err = e.runDelays()
	}
	if err != nil {
		return e.tl, err
	}
	e.finish()
	return e.tl, nil
}

// initialUID gives objects that exist before the replay starts a name-derived uid, distinct from
// the counter uids of objects the replay creates.
func initialUID(kind, name string) string {
	h := fnv.New64a()
	h.Write([]byte(kind + "/" + name))
	s := h.Sum64()
	return fmt.Sprintf("%08x-%04x-4%03x-9%03x-%012x", uint32(s>>32)|1, (s>>16)&0xffff, s&0xfff, (s>>40)&0xfff, s&0xffffffffffff)
}

// initWorld builds the initial world: from a snapshot as it is, or from manifests as if they had
// been created just before the start (defaulted, existing pods Running and Ready unless they carry
// a status, claims Bound unless they carry a phase; uid, generation, resourceVersion and
// creationTimestamp made up only where the manifests leave them out).
func (e *engine) initWorld() error {
	if e.sc.snapshot != nil { // and the budgets the scenario it settled from had (Settled)
		for _, m := range e.sc.Manifests {
			if o, err := jsonobj.DecodeObj(m); err == nil {
				switch jsonobj.GetStr(o, "kind") {
				case kindPDB:
					e.pdbs = append(e.pdbs, o)
				case kindNode:
					e.nodes = append(e.nodes, o)
				}
			}
		}
		return e.loadSnapshot(e.sc.snapshot)
	}
	var ss Obj
	var others []Obj
	for _, m := range e.sc.Manifests {
		o, _ := jsonobj.DecodeObj(m)
		switch jsonobj.GetStr(o, "kind") {
		case kindSet:
			ss = o
		case kindPDB:
			if err := validatePDB(o); err != nil {
				return &InvalidWorldError{Err: err}
			}
			e.pdbs = append(e.pdbs, o)
		case kindNode:
			e.nodes = append(e.nodes, o)
		default:
			others = append(others, o)
		}
	}
	kube.DefaultStatefulSet(ss)
	if err := apiAnswer(kube.ValidateStatefulSet(ss, kube.GatesOf(e.sc.Features))); err != nil {
		return &InvalidWorldError{Err: err}
	}
	jsonobj.SetDefault(ss, "apiVersion", "apps/v1")
	jsonobj.SetDefault(ss, "kind", "StatefulSet")
	ns := jsonobj.GetStr(ss, "metadata.namespace")
	e.api = NewAPIServer(ns, e.clock)
	e.api.Gates = kube.GatesOf(e.sc.Features)
	// What the manifest says stands; only what it leaves out is made up.
	md := jsonobj.Ensure(ss, "metadata")
	jsonobj.SetDefault(md, "uid", initialUID(kindSet, jsonobj.GetStr(md, "name")))
	jsonobj.SetDefault(md, "resourceVersion", "1000")
	jsonobj.SetDefault(md, "generation", jsonobj.Num(1))
	jsonobj.SetDefault(md, "creationTimestamp", e.start.Format(time.RFC3339))
	e.api.set = ss
	now := e.start.Format(time.RFC3339)
	for i, o := range others {
		kind := jsonobj.GetStr(o, "kind")
		name := jsonobj.GetStr(o, "metadata.name")
		stripTypeMeta(o)
		omd := jsonobj.Ensure(o, "metadata")
		jsonobj.SetDefault(omd, "uid", initialUID(kind, name))
		jsonobj.SetDefault(omd, "resourceVersion", fmt.Sprint(1001+i))
		jsonobj.SetDefault(omd, "creationTimestamp", now)
		switch kind {
		case kindPod:
			hasStatus := o["status"] != nil
			kube.DefaultPod(o, ns)
			jsonobj.SetDefault(omd, "generation", jsonobj.Num(1))
			if !hasStatus || jsonobj.GetStr(o, "status.phase") == "" {
				setRunning(o, e.start, true)
			}
		case kindClaim:
			phase := jsonobj.GetStr(o, "status.phase")
			kube.DefaultClaim(o, ns)
			if phase == "" { // a claim that existed before the start is Bound unless it says otherwise
				jsonobj.Set(o, "status.phase", "Bound")
			}
		}
		if _, dup := e.api.objs[kind][name]; dup {
			return fmt.Errorf("manifests: duplicate %s %s", kind, name)
		}
		e.api.put(kind, name, o)
	}
	if e.cfg.Model != ModelTick { // as for a snapshot: no uid the manifests gave is handed out again
		e.api.ids.uidBase = maxSimUID(e.api)
	}
	return nil
}

func (e *engine) loadSnapshot(s Obj) error {
	ss := jsonobj.CloneObj(jsonobj.GetObj(s, "statefulSet"))
	// A set the API server could not hold (a name like Web_1, a bad spec) is no world to replay; checked
	// on a defaulted copy, as the API server validates what it stores, and the world is left as given.
	check := jsonobj.CloneObj(ss)
	kube.DefaultStatefulSet(check)
	if err := apiAnswer(kube.ValidateStatefulSet(check, kube.GatesOf(e.sc.Features))); err != nil {
		return &InvalidWorldError{Err: fmt.Errorf("the snapshot's StatefulSet: %w", err)}
	}
	ns := jsonobj.GetStr(ss, "metadata.namespace")
	if ns == "" {
		ns = "default"
		jsonobj.Ensure(ss, "metadata")["namespace"] = ns
	}
	e.api = NewAPIServer(ns, e.clock)
	e.api.Gates = kube.GatesOf(e.sc.Features)
	e.api.set = ss
	for key, kind := range map[string]string{"pods": kindPod, "revisions": kindRevision, "claims": kindClaim} {
		for _, v := range jsonobj.GetArr(s, key) {
			o, ok := v.(Obj)
			if !ok {
				continue
			}
			o = jsonobj.CloneObj(o)
			if jsonobj.GetStr(o, "metadata.namespace") == "" {
				jsonobj.Set(o, "metadata.namespace", ns)
			}
			e.api.put(kind, jsonobj.GetStr(o, "metadata.name"), o)
		}
	}
	// Continue the resourceVersion sequence above what the snapshot holds.
	e.api.ids.rvBase = maxResourceVersion(e.api)
	if e.cfg.Model != ModelTick {
		e.api.ids.uidBase = maxSimUID(e.api)
	}
	return nil
}

// maxSimUID is the highest uid of the replay's own form (simUIDPrefix + a number) that the world holds.
func maxSimUID(api *APIServer) int {
	return maxOver(api, func(o Obj) string {
		if u, ok := strings.CutPrefix(jsonobj.GetStr(o, "metadata.uid"), simUIDPrefix); ok {
			return u
		}
		return ""
	})
}

func maxResourceVersion(api *APIServer) int {
	return maxOver(api, func(o Obj) string { return jsonobj.GetStr(o, "metadata.resourceVersion") })
}

// maxOver is the highest decimal number field reads from the world's objects. Decimal: a uid's number is
// zero-padded ("000000001027"), which fmt.Sscan reads as octal (or not at all, "000000000999"), so a world
// loaded from a snapshot handed out uids its own objects had.
func maxOver(api *APIServer, field func(Obj) string) int {
	best := 0
	check := func(o Obj) {
		if n, err := strconv.Atoi(field(o)); err == nil && n > best {
			best = n
		}
	}
	if api.set != nil {
		check(api.set)
	}
	for _, m := range api.objs {
		for _, o := range m {
			check(o)
		}
	}
	return best
}

// seedKubelet gives pods that already exist their pending transitions: Pending pods start,
// terminating pods go away (the tick model does this through its own rules).
func (e *engine) seedKubelet() {
	if e.cfg.Model == ModelTick {
		return
	}
	for _, n := range e.api.Names(kindPod) {
		p := e.api.objs[kindPod][n]
		if jsonobj.Get(p, "metadata.deletionTimestamp") != nil {
			e.kube.podDeleted(n)
		} else if jsonobj.GetStr(p, "status.phase") == "Pending" {
			e.kube.podCreated(n)
		}
	}
}

// ---- the two loops ----

// runDelays is the event-driven loop: at each instant, due user events and kubelet transitions
// change the world, then the controller syncs while something changed (its own writes included)
// or a requeue is due; then virtual time jumps to the next thing scheduled.
func (e *engine) runDelays() error {
	e.dirty = true
	e.triggers = []string{"start"}
	e.newSegment = true
	for {
		now := e.clock.Now()
		if err := e.fireEvents(now); err != nil {
			return err
		}
		for _, t := range e.timers.popDue(now) {
			before := len(e.api.notes)
			t.fire()
			if len(e.api.notes) > before && !e.dirty {
				e.dirty = true
				e.triggers = appendOnce(e.triggers, "kubelet")
			}
		}
		if n := len(e.api.notes); n > 0 {
			e.api.collectGarbage()
			e.dirty = true
		}
		requeue := e.requeueAt != nil && !e.requeueAt.After(now)
		if requeue {
			e.requeueAt = nil
			e.triggers = append(e.triggers, "requeue")
			e.dirty = true
		}
		for n := 0; e.dirty; n++ {
			if n == maxSyncsPerInstant {
				e.tl.Notes = append(e.tl.Notes, fmt.Sprintf("at +%s the controller kept writing; stopped re-syncing after %d syncs", fmtDuration(now.Sub(e.start)), n))
				e.dirty = false
				break
			}
			st, err := e.sync()
			if err != nil {
				return err
			}
			e.api.collectGarbage()
			e.kube.bindClaims()
			e.kube.expandClaims()
			e.dirty = st.wrote || len(e.api.notes) > 0
			if e.dirty {
				e.triggers = []string{"watch"}
			}
			if stop := e.checkLimits(); stop {
				return nil
			}
		}
		// What happens next?
		var next *time.Time
		consider := func(t time.Time) {
			if next == nil || t.Before(*next) {
				next = &t
			}
		}
		if t, ok := e.timers.next(); ok {
			consider(t)
		}
		if e.requeueAt != nil {
			consider(*e.requeueAt)
		}
		settled := next == nil && len(e.api.awaitingGC()) == 0
		if t, ok := e.nextEventTime(now, settled); ok {
			consider(t)
		}
		if next == nil {
			return nil
		}
		if next.After(now) {
			e.triggers = nil
		}
		e.clock.set(*next)
		if e.overTime(e.clock.Now()) {
			return nil
		}
	}
}

// runTick is the reference harness's loop: one sync per tick, world rules at the start of every
// tick after the first, stop when a sync writes nothing, asks for no requeue and nothing is
// pending. User events happen after the tick's world rules, before its sync.
func (e *engine) runTick() error {
	tick := e.cfg.tick()
	settled := false
	e.newSegment = true
	e.triggers = []string{"start"}
	for step := 0; ; step++ {
		if step > 0 {
			e.clock.set(e.clock.Now().Add(tick))
			e.kube.tickProgress(step)
			e.triggers = []string{"tick"}
		}
		e.kube.step = step
		if err := e.fireEvents(e.clock.Now()); err != nil {
			return err
		}
		_ = settled
		st, err := e.sync()
		if err != nil {
			return err
		}
		if stop := e.checkLimits(); stop {
			return nil
		}
		converged := st.actions == 0 && st.requeue == 0 && len(e.kube.pendingTick()) == 0
		settled = converged
		if converged {
			t, ok := e.nextEventTime(e.clock.Now(), true)
			if !ok {
				if st.syncErr {
					e.tl.StopReason = fmt.Sprintf("stuck at step %d: sync error with no writes and nothing pending", step)
				}
				return nil
			}
			// Nothing happens until the event: jump so that the next tick is at its time.
			if t.After(e.clock.Now().Add(tick)) {
				e.clock.set(t.Add(-tick))
			}
		}
		if e.overTime(e.clock.Now().Add(tick)) {
			return nil
		}
	}
}

// overTime reports (and records as the stop reason) whether t is past the time limit.
func (e *engine) overTime(t time.Time) bool {
	from, since := e.start, ""
	if e.sc.Limits.Duration == nil {
		from, since = e.lastEvent, e.sinceLastChange()
	}
	if t.Sub(from) <= e.maxDuration() {
		return false
	}
	e.tl.StopReason = fmt.Sprintf("time limit (%s%s) reached; %s", fmtDuration(e.maxDuration()), since, e.progress())
	return true
}

// sinceLastChange words where the default limits count from.
func (e *engine) sinceLastChange() string {
	if e.next == 0 {
		return ""
	}
	return " since the last change of the world"
}

// progress says how far the set got: its status as the controller last wrote it.
func (e *engine) progress() string {
	return "the set's status: " + e.statusLine()
}

func (e *engine) maxDuration() time.Duration {
	if e.sc.Limits.Duration != nil {
		return e.sc.Limits.Duration.D()
	}
	return max(DefaultMaxDuration, time.Duration(e.replicas())*TimePerReplica)
}

func (e *engine) maxSteps() int {
	if e.sc.Limits.Steps > 0 {
		return e.sc.Limits.Steps
	}
	return max(defaultStepsFloor, int(e.replicas())*StepsPerReplica)
}

// defaultStepsFloor is DefaultMaxSteps (a variable for the test of limits per change).
var defaultStepsFloor = DefaultMaxSteps

// The most replicas a replay takes, by the module's memory limit (issue 32, finding 7: 100,000 replicas
// ran the module out of memory, exit 4, after minutes): every sync's snapshot holds every pod, and a
// Parallel creation plans every missing pod in one sync. Measured with the shipped module at its default
// 256 MiB: a snapshot of 8,192 pods of 1.7 KB fits and one of 12,000 does not; a Parallel creation of
// 19,000 fits and 20,000 does not. Whatever the memory, a plan that creates more than about 38,000 pods
// is larger than a plan may be (wasm.DefaultMaxOutputBytes at 1.7 KB a create).
const (
	ReplicasPerMiB  = 32
	MaxReplicasEver = 32768
)

// MaxReplicas is the most replicas a replay takes with a module whose memory limit is memoryLimitPages.
func MaxReplicas(memoryLimitPages uint32) int64 {
	return min(int64(memoryLimitPages/16)*ReplicasPerMiB, MaxReplicasEver)
}

// checkReplicas refuses, before its sync, a set beyond MaxReplicas of the module's memory limit (a
// *wasm.Module tells it): a world the module cannot hold, not a module failure.
func (e *engine) checkReplicas() error {
	m, ok := e.opts.Module.(interface{ Config() wasm.Config })
	if !ok {
		return nil
	}
	pages := m.Config().MemoryLimitPages
	if n, most := e.replicas(), MaxReplicas(pages); n > most {
		return invalidWorld("the set has %d replicas, more than the %d a replay takes with the module's %d MiB memory limit (%d a MiB, at most %d; raise it with --memory-limit-mib): a sync of more pods runs the module out of memory",
			n, most, pages/16, ReplicasPerMiB, MaxReplicasEver)
	}
	return nil
}

// replicas is the set's spec.replicas now (0 when the set is gone).
func (e *engine) replicas() int64 {
	n, _ := jsonobj.GetInt(e.api.set, "spec.replicas")
	return max(n, 0)
}

func (e *engine) checkLimits() bool {
	limit, taken, since := e.maxSteps(), len(e.tl.Steps), ""
	if e.sc.Limits.Steps == 0 {
		taken, since = taken-e.eventStep, e.sinceLastChange()
	}
	if taken >= limit {
		e.tl.StopReason = fmt.Sprintf("step limit (%d syncs%s) reached; %s", limit, since, e.progress())
		return true
	}
	now := time.Now()
	if !e.lastCheck.IsZero() {
		e.longestSync = max(e.longestSync, now.Sub(e.lastCheck))
	}
	e.lastCheck = now
	if why, spent := e.opts.Budget.spent(len(e.tl.Steps), e.longestSync); spent {
		if e.opts.Budget.Limit != "" {
			e.tl.StopReason = why + "; " + e.progress()
			return true
		}
		e.tl.StopReason, e.tl.budgetSpent = why, true
		return true
	}
	return false
}

// nextEventTime is when the next user event becomes due, if it can be known now.
func (e *engine) nextEventTime(now time.Time, settled bool) (time.Time, bool) {
	if e.next >= len(e.sc.Events) {
		return time.Time{}, false
	}
	if e.eventDue != nil {
		return *e.eventDue, true
	}
	ev := e.sc.Events[e.next]
	var t time.Time
	switch {
	case ev.At != nil:
		t = e.start.Add(ev.At.D())
	case ev.Settled:
		if !settled {
			return time.Time{}, false
		}
		t = now.Add(durOr(ev.After, 0))
	default:
		t = e.lastEvent.Add(durOr(ev.After, 0))
	}
	if t.Before(now) {
		t = now
	}
	e.eventDue = &t
	return t, true
}

// fireEvents applies every user event due at now, in order. An event that cannot be applied (an edit the
// API server refuses, a path that is not in the set, a pod that does not exist) ends the replay: the
// scenario does not say what its author meant.
func (e *engine) fireEvents(now time.Time) error {
	for e.next < len(e.sc.Events) {
		t, ok := e.nextEventTime(now, false)
		if !ok || t.After(now) {
			return nil
		}
		ev := e.sc.Events[e.next]
		e.next++
		e.eventDue = nil
		e.lastEvent, e.eventStep = now, len(e.tl.Steps)
		if err := e.applyEvent(ev); err != nil {
			var world *InvalidWorldError
			if errors.As(err, &world) {
				return invalidWorld("event %d (%s, at +%s): %v", e.next, ev.action(), now.Sub(e.start), world.Err)
			}
			return fmt.Errorf("event %d (%s, at +%s): %w", e.next, ev.action(), now.Sub(e.start), err)
		}
		e.dirty = true
		e.newSegment = true
		e.triggers = appendOnce(e.triggers, "user")
	}
	return nil
}

// ---- one sync ----

type syncResult struct {
	actions int
	wrote   bool
	requeue float64
	syncErr bool
}

func (e *engine) snapshot() []byte {
	e.newSyncView() // the world as it is now; the sync's scope and pod grid read the same view
	// The buffer of the previous snapshot is reused unless a segment kept it; it grows by a few
	// objects a sync at most.
	b := e.snapBuf[:0]
	if b == nil {
		b = make([]byte, 0, e.snapSize+e.snapSize/4)
	}
	// What the encoder makes of {"abi":1,"now":...,"statefulSet":...,"pods":[...],...,"eventActions":true}
	// (keys sorted), each listed object encoded once per change (encodedObjects).
	e.layout.Objects = e.layout.Objects[:0]
	b = append(b, `{"abi":`...)
	b = strconv.AppendInt(b, abi.Version, 10)
	b = append(b, `,"claims":`...)
	b = e.objectsOf(b, kindClaim)
	b = append(b, `,"eventActions":true`...) // events are shown as the controller records them, after their writes
	var err error
	e.heads = e.heads[:0]
	if len(e.sc.Features) > 0 {
		b = append(b, `,"features":`...)
		at := len(b)
		if b, err = e.enc.append(b, e.sc.Features); err != nil {
			panic(fmt.Sprintf("replay: encoding the world: %v", err))
		}
		e.heads = append(e.heads, headSpan{"features", at, len(b)})
	}
	b = append(b, `,"now":`...)
	at := len(b)
	b = jsonv.AppendString(b, e.clock.Now().Format(time.RFC3339))
	e.heads = append(e.heads, headSpan{"now", at, len(b)})
	b = append(b, `,"pods":`...)
	b = e.objectsOf(b, kindPod)
	b = append(b, `,"revisions":`...)
	b = e.objectsOf(b, kindRevision)
	b = append(b, `,"statefulSet":`...)
	at = len(b)
	if b, err = e.enc.append(b, e.api.set); err != nil {
		panic(fmt.Sprintf("replay: encoding the world: %v", err))
	}
	e.heads = append(e.heads, headSpan{"statefulSet", at, len(b)})
	b = append(b, '}')
	e.snapSize, e.snapBuf = len(b), b
	return b
}

// headSpan is where one of the last snapshot's members other than its lists is: snapshot[from:to] is its value.
type headSpan struct {
	key      string
	from, to int
}

// head is what policies are given of snap, the last snapshot, beside the plan's objects (policy.Run.Head):
// its members other than its lists, written from where snapshot put them.
func (e *engine) head(snap []byte) []byte {
	h := []byte(`{"abi":1`)
	for _, m := range e.heads {
		h = append(append(append(h, `,"`...), m.key...), `":`...)
		h = append(h, snap[m.from:m.to]...)
	}
	return h
}

// verifyEncodedObjects makes every snapshot encode each object again and compare, and every view check that
// it holds the world (tests: an object the world changed without a new resourceVersion, or without its
// watch telling, would otherwise reach the module as it was).
var verifyEncodedObjects = false

// objectsOf appends the world's objects of a kind as a JSON list, in name order. An object is encoded once
// per resourceVersion (record): the API server, the kubelet and the garbage collector give every change of
// an object a new one, as kube-apiserver does. Not in the tick model, whose world rules change pods as the
// reference harness's do, without one.
func (e *engine) objectsOf(b []byte, kind string) []byte {
	b = append(b, '[')
	for i, r := range e.view(kind) {
		if i > 0 {
			b = append(b, ',')
		}
		at := len(b)
		if e.current(r, r.encodedFor) {
			if r.encodedAt == e.viewGen-1 && r.from == at && e.overPrevious(b) {
				b = b[:r.to] // where the previous snapshot left it
			} else {
				b = append(b, r.json...)
			}
			if verifyEncodedObjects {
				if fresh, _ := e.enc.append(nil, r.o); !bytes.Equal(fresh, r.json) || !bytes.Equal(b[at:], r.json) {
					panic(fmt.Sprintf("replay: %s %s changed without a new resourceVersion or a write the watch saw (%s)", kind, r.name, r.rv))
				}
			}
		} else {
			var err error
			if b, err = e.enc.append(b, r.o); err != nil {
				panic(fmt.Sprintf("replay: encoding the world: %v", err))
			}
			r.json, r.digest, r.encodedFor = bytes.Clone(b[at:]), sha256.Sum256(b[at:]), r.version
		}
		r.encodedAt, r.from, r.to = e.viewGen, at, len(b)
		e.layout.Objects = append(e.layout.Objects, wasm.LaidObject{List: listOf[kind], From: at, To: len(b), UID: r.uid, RV: r.rv, Digest: r.digest})
	}
	return append(b, ']')
}

// overPrevious reports whether b is being written over the previous snapshot's buffer (it is reused unless a
// segment kept it, and b has not outgrown it): an object unchanged since, at the offset it had there, is
// there already and is not copied again. A snapshot of 1000 pods is 1.5 MB, of which a sync changes a few
// objects: what comes before the first of them stays where it was.
func (e *engine) overPrevious(b []byte) bool {
	return cap(b) > 0 && cap(e.snapBuf) > 0 && &b[:1][0] == &e.snapBuf[:1][0]
}

// listOf is the snapshot key of each kind's list.
var listOf = map[string]string{kindPod: "pods", kindRevision: "revisions", kindClaim: "claims"}

func (e *engine) sync() (syncResult, error) {
	var res syncResult
	if err := e.checkReplicas(); err != nil {
		return res, err
	}
	if e.newSegment {
		e.newSegment = false
		if e.cfg.Model == ModelTick {
			// The harness starts a fresh simulation (counters from 1) on the world as it is.
			e.api.ids = ids{}
		}
		e.tl.Segments = append(e.tl.Segments, Segment{FirstStep: len(e.tl.Steps), Comparable: e.segmentComparable()})
	}
	snap := e.snapshot()
	seg := &e.tl.Segments[len(e.tl.Segments)-1]
	if seg.FirstStep == len(e.tl.Steps) {
		seg.Snapshot = snap
		e.snapBuf = nil // kept: the next snapshot gets a buffer of its own
	}
	module, err := e.moduleOfSet()
	if err != nil {
		return res, e.namedError(err)
	}
	policies, err := e.policiesOfSet()
	if err != nil {
		return res, e.namedError(err)
	}
	// The controller's sync step, firewall and applier included: a plan that writes outside its set is not
	// carried out.
	scope, err := e.scope()
	if err != nil {
		return res, fmt.Errorf("step %d: %w", len(e.tl.Steps), err)
	}
	now := e.clock.Now()
	step := Step{
		Index:   len(e.tl.Steps),
		Segment: len(e.tl.Segments) - 1,
		Time:    now.Format(time.RFC3339),
		Offset:  Duration(now.Sub(e.start)),
		Trigger: e.triggers,
		World:   e.api.takeNotes(),
		Pods:    e.podStates(),
	}
	e.labelRevisions()
	w := &worldWriter{api: e.api, set: e.api.StatefulSet()}
	var recorded []abi.Event
	var results []hostplan.Result
	run := hostplan.Step{Module: e.sessionOf(module, snap), Snapshot: snap, WriteFailures: describesWriteFailures(module), Scope: scope, Writer: w,
		Set: jsonobj.GetStr(w.set, "metadata.name"),
		Each: func(r hostplan.Result) {
			recorded = append(recorded, r.Events...)
			results = append(results, r)
			if r.Outcome == hostplan.Succeeded {
				res.wrote = true
			}
		}}
	var policyFailures []policy.Failure
	var pr *policy.Run
	if len(policies) > 0 {
		pr = &policy.Run{Policies: policies, Snapshot: snap, Memory: &e.held, Signals: e.signals,
			PodDisruptionBudgets: e.budgetsFor(policies), Nodes: e.nodesFor(policies),
			Object: func(kind, name string) (json.RawMessage, bool) { // the objects as this snapshot carries them
				if r := e.recordOf(kind, name); r != nil && e.inSnapshot(r) {
					return json.RawMessage(snap[r.from:r.to]), true
				}
				return json.RawMessage(snap[0:0]), false
			},
			Head:    e.head(snap),
			Budgets: budgetWriter{}, Now: now,
			Failed: func(f policy.Failure) { policyFailures = append(policyFailures, f) }}
		run.Judge, run.Admit = pr.Judge, pr.Admit
	}
	run.Status = policy.HoldStatus(func() gjson.Result { return gjson.GetBytes(snap, "statefulSet") }, now)
	out, err := run.Run(e.ctx)
	var (
		moduleErr *hostplan.ModuleError
		badPlan   *hostplan.InvalidError
		rejected  *hostplan.RejectedError
		refused   *firewall.RefusedError
		stopped   *hostplan.WriteError
	)
	switch {
	case errors.As(err, &moduleErr), errors.As(err, &badPlan), errors.As(err, &refused):
		return res, fmt.Errorf("step %d: module failed: %w", len(e.tl.Steps), err)
	case errors.As(err, &rejected):
		return res, &RejectedError{Step: len(e.tl.Steps), Plan: rejected.Err}
	case err != nil && !errors.As(err, &stopped):
		return res, fmt.Errorf("step %d: %w", len(e.tl.Steps), err)
	}
	plan := out.Plan
	step.Plan, step.Requeue = out.FirstRaw, plan.RequeueAfterSeconds
	if out.Replans > 0 {
		step.Replanned = out.Raw
	}
	e.triggers = nil
	step.Actions = make([]ActionRecord, len(plan.Actions))
	for i, a := range plan.Actions {
		step.Actions[i] = e.describe(a)
	}
	for _, r := range results {
		rec := &step.Actions[r.Index]
		switch {
		case r.Hold != nil:
			rec.Error = r.Err.Error()
			rec.Held = &ActionHold{Policy: r.Hold.Policy, Reason: r.Hold.Reason}
		case r.Outcome == hostplan.FailedAsPlanned && !r.Reported:
			rec.Error = r.Action.Error
		case r.Outcome != hostplan.Succeeded && r.Err != nil:
			rec.Error = r.Err.Error()
		}
	}
	if stopped != nil {
		if rec := &step.Actions[stopped.Index]; rec.Error == "" {
			rec.Error = stopped.Err.Error() // refused adoption, or a predicted rejection that did not come
		}
		for i := out.Issued; i < len(step.Actions); i++ {
			if i != stopped.Index {
				step.Actions[i].Error = "not issued: the sync stopped at an earlier error"
			}
		}
	}
	aborted := err != nil
	e.labelRevisions()
	for _, ev := range append(append(recorded, out.AtEnd...), policy.Events(now, &e.held, pr.Held(out.Held), policyFailures)...) {
		step.Events = append(step.Events, ev.Type+" "+ev.Reason+" "+ev.Message)
		if ev.Type == abi.EventWarning && ev.Reason == abi.EventInvalidAnnotation && !slices.Contains(e.tl.invalidAnnotations, ev.Message) {
			e.tl.invalidAnnotations = append(e.tl.invalidAnnotations, ev.Message)
		}
	}
	res.actions = len(plan.Actions)
	res.requeue = plan.RequeueAfterSeconds
	if plan.Error != nil {
		step.Error = plan.Error.Message
		res.syncErr = true
	} else if aborted {
		step.Error = "a write was rejected"
		res.syncErr = true
	}
	if e.cfg.Model != ModelTick {
		requeue, failed := plan.RequeueAfterSeconds, res.syncErr
		if retry := policy.RetryAfter(out.Held); retry > 0 { // a hold says when to look again
			requeue, failed = retry.Seconds(), false
		}
		e.scheduleRequeue(now, requeue, failed)
	}
	step.Revisions = e.statusLine()
	e.tl.Steps = append(e.tl.Steps, step)
	if e.opts.Progress != nil {
		e.opts.Progress(step.Index, now.Sub(e.start))
	}
	return res, nil
}

// scheduleRequeue models the work queue: AddAfter for requeueAfterSeconds (the earliest wins), and
// the rate-limited retry after a failed sync (5ms doubling up to 1000s, client-go's default).
func (e *engine) scheduleRequeue(now time.Time, after float64, failed bool) {
	at := func(d time.Duration) {
		t := now.Add(d)
		if e.requeueAt == nil || t.Before(*e.requeueAt) {
			e.requeueAt = &t
		}
	}
	if after > 0 {
		at(hostplan.RequeueAfter(after))
	}
	if failed {
		d := 5 * time.Millisecond << min(e.failures, 20)
		if d > 1000*time.Second {
			d = 1000 * time.Second
		}
		e.failures++
		at(d)
	} else {
		e.failures = 0
	}
}

// segmentComparable: the harness can replay a segment only if no pod is still starting (it
// starts only pods it created itself).
func (e *engine) segmentComparable() bool {
	if e.cfg.Model != ModelTick {
		return false
	}
	for _, n := range e.api.Names(kindPod) {
		if _, ok := e.kube.createdStep[n]; ok {
			return false
		}
	}
	return true
}

// ---- user events ----

func (e *engine) applyEvent(ev Event) error {
	api := e.api
	note := func(format string, args ...any) { api.note("user", "", "", "", format, args...) }
	if ev.Note != "" {
		api.note("note", "", "", "", "%s", ev.Note)
	}
	switch ev.action() {
	case "apply":
		o, _ := jsonobj.DecodeObj(ev.Apply)
		cur := api.StatefulSet()
		md := jsonobj.Ensure(o, "metadata")
		md["resourceVersion"] = jsonobj.GetStr(cur, "metadata.resourceVersion")
		if err := api.Update(kindSet, o); err != nil {
			return invalidWorld("apply: %v", err)
		}
		note("applied an edited StatefulSet %s (generation %s)", jsonobj.GetStr(o, "metadata.name"), fmt.Sprint(jsonobj.Get(api.set, "metadata.generation")))
	case "set":
		edits, _ := jsonobj.DecodeObj(ev.Set)
		o := jsonobj.CloneObj(api.StatefulSet())
		keys := make([]string, 0, len(edits))
		for k := range edits {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if edits[k] == nil {
				// null removes the field (an empty map would hash differently from an absent one)
				jsonobj.Delete(o, k)
				continue
			}
			if err := jsonobj.Set(o, k, edits[k]); err != nil {
				return invalidWorld("set: %v", err)
			}
		}
		if err := api.Update(kindSet, o); err != nil {
			return invalidWorld("set: %v", err)
		}
		for _, k := range keys {
			note("set %s = %s", k, string(mustJSON(edits[k])))
		}
	case "recreateSet":
		o, _ := jsonobj.DecodeObj(ev.RecreateSet)
		name := jsonobj.GetStr(api.StatefulSet(), "metadata.name")
		if n := jsonobj.GetStr(o, "metadata.name"); n != name {
			return invalidWorld("recreateSet: the manifest names StatefulSet %q, not %q", n, name)
		}
		if ns := jsonobj.GetStr(o, "metadata.namespace"); ns != "" && ns != api.ns {
			return invalidWorld("recreateSet: the manifest's namespace %q is not the world's %q", ns, api.ns)
		}
		jsonobj.Ensure(o, "metadata")["namespace"] = api.ns
		for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp"} {
			delete(jsonobj.GetObj(o, "metadata"), k) // the API server's, for a new object
		}
		delete(o, "status")
		check := jsonobj.CloneObj(o) // refused as a create is refused, before anything is orphaned
		kube.DefaultStatefulSet(check)
		if err := apiAnswer(kube.ValidateStatefulSet(check, api.Gates)); err != nil {
			return invalidWorld("recreateSet: %v", err)
		}
		api.orphanSet()
		if err := api.Create(kindSet, o); err != nil {
			return invalidWorld("recreateSet: %v", err)
		}
		note("deleted StatefulSet %s with --cascade=orphan (its pods, revisions and claims stay) and created it again (uid %s)", name, jsonobj.GetStr(api.set, "metadata.uid"))
	case "deletePod":
		if err := api.Delete(kindPod, ev.DeletePod, ""); err != nil {
			return invalidWorld("deletePod: %v", err)
		}
		note("deleted pod %s", ev.DeletePod)
	case "failPod", "completePod":
		name, phase := ev.FailPod, "Failed"
		if ev.CompletePod != "" {
			name, phase = ev.CompletePod, "Succeeded"
		}
		if api.Get(kindPod, name) == nil {
			return invalidWorld("%s: pods %q not found", ev.action(), name)
		}
		setPhase(api, name, phase, e.clock.Now())
		note("pod %s is now %s", name, phase)
	case "unreadyPod":
		if !api.mutatePod(ev.UnreadyPod, func(p Obj) { setReady(p, e.clock.Now(), false) }) {
			return invalidWorld("unreadyPod: pods %q not found", ev.UnreadyPod)
		}
		note("pod %s lost readiness", ev.UnreadyPod)
	case "labelPod":
		l := ev.LabelPod
		if len(l.Labels) == 0 {
			return invalidWorld("labelPod: pod %q: no labels to set or remove", l.Pod)
		}
		keys := slices.Sorted(maps.Keys(l.Labels))
		for _, k := range keys { // as kube-apiserver validates a label patch
			errs := validation.IsQualifiedName(k)
			if v := l.Labels[k]; v != nil {
				errs = append(errs, validation.IsValidLabelValue(*v)...)
			}
			if len(errs) > 0 {
				return invalidWorld("labelPod: label %s: %s", k, strings.Join(errs, "; "))
			}
		}
		if !api.mutatePod(l.Pod, func(p Obj) {
			labels := jsonobj.Ensure(jsonobj.Ensure(p, "metadata"), "labels")
			for _, k := range keys {
				if v := l.Labels[k]; v == nil {
					delete(labels, k)
				} else {
					labels[k] = *v
				}
			}
		}) {
			return invalidWorld("labelPod: pods %q not found", l.Pod)
		}
		for _, k := range keys {
			if v := l.Labels[k]; v == nil {
				note("label %s removed from pod %s", k, l.Pod)
			} else {
				note("pod %s labelled %s=%s", l.Pod, k, *v)
			}
		}
	case "signals":
		e.setSignals(ev.Signals, note)
	case "kubelet":
		e.kube.cfg.Pods = append(e.kube.cfg.Pods, ev.Kubelet...)
		note("kubelet behaviour changed: %s", string(mustJSON(ev.Kubelet)))
	case "restartController":
		e.requeueAt = nil
		e.failures = 0
		note("controller restarted (work queue emptied, full resync)")
	case "swapModule":
		path := ev.SwapModule
		if !filepath.IsAbs(path) && e.sc.Dir != "" {
			path = filepath.Join(e.sc.Dir, path)
		}
		if e.opts.LoadModule == nil {
			return invalidWorld("swapModule %s: this replay cannot load modules", ev.SwapModule)
		}
		m, err := e.opts.LoadModule(e.ctx, path)
		if err != nil {
			return fmt.Errorf("swapModule %s: %w", ev.SwapModule, err)
		}
		e.module = m
		note("controller now runs module %s", ev.SwapModule)
	case "wait":
		if ev.Note == "" {
			note("time passes")
		}
	}
	return nil
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

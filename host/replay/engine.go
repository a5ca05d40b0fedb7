package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/module"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// sessionOf is the module's session for this replay's set, where the module has sessions (a *wasm.Module:
// each sync then pays to parse what changed, abi/README.md "Unchanged objects"); else the module.
func (e *engine) sessionOf(m hostplan.Reconciler, snapshot []byte) hostplan.Reconciler {
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
func describesWriteFailures(m hostplan.Reconciler) bool {
	d, ok := m.(interface{ Describe() abi.Describe })
	return ok && d.Describe().WriteFailures
}

// Options configure a replay.
type Options struct {
	// Module runs the syncs (*wasm.Module is one). It must not keep a snapshot after it returns: the
	// replay writes the next sync's snapshot into the same buffer.
	Module hostplan.Reconciler
	// LoadModule loads a module for a swapModule event (path already resolved).
	LoadModule func(ctx context.Context, path string) (hostplan.Reconciler, error)
	// NamedModule gives the module a set names with ordinal.dev/module (abi.AnnotationModule), as the
	// controller's registry does; nil: a set naming one cannot be replayed.
	NamedModule func(ctx context.Context, name string) (hostplan.Reconciler, error)
	// NamedPolicy gives the policy a set names with ordinal.dev/policies (abi.AnnotationPolicies); nil: a
	// set naming one cannot be replayed.
	NamedPolicy func(ctx context.Context, name string) (policy.Module, error)
	// Progress, when set, is called after every sync (the CLI draws a progress line with it).
	Progress func(Progress)
	// Model, when set, overrides the scenario's kubelet model ("tick" or "delays").
	Model string
	// Budget, when set, ends the replay early, at a sync boundary: the outcome is then "partial" and a
	// preview estimates the rest from what was replayed. A budget is the caller's (an admission deadline),
	// the scenario's limits are the world's.
	Budget Budget
}

// Progress is how far a replay has come, after a sync (Options.Progress): the counts of a progress line.
type Progress struct {
	Syncs   int           // syncs made so far
	Elapsed time.Duration // virtual time since the start of the replay
	// Updated is the set's pods at its update revision (status.updatedReplicas after the sync) and Replicas
	// the pods it wants (spec.replicas): both 0 once the set is deleted.
	Updated, Replicas int
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
	// longest is the longest sync of the replays made before this one under the same Deadline (a
	// preview's what-if replays follow its own): the deadline is judged by it from the first sync on.
	longest time.Duration
}

// wouldPass reports whether a replay started now would pass the Deadline with its first sync, as far as
// the longest sync so far tells.
func (b Budget) wouldPass() bool {
	return !b.Deadline.IsZero() && !time.Now().Add(b.longest).Before(b.Deadline)
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
	clock       *world.Clock
	timers      *world.Timers
	api         *world.APIServer
	kube        *world.Kubelet
	module      hostplan.Reconciler

	tl      *Timeline
	letters rollout.Letters // the revisions' letters

	requeueAt *time.Time // the work queue's AddAfter: the module's requeueAfterSeconds, a failed sync's retry
	// holdRetryAt is when the set's policies asked to be asked again about the writes they held, and holding
	// whether the last sync held any (scheduleHoldRetry)
	holdRetryAt *time.Time
	holding     bool
	failures    int // consecutive failed syncs, for the rate-limited retry
	sessions    map[*wasm.Module]*wasm.Session
	dirty       bool
	triggers    []string

	next       int       // index of the next user event
	lastEvent  time.Time // when the previous event happened
	eventStep  int       // the steps taken before it (the default limits count from there)
	settledAt  *time.Time
	eventDue   *time.Time // due time of events[next] once known
	newSegment bool
	snapSize   int    // bytes of the last snapshot, to size the next
	snapBuf    []byte // the last snapshot's buffer, for the next (nil when a segment kept it)
	enc        jsonEncoder
	// setEncoded is the encoding of the set object setEncodedOf (setJSON)
	setEncoded   []byte
	setEncodedOf Obj
	scratch      []byte      // an object's encoding before it is placed (objectsOf)
	layout       wasm.Layout // where the last snapshot's objects are (objectsOf)
	// laidObjects is the last layout's objects, which the next layout's are written over (relayList)
	laidObjects []wasm.LaidObject
	gaps        []listGap // the gaps of the list being written in place (listGaps)
	// world is the engine's view of the world's objects, by kind (world_view.go); viewGen counts the syncs'
	// views.
	world   map[string]*worldKind
	viewGen int
	// scopeObjects are the firewall's objects of the world, by kind and name, kept between syncs, and
	// scopeSet the set they were last scoped with, decoded (scope)
	scopeObjects map[string]map[string]*firewall.Object
	scopeSet     decodedSet
	// podsOfMembers is the membership rule the records' grid states were read with (kube.Members.Key), of the
	// view podsFor; lastGrid the last sync's grid (the next is made from it and what changed). members is the
	// set's membership rule, read from what membersFrom says of the set (membersOfSet).
	podsOfMembers string
	podsFor       *worldKind
	lastGrid      PodGrid
	members       kube.Members
	membersFrom   string
	membersRead   bool
	membersSet    Obj                            // the set object members was last checked against (membersOfSet)
	membersKey    string                         // members.Key()
	named         map[string]hostplan.Reconciler // modules the set named, loaded (opts.NamedModule)
	policies      map[string]policy.Module       // policies the set named, loaded (opts.NamedPolicy)
	held          *policy.Memory                 // what the set's policies have been holding, since when (restoreMemory)
	heldEvents    []abi.Event                    // the host's events about it for the next sync (restoreMemory)
	lastHolds     map[heldWrite]ActionHold       // the previous sync's holds, by write: a hold that repeats one is told once
	signals       map[string]json.RawMessage     // what the host supplies the set's policies (scenario signals)
	pdbs          []Obj                          // the world's PodDisruptionBudgets (disruption.go)
	disruptedPods map[string]map[string]spentPod // what the policies spent of each budget, by pod (disruption.go)
	nodes         []Obj                          // the world's Nodes: pods are scheduled onto them (nodes.go)
	heads         []headSpan                     // where the last snapshot's other members are (head)
}

// moduleOfSet is the module this sync runs (module.OfSet): the one the set names, else the replay's module
// (swapModule events change it). A module the set cannot have ends the replay, naming it.
func (e *engine) moduleOfSet() (hostplan.Reconciler, error) {
	m, name, err := module.OfSet(e.ctx, annotations(e.api.StatefulSet()), e.module, e.namedModule)
	if err != nil {
		return nil, fmt.Errorf("the set names the module %q (%s): %w", name, abi.AnnotationModule, err)
	}
	return m, nil
}

// namedModule is opts.NamedModule, each name loaded once per replay: a replay syncs its set hundreds of
// times, and Options.NamedModule need not cache (the controller's registry does, for its own reasons).
func (e *engine) namedModule(ctx context.Context, name string) (hostplan.Reconciler, error) {
	if m := e.named[name]; m != nil {
		return m, nil
	}
	m, err := e.opts.namedModule(ctx, name)
	if err != nil {
		return nil, err
	}
	if e.named == nil {
		e.named = map[string]hostplan.Reconciler{}
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
	if err := cfg.Validate(); err != nil {
		return nil, &InvalidWorldError{Err: err}
	}
	e := &engine{lastCheck: time.Now(), longestSync: opts.Budget.longest, ctx: ctx, opts: opts, sc: sc, cfg: cfg, start: sc.start(), timers: &world.Timers{},
		module: opts.Module}
	e.clock = world.NewClock(e.start)
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
	e.restoreMemory()
	e.api.HarnessCollector = cfg.Model == ModelTick
	e.kube = world.NewKubelet(cfg, e.api, e.clock, e.timers)
	e.kube.SetNodes(e.nodeNames())
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

// restoreMemory is what a controller that starts knows of the holds of the set's policies: what the set
// records of them (policy.MemoryOf), as the controller restores it, so a replay restarting its controller
// predicts the holds the controller's restarts would time.
func (e *engine) restoreMemory() {
	m, err := policy.MemoryOf(gjson.ParseBytes(mustJSON(e.api.StatefulSet())))
	e.held = m
	if err != nil {
		e.heldEvents = append(e.heldEvents, policy.MemoryInvalid(err))
	}
}

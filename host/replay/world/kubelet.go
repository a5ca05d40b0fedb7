package world

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
	"github.com/ordinal-dev/ordinal/internal/quantity"
)

// Kubelet models.
const (
	// ModelDelays is the default: every pod starts, becomes Ready and terminates after its own
	// delays, and the controller re-syncs on every change and on its requeue, like the real
	// controller's work queue.
	ModelDelays = "delays"
	// ModelTick reproduces the reference harness (`oracle simulate`) exactly: a fixed tick, one sync
	// per tick, a pod becomes Running+Ready one tick after it was created, a deleted pod disappears
	// one tick later, PVCs bind one tick after creation, garbage collection once per tick.
	ModelTick = "tick"
)

// NeverReadyAnnotation on a pod (usually set through the template) keeps it Running but not Ready
// in both models; the reference harness honours the same annotation.
const NeverReadyAnnotation = "oracle.test/never-ready"

// Default delays of the delays model.
const (
	DefaultTick             = 5 * time.Second
	DefaultStartDelay       = 2 * time.Second
	DefaultReadyDelay       = 3 * time.Second
	DefaultTerminationDelay = 5 * time.Second
)

// KubeletConfig is the kubelet model of a replay.
type KubeletConfig struct {
	Model            string        `json:"model,omitempty"`            // "delays" (default) or "tick"
	Tick             *Duration     `json:"tick,omitempty"`             // tick model: time per step (5s)
	StartDelay       *Duration     `json:"startDelay,omitempty"`       // creation -> Running (2s)
	ReadyDelay       *Duration     `json:"readyDelay,omitempty"`       // Running -> Ready (3s)
	TerminationDelay *Duration     `json:"terminationDelay,omitempty"` // deletion -> gone (5s, capped by the grace period)
	RestartDelay     *Duration     `json:"restartDelay,omitempty"`     // in-place update -> new containers running (the start delay)
	Pods             []PodBehavior `json:"pods,omitempty"`             // per-pod overrides, later rules win
	// Source says where the delays come from, for people (a live set's preview: the pace its pods showed).
	Source string `json:"source,omitempty"`
	// NeverReadyRevision, when set, keeps every pod of this ControllerRevision (its controller-revision-hash
	// label) Running and never Ready, in both models, whatever the rules say: a preview's "what if the new
	// revision never becomes Ready". Not a scenario field: a scenario cannot know a revision's name before the
	// module hashes it; it marks a broken release with NeverReadyAnnotation or an image rule.
	NeverReadyRevision string `json:"-"`
	// Learned, when set, is what a live set's preview learned the delays from (Pace.Learned). Not a scenario
	// field: a scenario's delays are its own (Source may say whence, in words).
	Learned *LearnedPace `json:"-"`
}

// maxKubeletSource bounds KubeletConfig.Source.
const maxKubeletSource = 512

// Pace is the pace a replay's kubelet model gives pods, for a preview to say which it used: under the delays
// model how long a pod takes to start, to become Ready, to go and to run again after an in-place update; under
// the tick model, its tick. From says whence the delays come: "defaults" (the model's), "scenario" (a
// scenario's delays, or its kubelet.source: Source), or "learned" (a live set's pods and events: Learned
// counts what each delay was learned from, a count of 0 leaving that delay the model's).
type Pace struct {
	TickSeconds        *float64     `json:"tickSeconds,omitempty"`        // the tick model's tick
	StartSeconds       *float64     `json:"startSeconds,omitempty"`       // creation -> Running
	ReadySeconds       *float64     `json:"readySeconds,omitempty"`       // Running -> Ready
	TerminationSeconds *float64     `json:"terminationSeconds,omitempty"` // deletion -> gone (or the grace period if shorter)
	RestartSeconds     *float64     `json:"restartSeconds,omitempty"`     // in-place update -> new containers running
	From               string       `json:"from"`
	Source             string       `json:"source,omitempty"`
	Learned            *LearnedPace `json:"learned,omitempty"`
}

// Where a Pace's delays come from (Pace.From).
const (
	PaceDefaults = "defaults"
	PaceScenario = "scenario"
	PaceLearned  = "learned"
)

// LearnedPace is what a live set's delays were learned from (host/preview's learnPace), as counts: each delay
// is the interquartile mean of what that many of the set's pods or events showed.
type LearnedPace struct {
	// StartPods is how many pods showed their creation to their first container running (the start delay):
	// those that never restarted.
	StartPods int `json:"startPods"`
	// ReadyPods is how many pods showed their containers running to Ready (the Ready delay).
	ReadyPods int `json:"readyPods"`
	// Replacements is how many of the set's events showed a pod's deletion to its successor's creation (the
	// termination delay).
	Replacements int `json:"replacements"`
	// InPlaceUpdates is how many pods showed their old containers' end to their new ones running after an
	// in-place update (the restart delay).
	InPlaceUpdates int `json:"inPlaceUpdates"`
}

// Any says whether anything was learned.
func (l LearnedPace) Any() bool {
	return l.StartPods+l.ReadyPods+l.Replacements+l.InPlaceUpdates > 0
}

// Pace is the model's pace: the delays it gives pods, and where they come from.
func (c KubeletConfig) Pace() Pace {
	secs := func(d time.Duration) *float64 { s := d.Seconds(); return &s }
	p := Pace{From: PaceDefaults, Source: c.Source}
	switch {
	case c.Learned != nil && c.Learned.Any():
		learned := *c.Learned
		p.From, p.Learned = PaceLearned, &learned
	case c.Source != "" || c.StartDelay != nil || c.ReadyDelay != nil || c.TerminationDelay != nil || c.RestartDelay != nil:
		p.From = PaceScenario
	}
	if c.Model == ModelTick {
		p.TickSeconds = secs(c.TickEvery())
		return p
	}
	start := DurationOr(c.StartDelay, DefaultStartDelay)
	p.StartSeconds, p.ReadySeconds = secs(start), secs(DurationOr(c.ReadyDelay, DefaultReadyDelay))
	p.TerminationSeconds, p.RestartSeconds = secs(DurationOr(c.TerminationDelay, DefaultTerminationDelay)), secs(DurationOr(c.RestartDelay, start))
	return p
}

// String is the pace in words, as the preview's text says it: the delays, then whence they come. The restart
// delay is said only where it is not the start delay, as most sets never update in place.
func (p Pace) String() string {
	if p.From == "" {
		return ""
	}
	if p.TickSeconds != nil {
		return fmt.Sprintf("one tick of %s per step (the reference harness's)", seconds(*p.TickSeconds))
	}
	restart := ""
	if *p.RestartSeconds != *p.StartSeconds {
		restart = fmt.Sprintf(", its containers running again %s after an in-place update", seconds(*p.RestartSeconds))
	}
	return fmt.Sprintf("a pod Running %s after it is created, Ready %s after that, gone %s after it is deleted or its grace period if shorter%s (%s)",
		seconds(*p.StartSeconds), seconds(*p.ReadySeconds), seconds(*p.TerminationSeconds), restart, p.whence())
}

// whence says where the delays come from, in words.
func (p Pace) whence() string {
	switch {
	case p.From == PaceLearned && p.Learned != nil:
		return "learned from " + strings.Join(p.Learned.items(), "; ")
	case p.Source != "":
		return p.Source
	case p.From == PaceScenario:
		return "the scenario's"
	}
	return "the defaults"
}

// items says what each delay was learned from, and which stayed the model's.
func (l LearnedPace) items() []string {
	var out []string
	switch {
	case l.StartPods > 0 && l.StartPods == l.ReadyPods:
		out = append(out, fmt.Sprintf("%d of the set's pods: each one's creation to its first container running, and that to Ready (interquartile means)", l.StartPods))
	case l.ReadyPods > 0:
		if l.StartPods > 0 {
			out = append(out, fmt.Sprintf("%d of the set's pods never restarted: each one's creation to its first container running (interquartile mean)", l.StartPods))
		}
		out = append(out, fmt.Sprintf("%d of the set's pods: each one's containers running to Ready (interquartile mean)", l.ReadyPods))
	}
	if l.Replacements > 0 {
		out = append(out, fmt.Sprintf("%d replacement%s in the set's events: a pod's deletion to its successor's creation (interquartile mean)", l.Replacements, plural(l.Replacements)))
	}
	if l.InPlaceUpdates > 0 {
		out = append(out, fmt.Sprintf("%d pod%s updated in place: its old containers' end to its new ones running (interquartile mean)", l.InPlaceUpdates, plural(l.InPlaceUpdates)))
	}
	switch {
	case l.StartPods == 0 && l.ReadyPods == 0:
		out = append(out, "the start and Ready delays are the model's")
	case l.StartPods == 0:
		out = append(out, "the start delay is the model's")
	}
	if l.Replacements == 0 {
		out = append(out, "the termination delay is the model's")
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// seconds is a number of seconds as a Duration says it (2s, 1m30s).
func seconds(s float64) string {
	return Duration(time.Duration(math.Round(s * float64(time.Second)))).String()
}

// PodBehavior overrides the kubelet's defaults for the pods it matches (every given selector must
// match; no selector matches every pod). A rule keyed by image follows a revision rather than a
// pod name: "pods running image X never become ready" survives the pod being recreated.
type PodBehavior struct {
	Pod     string `json:"pod,omitempty"`
	Ordinal *int   `json:"ordinal,omitempty"`
	Image   string `json:"image,omitempty"`

	StartDelay         *Duration `json:"startDelay,omitempty"`
	ReadyDelay         *Duration `json:"readyDelay,omitempty"`
	TerminationDelay   *Duration `json:"terminationDelay,omitempty"`
	RestartDelay       *Duration `json:"restartDelay,omitempty"` // in-place update -> new containers running
	NeverReady         *bool     `json:"neverReady,omitempty"`
	FailAfter          *Duration `json:"failAfter,omitempty"`          // phase Failed this long after Running
	CompleteAfter      *Duration `json:"completeAfter,omitempty"`      // phase Succeeded this long after Running
	LoseReadinessAfter *Duration `json:"loseReadinessAfter,omitempty"` // Ready=False this long after becoming Ready
}

// TickEvery is the tick model's period.
func (c KubeletConfig) TickEvery() time.Duration { return DurationOr(c.Tick, DefaultTick) }

// PodCycle is how long the model takes to bring one pod to Ready, after taking the old one away when
// replace is set, and that sum in words.
func (c KubeletConfig) PodCycle(replace bool) (time.Duration, string) {
	if c.Model == ModelTick { // one tick to be gone, one to be created Running and Ready
		if replace {
			return 2 * c.TickEvery(), fmt.Sprintf("2 ticks of %s", Duration(c.TickEvery()))
		}
		return c.TickEvery(), fmt.Sprintf("1 tick of %s", Duration(c.TickEvery()))
	}
	start, ready, term := DurationOr(c.StartDelay, DefaultStartDelay), DurationOr(c.ReadyDelay, DefaultReadyDelay), DurationOr(c.TerminationDelay, DefaultTerminationDelay)
	how := fmt.Sprintf("start %s + Ready %s", Duration(start), Duration(ready))
	if !replace {
		return start + ready, how
	}
	return term + start + ready, fmt.Sprintf("termination %s + ", Duration(term)) + how
}

// Validate refuses a kubelet model a replay cannot run, naming the field.
func (c KubeletConfig) Validate() error {
	if len(c.Source) > maxKubeletSource {
		return fmt.Errorf("kubelet.source is longer than %d bytes", maxKubeletSource)
	}
	switch c.Model {
	case "", ModelDelays:
	case ModelTick:
		if len(c.Pods) > 0 {
			return fmt.Errorf("kubelet rules: the tick model (the reference harness's) has none; mark never-ready pods with the template annotation %s", NeverReadyAnnotation)
		}
		if c.TickEvery() <= 0 {
			return fmt.Errorf("kubelet.tick must be positive")
		}
	default:
		return fmt.Errorf("kubelet.model %q: want %q or %q", c.Model, ModelDelays, ModelTick)
	}
	for _, d := range []struct {
		d    *Duration
		path string
	}{{c.Tick, "kubelet.tick"}, {c.StartDelay, "kubelet.startDelay"}, {c.ReadyDelay, "kubelet.readyDelay"}, {c.TerminationDelay, "kubelet.terminationDelay"}, {c.RestartDelay, "kubelet.restartDelay"}} {
		if err := NonNegative(d.d, d.path); err != nil {
			return err
		}
	}
	for i, b := range c.Pods {
		if err := b.NonNegative(fmt.Sprintf("kubelet.pods[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// NonNegative refuses a rule with a negative delay.
func (b PodBehavior) NonNegative(path string) error {
	for _, d := range []struct {
		d    *Duration
		name string
	}{{b.StartDelay, "startDelay"}, {b.ReadyDelay, "readyDelay"}, {b.TerminationDelay, "terminationDelay"}, {b.RestartDelay, "restartDelay"},
		{b.FailAfter, "failAfter"}, {b.CompleteAfter, "completeAfter"}, {b.LoseReadinessAfter, "loseReadinessAfter"}} {
		if err := NonNegative(d.d, path+"."+d.name); err != nil {
			return err
		}
	}
	return nil
}

func DurationOr(d *Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.D()
}

// behavior is the effective behaviour of one pod incarnation.
type behavior struct {
	start, ready, termination time.Duration
	restart                   time.Duration // in-place update -> new containers running
	neverReady                bool
	failAfter, completeAfter  *time.Duration
	loseReadinessAfter        *time.Duration
}

func (b PodBehavior) matches(p Obj) bool {
	name := jsonobj.GetStr(p, "metadata.name")
	if b.Pod != "" && b.Pod != name {
		return false
	}
	if b.Ordinal != nil {
		if o, ok := ordinal.Ordinal(name); !ok || o != *b.Ordinal {
			return false
		}
	}
	if b.Image != "" {
		found := false
		for _, c := range jsonobj.GetArr(p, "spec.containers") {
			found = found || jsonobj.GetStr(c, "image") == b.Image
		}
		if !found {
			return false
		}
	}
	return true
}

func (c KubeletConfig) behaviorOf(p Obj) behavior {
	b := behavior{
		start:       DurationOr(c.StartDelay, DefaultStartDelay),
		ready:       DurationOr(c.ReadyDelay, DefaultReadyDelay),
		termination: DurationOr(c.TerminationDelay, DefaultTerminationDelay),
		neverReady:  neverReadyAnnotated(p),
	}
	opt := func(d *Duration) *time.Duration {
		if d == nil {
			return nil
		}
		v := d.D()
		return &v
	}
	restart := c.RestartDelay // nil: the pod's start delay
	for _, r := range c.Pods {
		if !r.matches(p) {
			continue
		}
		if r.RestartDelay != nil {
			restart = r.RestartDelay
		}
		b.start = DurationOr(r.StartDelay, b.start)
		b.ready = DurationOr(r.ReadyDelay, b.ready)
		b.termination = DurationOr(r.TerminationDelay, b.termination)
		if r.NeverReady != nil {
			b.neverReady = *r.NeverReady
		}
		if r.FailAfter != nil {
			b.failAfter = opt(r.FailAfter)
		}
		if r.CompleteAfter != nil {
			b.completeAfter = opt(r.CompleteAfter)
		}
		if r.LoseReadinessAfter != nil {
			b.loseReadinessAfter = opt(r.LoseReadinessAfter)
		}
	}
	b.restart = DurationOr(restart, b.start)
	b.neverReady = b.neverReady || c.neverReadyRevision(p)
	return b
}

// neverReadyRevision: the pod is of the revision the model keeps from ever becoming Ready.
func (c KubeletConfig) neverReadyRevision(p Obj) bool {
	return c.NeverReadyRevision != "" && jsonobj.GetStr(p, "metadata.labels.controller-revision-hash") == c.NeverReadyRevision
}

// notReadyInTick is why the tick model starts a pod Running but not Ready, or "" when it starts it Ready: its
// never-ready annotation (the reference harness's rule) or the revision the model keeps from being Ready.
func (c KubeletConfig) notReadyInTick(p Obj) string {
	switch {
	case neverReadyAnnotated(p):
		return NeverReadyAnnotation
	case c.neverReadyRevision(p):
		return "revision " + c.NeverReadyRevision + " is never Ready in this model"
	}
	return ""
}

// Kubelet moves pods through their lifecycle in virtual time.
type Kubelet struct {
	cfg    KubeletConfig
	api    *APIServer
	clock  *Clock
	timers *Timers

	// tick model: the step at which a pod was created / given a deletionTimestamp
	step        int
	createdStep map[string]int
	deletedStep map[string]int

	nodes []string // the world's nodes, by name: a pod is scheduled onto nodes[ordinal % len] when created

	expanding     map[string]bool // claims the resizer is expanding (delays model)
	grown         map[string]bool // claims whose storage request a patch changed since expandClaims looked
	claimsScanned bool            // expandClaims has looked at the claims the world started with
	claims        *Watch          // the claims written since BindClaims last looked

	restartStep map[string]int // tick model: the step at which a pod's images or resources changed in place
}

// NewKubelet is a kubelet of model cfg over api's pods, scheduling its transitions on t.
func NewKubelet(cfg KubeletConfig, api *APIServer, clock *Clock, t *Timers) *Kubelet {
	k := &Kubelet{cfg: cfg, api: api, clock: clock, timers: t, createdStep: map[string]int{}, deletedStep: map[string]int{},
		expanding: map[string]bool{}, grown: map[string]bool{}}
	api.onPodCreated = k.PodCreated
	api.onPodDeleted = k.PodDeleted
	api.onClaimGrew = func(name string) { k.grown[name] = true }
	api.onPodSpecChanged = k.PodSpecChanged
	return k
}

func (k *Kubelet) tickModel() bool { return k.cfg.Model == ModelTick }

func (k *Kubelet) PodCreated(name string) {
	if len(k.nodes) > 0 { // the scheduler: pods spread over the nodes by ordinal, as a topology spread would
		o, _ := ordinal.Ordinal(name)
		k.api.MutatePod(name, func(p Obj) { jsonobj.Ensure(p, "spec")["nodeName"] = k.nodes[max(o, 0)%len(k.nodes)] })
	}
	if k.tickModel() {
		k.createdStep[name] = k.step
		return
	}
	p := k.api.Get(KindPod, name)
	uid := jsonobj.GetStr(p, "metadata.uid")
	b := k.cfg.behaviorOf(p)
	now := k.clock.Now()
	k.timers.add(now.Add(b.start), "kubelet start "+name, func() { k.start(name, uid, b) })
}

// same reports whether the pod named name is still the incarnation uid (a timer for a pod that
// was deleted and recreated in the meantime must not touch the new one).
func (k *Kubelet) same(name, uid string) Obj {
	p := k.api.Get(KindPod, name)
	if p == nil || jsonobj.GetStr(p, "metadata.uid") != uid {
		return nil
	}
	return p
}

func (k *Kubelet) start(name, uid string, b behavior) {
	p := k.same(name, uid)
	if p == nil || jsonobj.Get(p, "metadata.deletionTimestamp") != nil || jsonobj.GetStr(p, "status.phase") != "Pending" {
		return
	}
	now := k.clock.Now()
	ready := !b.neverReady && b.ready == 0
	k.api.MutatePod(name, func(p Obj) {
		SetRunning(p, now, ready)
		if inPlaceUpdated(p) { // updated in place before it started: the statuses say which spec runs
			setContainerStatuses(p, now, ready, false)
		}
	})
	switch {
	case b.neverReady:
		k.api.Note("kubelet", ReasonRunning, KindPod, name, "pod %s Running, never Ready", name)
	case ready:
		k.api.Note("kubelet", ReasonReady, KindPod, name, "pod %s Running and Ready", name)
	default:
		k.api.Note("kubelet", ReasonRunning, KindPod, name, "pod %s Running", name)
		k.timers.add(now.Add(b.ready), "kubelet ready "+name, func() { k.becomeReady(name, uid, b) })
	}
	if ready {
		k.scheduleLoss(name, uid, b)
	}
	if b.failAfter != nil {
		k.timers.add(now.Add(*b.failAfter), "kubelet fail "+name, func() { k.finish(name, uid, "Failed") })
	}
	if b.completeAfter != nil {
		k.timers.add(now.Add(*b.completeAfter), "kubelet complete "+name, func() { k.finish(name, uid, "Succeeded") })
	}
}

func (k *Kubelet) becomeReady(name, uid string, b behavior) {
	p := k.same(name, uid)
	if p == nil || jsonobj.Get(p, "metadata.deletionTimestamp") != nil || jsonobj.GetStr(p, "status.phase") != "Running" {
		return
	}
	now := k.clock.Now()
	k.api.MutatePod(name, func(p Obj) { SetReady(p, now, true) })
	k.api.Note("kubelet", ReasonReady, KindPod, name, "pod %s Ready", name)
	k.scheduleLoss(name, uid, b)
}

func (k *Kubelet) scheduleLoss(name, uid string, b behavior) {
	if b.loseReadinessAfter == nil {
		return
	}
	k.timers.add(k.clock.Now().Add(*b.loseReadinessAfter), "kubelet unready "+name, func() {
		p := k.same(name, uid)
		if p == nil || jsonobj.Get(p, "metadata.deletionTimestamp") != nil || !kube.PodReadyJSON(p) {
			return
		}
		k.api.MutatePod(name, func(p Obj) { SetReady(p, k.clock.Now(), false) })
		k.api.Note("kubelet", ReasonLostReadiness, KindPod, name, "pod %s lost readiness", name)
	})
}

// finish ends a pod's containers: phase Failed or Succeeded, not Ready.
func (k *Kubelet) finish(name, uid, phase string) {
	p := k.same(name, uid)
	if p == nil || jsonobj.Get(p, "metadata.deletionTimestamp") != nil {
		return
	}
	if ph := jsonobj.GetStr(p, "status.phase"); ph == "Failed" || ph == "Succeeded" {
		return
	}
	SetPhase(k.api, name, phase, k.clock.Now())
	k.api.Note("kubelet", phase, KindPod, name, "pod %s %s", name, phase)
}

func SetPhase(api *APIServer, name, phase string, now time.Time) {
	api.MutatePod(name, func(p Obj) {
		SetReady(p, now, false)
		jsonobj.Set(p, "status.phase", phase)
	})
}

func (k *Kubelet) PodDeleted(name string) {
	if k.tickModel() {
		k.deletedStep[name] = k.step
		return
	}
	p := k.api.Get(KindPod, name)
	uid := jsonobj.GetStr(p, "metadata.uid")
	d := k.cfg.behaviorOf(p).termination
	if g, ok := jsonobj.GetInt(p, "metadata.deletionGracePeriodSeconds"); ok && time.Duration(g)*time.Second < d {
		d = time.Duration(g) * time.Second
	}
	k.timers.add(k.clock.Now().Add(d), "kubelet remove "+name, func() {
		if k.same(name, uid) != nil {
			k.api.removePod(name)
			k.api.Note("kubelet", ReasonRemoved, KindPod, name, "pod %s terminated and removed", name)
		}
	})
}

// BindClaims binds new PVCs at once in the delays model (the tick model binds at the next tick). It looks at
// every claim the first time, then at the claims written since (a claim nobody wrote is as it was: bound, or
// not to be bound), in natural order, as a look at every claim would bind them.
func (k *Kubelet) BindClaims() {
	if k.claims == nil {
		k.claims = k.api.Watch(KindClaim)
	}
	for _, n := range k.claims.Take() {
		c := k.api.objs[KindClaim][n]
		if c != nil && jsonobj.GetStr(c, "status.phase") == "Pending" && jsonobj.Get(c, "metadata.deletionTimestamp") == nil {
			jsonobj.Set(c, "status.phase", "Bound")
			k.api.bump(KindClaim, c)
		}
	}
}

// claimResized reports whether a patch changed a claim's storage request. A bound claim whose request
// changed has, until the resizer expands it, the capacity it had: its former request when the world never
// gave it one.
func claimResized(old, cur Obj) bool {
	before := jsonobj.GetStr(old, "spec.resources.requests.storage")
	if jsonobj.GetStr(cur, "spec.resources.requests.storage") == before {
		return false
	}
	if jsonobj.GetStr(cur, "status.phase") == "Bound" && jsonobj.Get(cur, "status.capacity.storage") == nil {
		jsonobj.Set(cur, "status.capacity.storage", before)
	}
	return true
}

// resizeDelay is how long the volume resizer (a CSI driver's external-resizer, and the kubelet's file
// system expansion) takes to expand a claim in the delays model.
const resizeDelay = 5 * time.Second

// ExpandClaims is the volume resizer of the delays model: a Bound claim whose storage request is above its
// capacity is expanded to it resizeDelay later (the tick model, the reference harness's, has no resizer).
// It looks at the claims of the world it starts from once, then only at those a patch grew (not at every
// claim after every sync).
func (k *Kubelet) ExpandClaims() {
	if k.tickModel() {
		return
	}
	if !k.claimsScanned {
		k.claimsScanned = true
		for _, n := range k.api.Names(KindClaim) {
			k.grown[n] = true
		}
	}
	if len(k.grown) == 0 {
		return
	}
	names := make([]string, 0, len(k.grown))
	for n := range k.grown {
		names = append(names, n)
	}
	SortNatural(names)
	clear(k.grown)
	for _, n := range names {
		c := k.api.objs[KindClaim][n]
		if c == nil {
			continue
		}
		size := jsonobj.GetStr(c, "spec.resources.requests.storage")
		req, ok1 := quantity.Value(size) // bounded, whatever a scenario's claim says
		capacity, ok2 := quantity.Value(jsonobj.GetStr(c, "status.capacity.storage"))
		if !ok1 || !ok2 || req <= capacity || jsonobj.GetStr(c, "status.phase") != "Bound" || k.expanding[n] {
			continue
		}
		k.expanding[n] = true
		uid := jsonobj.GetStr(c, "metadata.uid")
		k.timers.add(k.clock.Now().Add(resizeDelay), "resizer expand "+n, func() {
			delete(k.expanding, n)
			c := k.api.objs[KindClaim][n]
			if c == nil || jsonobj.GetStr(c, "metadata.uid") != uid || jsonobj.GetStr(c, "spec.resources.requests.storage") != size {
				return // gone, or resized again (the patch marked it grown: the next expandClaims sees it)
			}
			jsonobj.Set(c, "status.capacity.storage", size)
			k.api.bump(KindClaim, c)
			k.api.Note("resizer", ReasonExpanded, KindClaim, n, "claim %s expanded to %s", n, size)
		})
	}
}

// TickProgress applies the reference harness's world rules at the start of step `step`.
func (k *Kubelet) TickProgress(step int) {
	k.step = step
	k.restartInTick(step, k.clock.Now())
	advanceTick(k.api, k.clock.Now(), k.cfg.notReadyInTick,
		func(name string) bool {
			ds, ok := k.deletedStep[name]
			return !ok || ds < step
		},
		func(name string) bool {
			cs, ok := k.createdStep[name]
			return ok && cs < step
		},
		func(name string) {
			delete(k.deletedStep, name)
			delete(k.createdStep, name)
		},
		func(name string) { delete(k.createdStep, name) })
}

// PendingTick lists what the tick model still has to do (the harness's stop condition).
func (k *Kubelet) PendingTick() []string {
	var out []string
	for _, n := range k.api.Names(KindPod) {
		p := k.api.objs[KindPod][n]
		if jsonobj.Get(p, "metadata.deletionTimestamp") != nil {
			out = append(out, n+" terminating")
		} else if _, ok := k.createdStep[n]; ok {
			out = append(out, n+" starting")
		}
	}
	return append(out, k.api.AwaitingGC()...)
}

// AdvanceTick is one tick of the reference harness's world, in its order: terminating pods that
// may go disappear; pods that may start become Running and Ready (Ready=False with the
// never-ready annotation), all conditions stamped now; Pending claims bind; then garbage
// collection. hack/conformance reconstructs the harness's intermediate worlds with the same rules
// (AdvanceTickSnapshot).
func AdvanceTick(api *APIServer, now time.Time, mayRemove, mayStart func(string) bool, removed, started func(string)) {
	advanceTick(api, now, KubeletConfig{}.notReadyInTick, mayRemove, mayStart, removed, started)
}

// advanceTick is AdvanceTick with the reason a pod starts not Ready (notReady, "" for Ready): the harness's
// annotation, and the tick model's never-Ready revision when it has one.
func advanceTick(api *APIServer, now time.Time, notReady func(Obj) string, mayRemove, mayStart func(string) bool, removed, started func(string)) {
	for _, n := range api.Names(KindPod) {
		p := api.objs[KindPod][n]
		if jsonobj.Get(p, "metadata.deletionTimestamp") != nil && mayRemove(n) {
			api.removePod(n)
			removed(n)
			api.Note("kubelet", ReasonRemoved, KindPod, n, "pod %s terminated and removed", n)
		}
	}
	for _, n := range api.Names(KindPod) {
		p := api.objs[KindPod][n]
		if !mayStart(n) || jsonobj.Get(p, "metadata.deletionTimestamp") != nil || jsonobj.GetStr(p, "status.phase") != "Pending" {
			continue
		}
		started(n)
		why := notReady(p)
		ready := why == ""
		api.MutatePod(n, func(p Obj) { SetRunning(p, now, ready) })
		if ready {
			api.Note("kubelet", ReasonReady, KindPod, n, "pod %s Running and Ready", n)
		} else {
			api.Note("kubelet", ReasonRunning, KindPod, n, "pod %s Running, not Ready (%s)", n, why)
		}
	}
	for _, n := range api.Names(KindClaim) {
		c := api.objs[KindClaim][n]
		if jsonobj.GetStr(c, "status.phase") == "Pending" && jsonobj.Get(c, "metadata.deletionTimestamp") == nil {
			jsonobj.Set(c, "status.phase", "Bound")
			api.bump(KindClaim, c)
		}
	}
	api.CollectGarbage()
}

func condition(typ string, status bool, now time.Time) Obj {
	s := "False"
	if status {
		s = "True"
	}
	return Obj{"type": typ, "status": s, "lastProbeTime": nil, "lastTransitionTime": now.UTC().Format(time.RFC3339)}
}

// SetRunning is the kubelet's first status report: Running, scheduled and initialized.
func SetRunning(p Obj, now time.Time, ready bool) {
	st := jsonobj.Ensure(p, "status")
	st["phase"] = "Running"
	st["startTime"] = now.UTC().Format(time.RFC3339)
	st["conditions"] = []any{
		condition("PodScheduled", true, now), condition("Initialized", true, now),
		condition("ContainersReady", ready, now), condition("Ready", ready, now),
	}
}

// SetReady flips ContainersReady and Ready.
func SetReady(p Obj, now time.Time, ready bool) {
	st := jsonobj.Ensure(p, "status")
	conds := jsonobj.GetArr(st, "conditions")
	for _, typ := range []string{"ContainersReady", "Ready"} {
		found := false
		for i, c := range conds {
			if jsonobj.GetStr(c, "type") == typ {
				conds[i] = condition(typ, ready, now)
				found = true
			}
		}
		if !found {
			conds = append(conds, condition(typ, ready, now))
		}
	}
	st["conditions"] = conds
}

// neverReadyAnnotated reads the annotation directly: its key contains dots, which paths split on.
func neverReadyAnnotated(p Obj) bool {
	return jsonobj.GetObj(p, "metadata.annotations")[NeverReadyAnnotation] == "true"
}

// SetNodes gives the kubelet the world's nodes, which it schedules pods onto.
func (k *Kubelet) SetNodes(nodes []string) { k.nodes = nodes }

// SetStep tells the tick model the step it is at.
func (k *Kubelet) SetStep(step int) { k.step = step }

// Created reports whether the pod name was created and has not started yet (the tick model).
func (k *Kubelet) Created(name string) bool {
	_, ok := k.createdStep[name]
	return ok
}

// AddBehaviors adds per-pod behaviours (a scenario's kubelet event); later rules win.
func (k *Kubelet) AddBehaviors(b ...PodBehavior) { k.cfg.Pods = append(k.cfg.Pods, b...) }

// inPlaceUpdated: the pod carries the record of an in-place update (abi.AnnotationInPlaceUpdate), whose
// module reads its container statuses to know when its containers run the new spec.
func inPlaceUpdated(p Obj) bool {
	_, ok := jsonobj.GetObj(p, "metadata.annotations")["ordinal.dev/in-place-update"]
	return ok
}

// PodSpecChanged is an in-place change of a running pod: new images restart its containers after the pod's
// restart delay (the start delay unless given: the image pulled and started), Ready again after its ready
// delay; new resources are applied after the restart delay without a restart. The tick model does either at the next tick.
func (k *Kubelet) PodSpecChanged(name string, restart bool) {
	p := k.api.Get(KindPod, name)
	if p == nil || jsonobj.Get(p, "metadata.deletionTimestamp") != nil || jsonobj.GetStr(p, "status.phase") != "Running" {
		return // a pod not running yet starts with its spec (start)
	}
	if k.tickModel() {
		if k.restartStep == nil {
			k.restartStep = map[string]int{}
		}
		k.restartStep[name] = k.step
		return
	}
	uid := jsonobj.GetStr(p, "metadata.uid")
	b := k.cfg.behaviorOf(p)
	now := k.clock.Now()
	k.timers.add(now.Add(b.restart), "kubelet restart "+name, func() {
		p := k.same(name, uid)
		if p == nil || jsonobj.Get(p, "metadata.deletionTimestamp") != nil || jsonobj.GetStr(p, "status.phase") != "Running" {
			return
		}
		now := k.clock.Now()
		if !restart {
			k.api.MutatePod(name, func(p Obj) { setContainerStatuses(p, now, kube.PodReadyJSON(p), false) })
			k.api.Note("kubelet", ReasonResized, KindPod, name, "pod %s resized in place", name)
			return
		}
		b := k.cfg.behaviorOf(p) // the new image's behaviour
		ready := !b.neverReady && b.ready == 0
		k.api.MutatePod(name, func(p Obj) {
			setContainerStatuses(p, now, ready, true)
			SetReady(p, now, ready)
		})
		k.api.Note("kubelet", ReasonRestarted, KindPod, name, "pod %s restarted its containers in place", name)
		if !ready && !b.neverReady {
			k.timers.add(now.Add(b.ready), "kubelet ready "+name, func() { k.becomeReady(name, uid, b) })
		}
	})
}

// restartInTick is the tick model's in-place restart: pods changed before this step run their new spec,
// Ready (unless the model keeps them from it).
func (k *Kubelet) restartInTick(step int, now time.Time) {
	for _, name := range k.api.Names(KindPod) {
		s, ok := k.restartStep[name]
		if !ok || s >= step {
			continue
		}
		delete(k.restartStep, name)
		p := k.api.Get(KindPod, name)
		if p == nil || jsonobj.Get(p, "metadata.deletionTimestamp") != nil {
			continue
		}
		ready := k.cfg.notReadyInTick(p) == ""
		k.api.MutatePod(name, func(p Obj) {
			setContainerStatuses(p, now, ready, true)
			SetReady(p, now, ready)
		})
		k.api.Note("kubelet", ReasonRestarted, KindPod, name, "pod %s restarted its containers in place", name)
	}
}

// setContainerStatuses reports the pod's containers as running its spec: images and resources as the spec
// has them, no resize pending or in progress, the status of the pod's generation; restarted: started now
// (restartCount up), else since they started. Init containers are reported
// too, as the kubelet reports them (the module waits for a sidecar's status after an in-place update): a
// sidecar (restartPolicy Always) runs like a container; an init container has completed, with the image it
// ran, which an in-place update does not run again.
func setContainerStatuses(p Obj, now time.Time, ready, restarted bool) {
	st := jsonobj.Ensure(p, "status")
	if g := jsonobj.Get(p, "metadata.generation"); g != nil {
		st["observedGeneration"] = g
	}
	if cs := jsonobj.GetArr(st, "conditions"); len(cs) > 0 {
		kept := []any{}
		for _, c := range cs {
			if t := jsonobj.GetStr(c, "type"); t != "PodResizePending" && t != "PodResizeInProgress" {
				kept = append(kept, c)
			}
		}
		st["conditions"] = kept
	}
	started := jsonobj.GetStr(st, "startTime")
	if restarted || started == "" {
		started = now.UTC().Format(time.RFC3339)
	}
	for _, list := range [][2]string{{"containers", "containerStatuses"}, {"initContainers", "initContainerStatuses"}} {
		old := map[string]Obj{}
		for _, c := range jsonobj.GetArr(st, list[1]) {
			if co, ok := c.(Obj); ok {
				old[jsonobj.GetStr(co, "name")] = co
			}
		}
		var out []any
		for _, c := range jsonobj.GetArr(p, "spec."+list[0]) {
			name := jsonobj.GetStr(c, "name")
			if list[0] == "initContainers" && jsonobj.GetStr(c, "restartPolicy") != "Always" {
				cs := old[name]
				if cs == nil {
					cs = Obj{"name": name, "image": jsonobj.GetStr(c, "image"), "ready": true, "started": false, "restartCount": jsonobj.Num(0),
						"state": Obj{"terminated": Obj{"exitCode": jsonobj.Num(0), "reason": "Completed", "startedAt": started, "finishedAt": started}}}
				}
				out = append(out, cs)
				continue
			}
			restarts, _ := jsonobj.GetInt(old[name], "restartCount")
			since := started
			if o := old[name]; o != nil && !restarted {
				if t := jsonobj.GetStr(o, "state.running.startedAt"); t != "" {
					since = t
				}
			}
			if restarted && old[name] != nil {
				restarts++
			}
			cs := Obj{"name": name, "image": jsonobj.GetStr(c, "image"), "ready": ready, "started": true,
				"restartCount": jsonobj.Num(restarts), "state": Obj{"running": Obj{"startedAt": since}}}
			if r := jsonobj.Get(c, "resources"); r != nil {
				cs["resources"] = jsonobj.Clone(r)
			}
			out = append(out, cs)
		}
		if out != nil || list[0] == "containers" {
			st[list[1]] = out
		}
	}
}

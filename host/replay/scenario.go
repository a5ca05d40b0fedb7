package replay

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/yamljson"
)

// defaultStart is the virtual time a scenario starts at unless it says otherwise.
var defaultStart = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// Scenario is a replay input: the initial manifests, the kubelet model and timed events.
// See testdata/scenarios/README.md for the format.
type Scenario struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Start       string            `json:"start,omitempty"` // RFC 3339; defaultStart when empty
	Features    map[string]bool   `json:"features,omitempty"`
	Kubelet     KubeletConfig     `json:"kubelet,omitempty"`
	Limits      Limits            `json:"limits,omitempty"`
	Manifests   []json.RawMessage `json:"manifests"`
	Events      []Event           `json:"events,omitempty"`
	// Signals are what the host supplies the set's policies at the start (abi.PolicyContext.Signals).
	Signals map[string]json.RawMessage `json:"signals,omitempty"`

	// Dir resolves relative paths (swapModule); the scenario file's directory when loaded.
	Dir string `json:"-"`
	// UnknownFields are the fields of the scenario's Kubernetes objects (manifests, apply and recreateSet
	// events) that their kinds do not have, by their paths in the scenario; ParseScenario dropped them from
	// the objects, as kube-apiserver stores an object under fieldValidation Warn. A caller that wants
	// Strict (ordinal --validate=strict) refuses a scenario that has any.
	UnknownFields []fieldcheck.Unknown `json:"-"`
	// snapshot, when set, is the initial world instead of Manifests (preview --from).
	snapshot Obj
}

// Limits stop a replay that would not settle by itself.
type Limits struct {
	Steps    int       `json:"steps,omitempty"`    // syncs from the start; default max(2000, 10 per replica) from each change of the world
	Duration *Duration `json:"duration,omitempty"` // virtual time from the start; default max(6h, 1m per replica) from each change
}

// Event is one thing that happens to the world. Timing: `at` is an offset from the start;
// `settled: true` waits until nothing is pending any more; `after` adds a delay to the previous
// event's time (or to the moment the world settled); with neither, it happens together with the
// previous event. Events happen in order. Exactly one action per event (or none: a marker that
// only lets time pass).
type Event struct {
	At      *Duration `json:"at,omitempty"`
	Settled bool      `json:"settled,omitempty"`
	After   *Duration `json:"after,omitempty"`
	Note    string    `json:"note,omitempty"`

	Apply       json.RawMessage `json:"apply,omitempty"`       // an edited StatefulSet manifest, applied as a PUT
	Set         json.RawMessage `json:"set,omitempty"`         // {"spec.replicas": 3, "spec.template.spec.containers[0].image": "x"}
	DeletePod   string          `json:"deletePod,omitempty"`   // a user deletes the pod
	FailPod     string          `json:"failPod,omitempty"`     // the pod's phase becomes Failed
	CompletePod string          `json:"completePod,omitempty"` // the pod's phase becomes Succeeded
	UnreadyPod  string          `json:"unreadyPod,omitempty"`  // the pod loses readiness
	// LabelPod: someone else (an operator, the database itself) changes a pod's labels; null removes one
	LabelPod *PodLabels `json:"labelPod,omitempty"`
	// Signals change what the host supplies the set's policies (null removes one)
	Signals           map[string]json.RawMessage `json:"signals,omitempty"`
	Kubelet           []PodBehavior              `json:"kubelet,omitempty"` // kubelet rules added from now on
	RestartController bool                       `json:"restartController,omitempty"`
	SwapModule        string                     `json:"swapModule,omitempty"` // path of another reconcile module
	// RecreateSet: the set is deleted with --cascade=orphan (its pods, revisions and claims stay, without
	// its owner references) and created again from this manifest: how a field the API server keeps
	// immutable (volumeClaimTemplates) changes on a live set
	RecreateSet json.RawMessage `json:"recreateSet,omitempty"`
}

// PodLabels is a labelPod event: the labels to set on the pod (null: remove).
type PodLabels struct {
	Pod    string             `json:"pod"`
	Labels map[string]*string `json:"labels"`
}

func (e Event) action() string {
	n := 0
	kind := "wait"
	add := func(ok bool, k string) {
		if ok {
			n++
			kind = k
		}
	}
	add(len(e.Apply) > 0, "apply")
	add(len(e.Set) > 0, "set")
	add(e.DeletePod != "", "deletePod")
	add(e.FailPod != "", "failPod")
	add(e.CompletePod != "", "completePod")
	add(e.UnreadyPod != "", "unreadyPod")
	add(e.LabelPod != nil, "labelPod")
	add(len(e.Signals) > 0, "signals")
	add(len(e.Kubelet) > 0, "kubelet")
	add(e.RestartController, "restartController")
	add(e.SwapModule != "", "swapModule")
	add(len(e.RecreateSet) > 0, "recreateSet")
	if n > 1 {
		return ""
	}
	return kind
}

// MaxScenarioBytes bounds a scenario file (and a golden timeline): far above any hand-written world.
const MaxScenarioBytes = 64 << 20

// LoadScenario reads a scenario file (YAML or JSON).
func LoadScenario(path string) (*Scenario, error) {
	b, err := yamljson.ReadFile(path, MaxScenarioBytes, "scenario "+path, "")
	if err != nil {
		return nil, err
	}
	sc, err := ParseScenario(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc.Dir = filepath.Dir(path)
	if err := sc.checkFiles(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// checkFiles finds, before replaying, a module a swapModule event names that is not there (once only a
// Note in the timeline, with exit 0).
func (sc *Scenario) checkFiles() error {
	for i, e := range sc.Events {
		if e.SwapModule == "" {
			continue
		}
		p := e.SwapModule
		if !filepath.IsAbs(p) && sc.Dir != "" {
			p = filepath.Join(sc.Dir, p)
		}
		if st, err := os.Stat(p); err != nil {
			return fmt.Errorf("events[%d].swapModule: %w", i, err)
		} else if !st.Mode().IsRegular() {
			return fmt.Errorf("events[%d].swapModule: %s is not a file", i, p)
		}
	}
	return nil
}

// ParseScenario decodes and validates a scenario: the one reading of the format, for every command that
// takes one. An unknown field of the scenario itself, or a `set` path the StatefulSet does not have, is an
// error (*fieldcheck.Error, each field with the one most likely meant): a misspelt event would otherwise
// silently do nothing. An unknown field of a Kubernetes object in it is dropped and listed in
// sc.UnknownFields, for the caller to judge.
func ParseScenario(b []byte) (*Scenario, error) {
	j, err := yamljson.ToJSON(b, MaxScenarioBytes)
	if err != nil {
		return nil, err
	}
	var sc Scenario
	unknown, err := fieldcheck.Check(j, &sc)
	if err != nil {
		return nil, err
	}
	unknown = append(unknown, sc.unknownSetPaths()...)
	if len(unknown) > 0 {
		return nil, &fieldcheck.Error{Unknown: unknown}
	}
	sc.dropUnknownObjectFields()
	return &sc, sc.validate()
}

// dropUnknownObjectFields drops the fields the scenario's Kubernetes objects do not have (kube.UnknownFields),
// listing them in sc.UnknownFields.
func (sc *Scenario) dropUnknownObjectFields() {
	drop := func(obj json.RawMessage, kind string, at ...any) json.RawMessage {
		if kind == "" {
			var tm struct{ Kind string }
			_ = json.Unmarshal(obj, &tm)
			kind = tm.Kind
		}
		us := kube.UnknownFields(kind, obj)
		sc.UnknownFields = append(sc.UnknownFields, fieldcheck.In(us, at...)...)
		return fieldcheck.Drop(obj, us)
	}
	for i, m := range sc.Manifests {
		sc.Manifests[i] = drop(m, "", "manifests", i)
	}
	for i := range sc.Events {
		e := &sc.Events[i]
		if len(e.Apply) > 0 {
			e.Apply = drop(e.Apply, world.KindSet, "events", i, "apply")
		}
		if len(e.RecreateSet) > 0 {
			e.RecreateSet = drop(e.RecreateSet, world.KindSet, "events", i, "recreateSet")
		}
	}
}

// unknownSetPaths are the fields of set events (their paths and what they set) that the StatefulSet does
// not have, by their paths in the scenario (events[2].set.spec.replicsa): the world would refuse the edit
// mid-replay, without the field meant.
func (sc *Scenario) unknownSetPaths() []fieldcheck.Unknown {
	var out []fieldcheck.Unknown
	for i, e := range sc.Events {
		var edits map[string]json.RawMessage
		if json.Unmarshal(e.Set, &edits) != nil {
			continue // validate says what is wrong with it
		}
		for _, path := range slices.Sorted(maps.Keys(edits)) {
			keys, err := jsonobj.ParsePath(path)
			if err != nil {
				continue // validate says what is wrong with the path
			}
			doc, ok := nested(keys, edits[path])
			if !ok {
				continue // the world says what is wrong with the path
			}
			out = append(out, fieldcheck.In(kube.UnknownFields(world.KindSet, doc), "events", i, "set")...)
		}
	}
	return out
}

// nested is the JSON object that holds val at keys, a list index i a list of i nulls and then the rest (an
// index past 1000, which no StatefulSet's list reaches, is not built).
func nested(keys []any, val json.RawMessage) ([]byte, bool) {
	var v any = val
	for j := len(keys) - 1; j >= 0; j-- {
		switch k := keys[j].(type) {
		case string:
			v = map[string]any{k: v}
		case int:
			if k < 0 || k > 1000 {
				return nil, false
			}
			list := make([]any, k+1)
			list[k] = v
			v = list
		}
	}
	doc, err := json.Marshal(v)
	return doc, err == nil
}

// validate refuses a scenario the replay could not run, naming the field: its own settings, the manifests
// of its world (a snapshot is checked where it is read), then each event.
func (sc *Scenario) validate() error {
	if err := sc.Kubelet.Validate(); err != nil {
		return err
	}
	if sc.Start != "" {
		if _, err := time.Parse(time.RFC3339, sc.Start); err != nil {
			return fmt.Errorf("start: %w", err)
		}
	}
	if sc.snapshot == nil {
		if err := checkManifests(sc.Manifests); err != nil {
			return err
		}
	}
	if err := sc.Limits.check(); err != nil {
		return err
	}
	for i, e := range sc.Events {
		if err := e.check(i, sc.Kubelet.Model); err != nil {
			return err
		}
	}
	return nil
}

// checkManifests: objects of the kinds a world holds, each named, and exactly one StatefulSet, the set the
// replay is about.
func checkManifests(manifests []json.RawMessage) error {
	sets := 0
	for i, m := range manifests {
		o, err := jsonobj.DecodeObj(m)
		if err != nil {
			return fmt.Errorf("manifests[%d]: %w", i, err)
		}
		switch k := jsonobj.GetStr(o, "kind"); k {
		case world.KindSet:
			sets++
		case world.KindPod, world.KindClaim, world.KindRevision, kindPDB, kindNode:
		default:
			return fmt.Errorf("manifests[%d]: kind %q: want StatefulSet, Pod, PersistentVolumeClaim, ControllerRevision, PodDisruptionBudget or Node", i, k)
		}
		if jsonobj.GetStr(o, "metadata.name") == "" {
			return fmt.Errorf("manifests[%d]: metadata.name is required", i)
		}
	}
	if sets != 1 {
		return fmt.Errorf("manifests: want exactly one StatefulSet, found %d", sets)
	}
	return nil
}

func (l Limits) check() error {
	if l.Duration != nil {
		if err := world.NonNegative(l.Duration, "limits.duration"); err != nil {
			return err
		}
	}
	if l.Steps < 0 {
		return fmt.Errorf("limits.steps: %d is negative", l.Steps)
	}
	return nil
}

// check refuses events[i] of a scenario whose kubelet model is model: a negative delay, more than one
// action or timing, an object its action could not apply, a kubelet rule the model cannot follow.
func (e Event) check(i int, model string) error {
	if err := e.checkDelays(i); err != nil {
		return err
	}
	if e.action() == "" {
		return fmt.Errorf("events[%d]: more than one action in one event", i)
	}
	if e.At != nil && (e.Settled || e.After != nil) {
		return fmt.Errorf("events[%d]: `at` excludes `settled` and `after`", i)
	}
	if err := e.checkObjects(i); err != nil {
		return err
	}
	if model == ModelTick {
		// the tick model has no kubelet rules: one an event adds is refused as one at the start is
		for _, b := range e.Kubelet {
			if err := (KubeletConfig{Model: ModelTick, Pods: []PodBehavior{b}}).Validate(); err != nil {
				return fmt.Errorf("events[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// checkDelays: the event's timing and the delays of its kubelet rules are not negative.
func (e Event) checkDelays(i int) error {
	for _, d := range []struct {
		d    *Duration
		path string
	}{{e.At, "at"}, {e.After, "after"}} {
		if err := world.NonNegative(d.d, fmt.Sprintf("events[%d].%s", i, d.path)); err != nil {
			return err
		}
	}
	for j, b := range e.Kubelet {
		if err := b.NonNegative(fmt.Sprintf("events[%d].kubelet[%d]", i, j)); err != nil {
			return err
		}
	}
	return nil
}

// checkObjects: the objects of a set, apply or recreateSet event are what the action applies.
func (e Event) checkObjects(i int) error {
	if len(e.Set) > 0 {
		if err := checkSet(e.Set); err != nil {
			return fmt.Errorf("events[%d].set: %w", i, err)
		}
	}
	if len(e.Apply) > 0 {
		o, err := jsonobj.DecodeObj(e.Apply)
		if err != nil || jsonobj.GetStr(o, "kind") != world.KindSet {
			return fmt.Errorf("events[%d].apply: want a StatefulSet manifest", i)
		}
	}
	if len(e.RecreateSet) > 0 {
		o, err := jsonobj.DecodeObj(e.RecreateSet)
		if err != nil || jsonobj.GetStr(o, "kind") != world.KindSet || jsonobj.GetStr(o, "metadata.name") == "" {
			return fmt.Errorf("events[%d].recreateSet: want a StatefulSet manifest with metadata.name", i)
		}
		if v := jsonobj.GetStr(o, "apiVersion"); v != "" && v != "apps/v1" {
			return fmt.Errorf("events[%d].recreateSet: apiVersion %q: want apps/v1", i, v)
		}
	}
	return nil
}

// checkSet reads a set event: an object of paths and the values merged there (jsonobj.MergeAt).
func checkSet(set json.RawMessage) error {
	edits, err := jsonobj.DecodeObj(set)
	if err != nil {
		return err
	}
	for _, path := range slices.Sorted(maps.Keys(edits)) {
		if err := jsonobj.CheckMerge(path, edits[path]); err != nil {
			return err
		}
	}
	return nil
}

func (sc *Scenario) start() time.Time {
	if sc.Start == "" {
		return defaultStart
	}
	t, _ := time.Parse(time.RFC3339, sc.Start)
	return t.UTC()
}

// Settled is the scenario that starts from the world tl ended in (preview --scenario): its snapshot, and
// what a snapshot does not carry — the kubelet model of sc, the signals and PodDisruptionBudgets as they were.
func Settled(sc *Scenario, tl *Timeline) (*Scenario, error) {
	o, err := jsonobj.DecodeObj(tl.Final)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return settledAt(sc, tl, o)
}

// settledAt is Settled with tl.Final already decoded (final, which the scenario shares: a replay clones it).
func settledAt(sc *Scenario, tl *Timeline, final Obj) (*Scenario, error) {
	base, err := scenarioOfSnapshot(final)
	if err != nil {
		return nil, err
	}
	base.Kubelet = sc.Kubelet
	base.Signals = maps.Clone(tl.finalSignals)
	base.Manifests = append(append(base.Manifests, tl.finalPDBs...), tl.finalNodes...)
	return base, nil
}

// ScenarioFromSnapshot makes a scenario whose initial world is an ABI snapshot (objects as the
// API server returned them), starting at the snapshot's `now`.
func ScenarioFromSnapshot(snapshot []byte) (*Scenario, error) {
	o, err := jsonobj.DecodeObj(snapshot)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return scenarioOfSnapshot(o)
}

// scenarioOfSnapshot is ScenarioFromSnapshot of a decoded snapshot.
func scenarioOfSnapshot(o Obj) (*Scenario, error) {
	if jsonobj.GetObj(o, "statefulSet") == nil {
		return nil, fmt.Errorf("snapshot: no statefulSet")
	}
	// Named as kubectl names it, namespace/name: a List or a cluster may hold the same name twice.
	name := jsonobj.GetStr(o, "statefulSet.metadata.name")
	if ns := jsonobj.GetStr(o, "statefulSet.metadata.namespace"); ns != "" {
		name = ns + "/" + name
	}
	sc := &Scenario{Name: name, snapshot: o, Start: jsonobj.GetStr(o, "now")}
	if f := jsonobj.GetObj(o, "features"); f != nil {
		sc.Features = map[string]bool{}
		for k, v := range f {
			b, _ := v.(bool)
			sc.Features[k] = b
		}
	}
	if sc.Start != "" {
		if t, err := time.Parse(time.RFC3339Nano, sc.Start); err == nil {
			sc.Start = t.UTC().Format(time.RFC3339)
		}
	}
	return sc, sc.validate()
}

// yamlToJSON converts a YAML (or JSON) document to JSON.
func yamlToJSON(b []byte) ([]byte, error) { return yamljson.ToJSON(b, MaxScenarioBytes) }

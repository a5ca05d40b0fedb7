package replay

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Timeline is the result of a replay: every controller sync in virtual time, what it saw and
// what it did.
type Timeline struct {
	Scenario    string          `json:"scenario"`
	Description string          `json:"description,omitempty"`
	Model       string          `json:"model"`
	Start       string          `json:"start"`
	Revisions   []RevisionLabel `json:"revisions"`
	Steps       []Step          `json:"steps"`
	Segments    []Segment       `json:"segments"`
	Outcome     Outcome         `json:"outcome"`
	StopReason  string          `json:"stopReason"`
	Notes       []string        `json:"notes,omitempty"`
	// PolicyFailures are the set's policies that failed (held nothing back), once per policy and reason.
	PolicyFailures []PolicyFailure `json:"policyFailures,omitempty"`
	// WarningEvents are the Warning events of the syncs, once per reason and message, but those of held writes
	// and failed policies (the holds and PolicyFailures say them).
	WarningEvents []WarningEvent `json:"warningEvents,omitempty"`

	// Final is the world at the end, as an ABI snapshot (preview --scenario starts from it, Settled).
	Final json.RawMessage `json:"-"`
	// What the world's snapshot does not carry, as it ended: the signals and the PodDisruptionBudgets.
	finalSignals map[string]json.RawMessage
	finalPDBs    []json.RawMessage
	finalNodes   []json.RawMessage

	budgetSpent bool          // the caller's Budget ended the replay (outcome "partial")
	longestSync time.Duration // its longest sync in wall-clock time (a Budget's deadline judges by it)
	// The module's Warning InvalidAnnotation messages, each once, in order (a preview's warnings).
	invalidAnnotations []string
}

// RevisionLabel is a ControllerRevision as the timeline names it: its letter from its number (revision 1 = A,
// rollout.RevisionLetter), the letter it had when the replay first named it, so a rollback shows the old
// letter again.
type RevisionLabel = rollout.RevisionRef

// Segment is the part of a replay between two user events. In the tick model each segment is what
// `oracle simulate` computes when started on the world at the segment's first step.
type Segment struct {
	FirstStep  int  `json:"firstStep"`
	Comparable bool `json:"comparable"` // tick model and no pod still starting at its start
	// Snapshot is the world the first sync of the segment saw (ABI snapshot).
	Snapshot json.RawMessage `json:"-"`
}

// Step is one controller sync.
type Step struct {
	Index   int      `json:"step"`
	Segment int      `json:"segment"`
	Time    string   `json:"time"`
	Offset  Duration `json:"offset"`
	// OffsetSeconds is Offset in seconds (outputs give a duration's text and its number).
	OffsetSeconds float64         `json:"offsetSeconds"`
	Trigger       []string        `json:"trigger,omitempty"` // why the controller synced
	World         []WorldEvent    `json:"world,omitempty"`   // what changed since the previous sync
	Pods          PodGrid         `json:"pods"`              // as the sync saw them
	Actions       []ActionRecord  `json:"actions"`
	Requeue       float64         `json:"requeueAfterSeconds,omitempty"`
	Error         string          `json:"error,omitempty"`
	Events        []string        `json:"events,omitempty"`
	Revisions     string          `json:"status"` // the set's status after the step, one line
	Plan          json.RawMessage `json:"plan"`   // the module's plan for the snapshot, as returned
	// Replanned is the plan carried out when the API server refused a write the plan did not predict and the
	// module was asked again (abi/README.md, "Writes that failed"); Actions are its writes.
	Replanned json.RawMessage `json:"replanned,omitempty"`

	errorHeld bool   // Error is the refusal of a held write (its hold says it)
	holdEvent []bool // by event: it reports a held write (the module's Failed<Verb>: its hold says it)
}

// quiet: the sync wrote nothing, failed nothing and saw no change of the world.
func (st *Step) quiet() bool { return len(st.Actions) == 0 && len(st.World) == 0 && st.Error == "" }

// PodState is one pod in the grid.
type PodState struct {
	Name        string `json:"name"`
	Ordinal     int    `json:"ordinal"`
	Revision    string `json:"revision"` // controller-revision-hash label
	Label       string `json:"label"`    // the revision's letter
	Phase       string `json:"phase"`
	Ready       bool   `json:"ready"`
	Terminating bool   `json:"terminating"`
}

// State is the pod's one-word state: Ready, Running (not Ready), Pending, Failed or Succeeded.
func (p PodState) State() string {
	if p.Phase == "Running" && p.Ready {
		return "Ready"
	}
	if p.Phase == "" {
		return "-"
	}
	return p.Phase
}

// ActionRecord is one write of a sync, summarised.
type ActionRecord struct {
	Verb   string `json:"verb"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
	// Patch is a patch's body as the plan has it (Detail says what it does: Ownership, ClaimStorage).
	Patch json.RawMessage `json:"patch,omitempty"`
	Error string          `json:"error,omitempty"`
	Held  *ActionHold     `json:"held,omitempty"` // a policy held it back (Error is the refusal): not issued
	// InPlace: extension in-place-update moves the pod to its revision without deleting it: this is the pod
	// update that moves its revision label to the one its in-place record (abi.AnnotationInPlaceUpdate) names,
	// or the resize right before it (abi/inplace.At, markInPlace). Detail says "in place" because of it.
	InPlace bool `json:"inPlace,omitempty"`
	// Why is the module's own account of this write, where one of its events reports it (events[].action):
	// for a pod delete extension in-place-update makes to recreate a pod it cannot update in place, the
	// message of its abi.EventRecreatingPod event (naming the field).
	Why string `json:"why,omitempty"`
}

// ActionHold is the policy that held a write, and why: its answer's hold (abi.PolicyHold).
type ActionHold struct {
	Policy            string  `json:"policy"`
	Reason            string  `json:"reason"`
	Message           string  `json:"message"`
	RetryAfterSeconds float64 `json:"retryAfterSeconds,omitempty"`

	repeated bool // the previous sync's hold of the write was the same (policy, reason, message)
}

// Outcome says how the replay ended.
type Outcome struct {
	// Result: "complete" (every pod at the update revision and Ready), "partitioned" (the rest is
	// held back by the partition), "waiting" (OnDelete: old pods stay until deleted), "stuck"
	// (nothing more will happen, yet pods are missing, not Ready or not updated), "limit" (the scenario's
	// step or time limit), "held" (OutcomeHeld: nothing but a policy's hold keeps the rollout from going on)
	// or "partial" (the caller's Budget ended the replay; a preview estimates the rest).
	Result   string   `json:"result"`
	Summary  string   `json:"summary"`
	Duration Duration `json:"duration"` // from the start to the last step
	// DurationSeconds is Duration in seconds.
	DurationSeconds float64 `json:"durationSeconds"`
	Steps           int     `json:"steps"`
	// Held are the writes policies hold as a "held" rollout ends, each with what its policy waits for.
	Held []PolicyHeld `json:"held,omitempty"`
}

// podStates reads the set's pods as the sync's snapshot had them (nothing is applied between); a pod
// that is not the set's (db-0, web--1 with its labels) has no ordinal in it and is left out. A pod's state is
// read once per change of the pod (record), for the set's membership rule of podsOfMembers; its letter is
// given when it is read, as letters are handed out as revisions appear. The grid is the last sync's with the
// pods the view read again since (gridEdit): a sync pays for what changed. Another membership rule (another
// set, or its deletion) reads every pod again.
func (e *engine) podStates() PodGrid {
	members := e.membersOfSet()
	records := e.view(world.KindPod)
	w := e.world[world.KindPod]
	if k := e.membersKey; k != e.podsOfMembers || e.podsFor != w {
		e.podsOfMembers, e.podsFor = k, w
		e.lastGrid = e.allPodStates(members, records)
		return e.lastGrid
	}
	var changes []gridChange
	change := func(r *record) {
		if r.gridSync == e.viewGen {
			return // read already this sync
		}
		r.gridSync = e.viewGen
		was := gridChange{key: r.state, member: r.member}
		if r.gone {
			r.member = false
		} else {
			e.readPodState(members, r)
		}
		switch {
		case r.member:
			changes = append(changes, gridChange{key: r.state, state: r.state, member: true})
		case was.member:
			changes = append(changes, gridChange{key: was.key})
		}
	}
	for _, r := range w.regrid {
		r.regridding = false
		change(r)
	}
	w.regrid = w.regrid[:0]
	if e.cfg.Model != ModelTick {
		for _, r := range w.volatile { // objects without a resourceVersion: read every sync, as no version tells
			if !r.gone && r.rv == "" {
				change(r)
			}
		}
	}
	slices.SortStableFunc(changes, func(a, b gridChange) int {
		switch {
		case gridLess(a.key, b.key):
			return -1
		case gridLess(b.key, a.key):
			return 1
		}
		return 0
	})
	e.lastGrid = gridEdit(e.lastGrid, changes)
	if verifyEncodedObjects {
		e.verifyGrid(members, records)
	}
	return e.lastGrid
}

// verifyGrid checks (tests) that the grid made from the last one and what changed is the grid of every pod
// read afresh (but their letters: a pod's is the one its revision had when the pod was read).
func (e *engine) verifyGrid(members kube.Members, records []*record) {
	var want []PodState
	for _, r := range records {
		if p, ok := podStateOf(members, r); ok {
			want = append(want, p)
		}
	}
	slices.SortStableFunc(want, func(a, b PodState) int { return cmp.Compare(a.Ordinal, b.Ordinal) })
	got := e.lastGrid.States()
	for i := range got {
		got[i].Label = ""
	}
	if !slices.Equal(got, want) {
		panic(fmt.Sprintf("replay: the pod grid made from what changed is\n%v\nread afresh\n%v", got, want))
	}
}

// allPodStates is the grid of every pod of the view, each read again (a new membership rule).
func (e *engine) allPodStates(members kube.Members, records []*record) PodGrid {
	w := e.world[world.KindPod]
	for _, r := range w.regrid {
		r.regridding = false
	}
	w.regrid = w.regrid[:0]
	var out []PodState
	for _, r := range records {
		r.gridFor = 0
		e.readPodState(members, r)
		if r.member {
			out = append(out, r.state)
		}
	}
	byOrdinal := func(a, b PodState) int { return cmp.Compare(a.Ordinal, b.Ordinal) }
	if !slices.IsSortedFunc(out, byOrdinal) { // names in natural order are mostly ordinals in order
		slices.SortStableFunc(out, byOrdinal)
	}
	return GridOf(out)
}

// readPodState reads the pod's state, unless it was read at its version.
func (e *engine) readPodState(members kube.Members, r *record) {
	if e.current(r, r.gridFor) {
		return
	}
	r.gridFor = r.version
	r.state, r.member = podStateOf(members, r)
	if r.member {
		r.state.Label = e.label(r.state.Revision)
	}
}

// podStateOf is the pod's state but its letter; false when it is not one of the set's pods.
func podStateOf(members kube.Members, r *record) (PodState, bool) {
	ord, member := members.PodJSON(r.o)
	if !member {
		return PodState{}, false
	}
	md, p := r.md, r.o
	return PodState{Name: jsonobj.GetStr(md, "name"), Ordinal: ord,
		Revision: jsonobj.GetStr(md, "labels.controller-revision-hash"),
		Phase:    jsonobj.GetStr(p, "status.phase"), Ready: kube.PodReadyJSON(p),
		Terminating: jsonobj.Get(md, "deletionTimestamp") != nil}, true
}

// membersOfSet is the set's membership rule (kube.MembersOfJSON), read again only when what it depends on
// changed: the set is written at every sync, its name, uid and selector seldom.
func (e *engine) membersOfSet() kube.Members {
	set := e.api.StatefulSet()
	same := e.membersRead && set != nil && sameObj(set, e.membersSet)
	if same && !verifyEncodedObjects {
		return e.members // the object read last: the API server stores every write of the set as a new one
	}
	e.membersSet = set
	key := fmt.Sprintf("%q %q %q %t %s", jsonobj.GetStr(set, "metadata.name"), jsonobj.GetStr(set, "metadata.namespace"),
		jsonobj.GetStr(set, "metadata.uid"), jsonobj.Get(set, "metadata.deletionTimestamp") != nil, mustJSON(jsonobj.Get(set, "spec.selector")))
	if same && key != e.membersFrom {
		panic("replay: the StatefulSet's membership changed in place")
	}
	if key != e.membersFrom || !e.membersRead {
		e.members, e.membersFrom, e.membersRead = kube.MembersOfJSON(set), key, true
		e.membersKey = e.members.Key()
	}
	return e.members
}

// labelRevisions gives every revision in the world its letter, oldest revision number first.
func (e *engine) labelRevisions() {
	type rv struct {
		name string
		n    int64
	}
	var list []rv
	for _, n := range e.api.Names(world.KindRevision) {
		num, _ := jsonobj.GetInt(e.api.Get(world.KindRevision, n), "revision")
		list = append(list, rv{n, num})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].n < list[j].n })
	for _, r := range list {
		e.letter(r.name, r.n)
	}
}

// revision is the revision named name as the timeline letters it (zero: none named; its name alone when the
// timeline never lettered it).
func (tl *Timeline) revision(name string) RevisionLabel {
	for _, r := range tl.Revisions {
		if r.Name == name {
			return r
		}
	}
	return RevisionLabel{Name: name}
}

// label is the letter of the revision named rev: the one it was given, else its number's in the world;
// "?" for a revision the world has no ControllerRevision of (lettered once one appears).
func (e *engine) label(rev string) string {
	if l, ok := e.letters.Known(rev); ok {
		return l
	}
	r := e.api.Get(world.KindRevision, rev)
	if r == nil {
		return rollout.UnknownRevision
	}
	n, _ := jsonobj.GetInt(r, "revision")
	return e.letter(rev, n)
}

// letter is the letter of the revision rev with number n (rollout.Letters: each revision's once).
func (e *engine) letter(rev string, n int64) string {
	l := e.letters.Of(rev, n)
	e.tl.Revisions = e.letters.Refs
	return l
}

func (e *engine) describe(a abi.Action) ActionRecord {
	r := ActionRecord{Verb: a.Verb, Kind: a.Kind, Name: a.Name}
	// the members the record reads, decoded alone: a pod or a set decoded whole for one label or its status
	// was most of what describing a sync's writes cost
	o := func(path string) any { v, _ := jsonobj.Decode([]byte(gjson.GetBytes(a.Object, path).Raw)); return v }
	switch {
	case a.Kind == world.KindPod && (a.Verb == abi.VerbCreate || a.Verb == abi.VerbUpdate):
		rev, _ := o("metadata.labels.controller-revision-hash").(string)
		r.Detail = "revision " + e.label(rev) // markInPlace adds ", in place" to an in-place update's
	case a.Kind == world.KindPod && a.Verb == abi.VerbResize:
		r.Detail = "resources, in place" // a resize never recreates (InPlace says whether it starts an in-place update)
	case a.Kind == world.KindRevision && (a.Verb == abi.VerbCreate || a.Verb == abi.VerbUpdate):
		n, _ := jsonobj.AsInt(o("revision"))
		r.Detail = fmt.Sprintf("%s, revision %d", e.letter(a.Name, n), n)
	case a.Kind == world.KindClaim && a.Verb == abi.VerbPatch: // extension resize-claims
		r.Patch = slices.Clone(a.Patch)
		r.Detail = "storage " + r.ClaimStorage()
	case a.Kind == world.KindClaim:
		var owners []string
		for _, ref := range jsonobj.AsArr(o("metadata.ownerReferences")) {
			owners = append(owners, jsonobj.GetStr(ref, "kind")+"/"+jsonobj.GetStr(ref, "name"))
		}
		if a.Verb != abi.VerbDelete {
			r.Detail = "owners=[" + strings.Join(owners, ",") + "]"
		}
	case a.Verb == abi.VerbUpdateStatus:
		r.Detail = e.statusOf(jsonobj.AsObj(o("status")))
	case a.Verb == abi.VerbPatch:
		r.Patch = slices.Clone(a.Patch)
		ownership, owner := OwnershipNone, ""
		if a.Kind == abi.KindPod || a.Kind == abi.KindControllerRevision {
			ownership, owner = ownershipPatch(a.Patch)
		}
		switch ownership {
		case OwnershipAdopt:
			r.Detail = "adopted by " + owner
		case OwnershipRelease:
			r.Detail = "released by its controller"
		default:
			r.Detail = string(a.Patch)
		}
	}
	return r
}

// Ownership is what a pod patch does to the pod's controller: upstream's ClaimPods adopts an orphan that
// matches the selector (a patch that sets a controller ownerReference) and releases a pod that no longer
// matches (a patch that deletes the set's ownerReference).
type Ownership int

const (
	OwnershipNone Ownership = iota
	OwnershipAdopt
	OwnershipRelease
)

// ClaimStorage is the storage request a claim's patch asks for (extension resize-claims), "" for another write.
func (r ActionRecord) ClaimStorage() string {
	if r.Kind != world.KindClaim || r.Verb != abi.VerbPatch {
		return ""
	}
	p, _ := jsonobj.DecodeObj(r.Patch)
	return jsonobj.GetStr(p, "spec.resources.requests.storage")
}

// Ownership is what the write does to a pod's controller (a pod patch's: ownershipPatch).
func (r ActionRecord) Ownership() Ownership {
	if r.Verb != abi.VerbPatch || r.Kind != abi.KindPod {
		return OwnershipNone
	}
	o, _ := ownershipPatch(r.Patch)
	return o
}

// ownershipPatch reads a patch as upstream's adoption or release of an object (ClaimPods' of a pod,
// adoptOrphanRevisions' of a ControllerRevision: the same patch), and for an adoption names the owner
// ("StatefulSet/web").
func ownershipPatch(patch []byte) (Ownership, string) {
	p, err := jsonobj.DecodeObj(patch)
	if err != nil {
		return OwnershipNone, ""
	}
	refs := jsonobj.GetArr(p, "metadata.ownerReferences")
	for _, ref := range refs {
		if c, _ := jsonobj.Get(ref, "controller").(bool); c {
			return OwnershipAdopt, jsonobj.GetStr(ref, "kind") + "/" + jsonobj.GetStr(ref, "name")
		}
	}
	for _, ref := range refs {
		if jsonobj.GetStr(ref, "$patch") == "delete" {
			return OwnershipRelease, ""
		}
	}
	return OwnershipNone, ""
}

// markInPlace marks the writes of a sync's plan that are an in-place update of a pod (extension
// in-place-update): abi/inplace.At's judgement, the one policies and the host's check of their answers use,
// against the pods' revisions as the sync saw them (grid), so a later update of a pod updated in place
// earlier (an identity or claim repair, keeping its revision) is none.
func markInPlace(recs []ActionRecord, plan *abi.Plan, grid PodGrid) {
	var revs map[string]string
	for i := range recs {
		if recs[i].Kind != abi.KindPod || (recs[i].Verb != abi.VerbUpdate && recs[i].Verb != abi.VerbResize) {
			continue
		}
		if revs == nil {
			revs = map[string]string{}
			for ps := range grid.All() {
				revs[ps.Name] = ps.Revision
			}
		}
		if _, ok := hostplan.InPlaceAt(plan, i, func(name string) string { return revs[name] }); ok {
			recs[i].InPlace = true
			if recs[i].Verb == abi.VerbUpdate {
				recs[i].Detail += ", in place"
			}
		}
	}
}

func (e *engine) statusOf(st Obj) string {
	i := func(k string) int64 { n, _ := jsonobj.GetInt(st, k); return n }
	out := fmt.Sprintf("replicas=%d ready=%d available=%d current=%d updated=%d revisions %s->%s",
		i("replicas"), i("readyReplicas"), i("availableReplicas"), i("currentReplicas"), i("updatedReplicas"),
		e.label(jsonobj.GetStr(st, "currentRevision")), e.label(jsonobj.GetStr(st, "updateRevision")))
	for _, c := range jsonobj.GetArr(st, "conditions") { // Progressing (Recreate), PolicyHold (policies)
		if c, ok := c.(map[string]any); ok {
			out += fmt.Sprintf(" %s=%s(%s)", jsonobj.GetStr(c, "type"), jsonobj.GetStr(c, "status"), jsonobj.GetStr(c, "reason"))
		}
	}
	return out
}

func (e *engine) statusLine() string {
	if e.api.StatefulSet() == nil {
		return "StatefulSet deleted"
	}
	return e.statusOf(jsonobj.GetObj(e.api.StatefulSet(), "status"))
}

// progressAt is how far the replay has come at now, after its last sync (Options.Progress).
func (e *engine) progressAt(now time.Time) Progress {
	p := Progress{Syncs: len(e.tl.Steps), Elapsed: now.Sub(e.start)}
	if set := e.api.StatefulSet(); set != nil {
		updated, _ := jsonobj.GetInt(set, "status.updatedReplicas")
		replicas, _ := jsonobj.GetInt(set, "spec.replicas")
		p.Updated, p.Replicas = int(updated), int(replicas)
	}
	return p
}

// finish keeps the world the replay ended in and classifies how it ended.
func (e *engine) finish() {
	tl := e.tl
	e.keepFinal()
	if tl.StopReason == "" {
		tl.StopReason = "settled: no writes, no requeue, nothing pending"
	}
	out := &tl.Outcome
	out.Steps = len(tl.Steps)
	if n := len(tl.Steps); n > 0 {
		last := tl.Steps[n-1]
		// A replay that settled took until its last sync that did or saw something: a sync a requeue asked
		// for long before (a progress deadline's, minReadySeconds') that finds nothing to do is no part of it.
		settled := !tl.budgetSpent && !strings.Contains(tl.StopReason, "limit")
		for i := n - 1; settled && i >= 0; i-- {
			if !tl.Steps[i].quiet() {
				last = tl.Steps[i]
				break
			}
		}
		out.Duration, out.DurationSeconds = last.Offset, last.Offset.Seconds()
	}
	defer e.judgeHolds(out) // a rollout a policy still holds says so, whatever else ended it
	switch {
	case tl.budgetSpent:
		out.Result, out.Summary = "partial", tl.StopReason+"; the rest is not replayed"
	case strings.Contains(tl.StopReason, "limit"):
		out.Result, out.Summary = "limit", tl.StopReason
		// A sync that fails the same way again and again (a pod the API server refuses) is stuck, not slow:
		// the controller retries it with backoff forever.
		if why, ok := repeatedFailure(tl.Steps); ok {
			out.Result, out.Summary = "stuck", "every sync fails the same way: "+why
		}
	default:
		out.Result, out.Summary = e.settledOutcome()
	}
}

// keepFinal keeps the end of the replay on its timeline: the world as a snapshot, and what the host
// supplied the policies last (a preview's world, Settled, starts from them).
func (e *engine) keepFinal() {
	tl := e.tl
	tl.longestSync = e.longestSync
	tl.Final = e.compact(e.snapshot())
	tl.finalSignals = maps.Clone(e.signals)
	for _, p := range e.pdbs {
		b, _ := json.Marshal(p)
		tl.finalPDBs = append(tl.finalPDBs, b)
	}
	for _, n := range e.nodes {
		b, _ := json.Marshal(n)
		tl.finalNodes = append(tl.finalNodes, b)
	}
}

// settledOutcome is the result and summary of a replay that settled: complete, or where it stands and why
// nothing more happens.
func (e *engine) settledOutcome() (result, summary string) {
	ss := e.api.StatefulSet()
	if ss == nil {
		return "complete", "the StatefulSet was deleted"
	}
	c := e.census(ss)
	saved, paused := rollout.PausePartitionHolds(annotations(ss), c.partition)
	switch {
	case len(c.notReady.names) > 0:
		summary = "nothing more happens: not Ready: " + c.notReady.String()
		if len(c.missing) > 0 {
			summary += "; missing: " + strings.Join(ordinal.Fold(c.missing), ", ")
		}
		return "stuck", summary
	case len(c.missing) > 0:
		return "stuck", "nothing more happens: missing pods: " + strings.Join(ordinal.Fold(c.missing), ", ")
	case len(c.old.names) == 0:
		if c.replicas == 0 {
			return "complete", "no pods: 0 replicas"
		}
		return "complete", allPods(c.replicas) + " Ready at revision " + e.label(c.update)
	case jsonobj.GetStr(ss, "spec.updateStrategy.type") == "OnDelete":
		return "waiting", "OnDelete: " + c.old.String() + " keep their revision until deleted"
	case c.heldBack && paused:
		// kubectl ordinal pause's partition: say whose it is and what lets the rollout go on
		return "partitioned", fmt.Sprintf("kubectl ordinal pause holds back %s (partition %d, %s %q); kubectl ordinal resume lets the rollout go on to revision %s",
			c.old.String(), c.partition, rollout.PausedPartitionAnnotation, saved, e.label(c.update))
	case c.heldBack:
		return "partitioned", fmt.Sprintf("partition %d holds back %s; the rest is at revision %s", c.partition, c.old.String(), e.label(c.update))
	case annotations(ss)[abi.AnnotationPaused] == "true" && e.extensionOfSet(abi.AnnotationPaused):
		// the extension pause's hold, asked for: say whose it is
		return "stuck", fmt.Sprintf("%s %q holds %s", abi.AnnotationPaused, "true", c.old.String())
	case len(inPlaceBlocked(ss)) > 0:
		// the extension in-place-update's hold: say whose it is (its condition's message names the pod and field)
		return "stuck", fmt.Sprintf("%s %s holds %s (condition %s)", abi.AnnotationPodUpdatePolicy,
			abi.PodUpdateInPlaceOnly, c.old.String(), abi.ConditionInPlaceUpdateBlocked)
	default:
		return "stuck", "nothing more happens, yet not updated: " + c.old.String()
	}
}

// extensionOfSet: the module the set's syncs run has the extension whose annotation is key.
func (e *engine) extensionOfSet(key string) bool {
	m, err := e.moduleOfSet()
	return err == nil && hasExtension(m, key)
}

// allPods names every pod of a set of n > 0 as English does: "1 pod", "both pods", "all 5 pods".
func allPods(n int64) string {
	switch n {
	case 1:
		return "1 pod"
	case 2:
		return "both pods"
	}
	return fmt.Sprintf("all %d pods", n)
}

// podCensus is the set's pods at the end of a replay as its outcome names them.
type podCensus struct {
	replicas, partition int64
	update              string // the set's update revision
	notReady            tagged // not Ready, or terminating: with revision and state
	old                 tagged // not at the update revision: with revision
	missing             []string
	heldBack            bool // every pod in old is below the partition
}

// census counts the set's own pods (a pod that is not the set's never makes its rollout stuck) against its
// slots and its update revision.
func (e *engine) census(ss Obj) podCensus {
	c := podCensus{update: jsonobj.GetStr(ss, "status.updateRevision")}
	c.replicas, _ = jsonobj.GetInt(ss, "spec.replicas")
	c.partition, _ = jsonobj.GetInt(ss, "spec.updateStrategy.rollingUpdate.partition")
	start, _ := jsonobj.GetInt(ss, "spec.ordinals.start")
	var oldOrdinals []int
	present := map[int]bool{}
	members := kube.MembersOfJSON(ss)
	for _, n := range e.api.Names(world.KindPod) {
		p := e.api.Get(world.KindPod, n)
		ord, ok := members.PodJSON(p)
		if !ok {
			continue
		}
		present[ord] = true
		if !kube.PodReadyJSON(p) || jsonobj.Get(p, "metadata.deletionTimestamp") != nil {
			c.notReady.add(n, fmt.Sprintf("(%s, %s)", e.label(jsonobj.GetStr(p, "metadata.labels.controller-revision-hash")), podStateWord(p)))
		}
		if rev := jsonobj.GetStr(p, "metadata.labels.controller-revision-hash"); rev != c.update {
			c.old.add(n, "("+e.label(rev)+")")
			oldOrdinals = append(oldOrdinals, ord)
		}
	}
	slots := slotsOf(start, c.replicas, annotations(ss), e.extensionOfSet(abi.AnnotationReserveOrdinals))
	for i := 0; i < int(c.replicas); i++ {
		if o := slots.At(i); !present[int(o)] {
			c.missing = append(c.missing, ordinal.Name(jsonobj.GetStr(ss, "metadata.name"), o))
		}
	}
	c.heldBack = len(c.old.names) > 0
	for _, o := range oldOrdinals {
		c.heldBack = c.heldBack && int64(o) < start+c.partition
	}
	return c
}

// inPlaceBlocked is the message of each of the set's conditions saying pod-update-policy InPlaceOnly holds a
// pod (abi.InPlaceOnlyHolds), in the module's words: the pod and the field.
func inPlaceBlocked(ss Obj) []string {
	var out []string
	for _, c := range jsonobj.GetArr(ss, "status.conditions") {
		if abi.InPlaceOnlyHolds(jsonobj.GetStr(c, "type"), jsonobj.GetStr(c, "status")) {
			out = append(out, jsonobj.GetStr(c, "message"))
		}
	}
	return out
}

// tagged is a list of pods each with a tag ("(A)", "(B, Running, not Ready)"), written with the runs of
// consecutive ordinals alike as one ("web-0..web-249 (A)"), so an outcome stays a line at any size.
type tagged struct{ names, tags []string }

func (t *tagged) add(name, tag string) { t.names, t.tags = append(t.names, name), append(t.tags, tag) }

func (t tagged) String() string {
	var parts []string
	for i := 0; i < len(t.names); {
		j := i + 1
		for j < len(t.names) && t.tags[j] == t.tags[i] {
			j++
		}
		for _, n := range ordinal.Fold(t.names[i:j]) {
			parts = append(parts, n+" "+t.tags[i])
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

// repeatedFailures is how many syncs in a row, at the end of a replay, must fail alike to call it stuck.
const repeatedFailures = 10

// repeatedFailure reports the failing write when the last syncs all failed with the same error.
func repeatedFailure(steps []Step) (string, bool) {
	if len(steps) < repeatedFailures {
		return "", false
	}
	first := failedWrite(steps[len(steps)-1])
	if first == "" {
		return "", false
	}
	for _, st := range steps[len(steps)-repeatedFailures:] {
		if failedWrite(st) != first {
			return "", false
		}
	}
	return first, true
}

// failedWrite is the first write of a step that the API server refused, with its error.
func failedWrite(st Step) string {
	if st.Error == "" {
		return ""
	}
	for _, a := range st.Actions {
		if a.Error != "" && !strings.HasPrefix(a.Error, "not issued") {
			return a.Verb + " " + a.Kind + " " + a.Name + ": " + a.Error
		}
	}
	return st.Error
}

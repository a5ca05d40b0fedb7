package replay

import (
	"context"
	"fmt"
	"strings"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// What if the new revision never becomes Ready? A rollout to a broken revision stops at its first broken pod,
// and under OrderedReady rolling the template back does not unstick it: the controller waits for that pod to
// become Ready before it replaces it (kubernetes/kubernetes#67250, the forced-rollback trap). People find this
// out during an outage, so every preview of a template change answers it before the edit is applied: the
// same edit is replayed on the same world by the same module with a kubelet model that never makes the new
// revision's pods Ready, and when that stalls, the template is reverted in the stalled world and replayed
// again, so the module, not a rule of thumb, says whether `kubectl rollout undo` alone recovers.

// NeverReadyOutcome is the preview's answer to "what if the new revision never becomes Ready?".
type NeverReadyOutcome struct {
	// Result: "stalls" (the rollout waits for a pod of the new revision that never becomes Ready),
	// "blocked" (it waits for a pod of another revision first; the other warnings say why), "settles" (it ends
	// without waiting for a pod of the new revision: a partition holds every pod back, or the set's own
	// recovery settled it) or "undetermined" (the replay did not settle within the preview's budget or limits).
	Result string `json:"result"`
	// Summary is the answer in one line, as the text output prints it.
	Summary string `json:"summary"`
	// Revision is the update revision the model keeps from becoming Ready.
	Revision RevisionLabel `json:"revision"`
	// WaitsOn are the pods the controller waits for when nothing more happens: under OrderedReady the lowest
	// ordinal not Running and Ready (it waits for that one), otherwise every pod of the set not Running and Ready.
	WaitsOn []string `json:"waitsOn,omitempty"`
	// Replicas of the edited set; Replaced, those at the new revision and Ready when it stalls (the rollout's
	// finished part); AtNewRevision, those at the new revision, Ready or not; Unavailable, its ordinals without
	// a pod Running and Ready (missing ones included).
	Replicas      int `json:"replicas"`
	Replaced      int `json:"replaced"`
	AtNewRevision int `json:"atNewRevision"`
	Unavailable   int `json:"unavailable"`
	// Outcome of the never-Ready replay: its duration is how long after the edit the rollout stalls.
	Outcome Outcome `json:"outcome"`
	// Undo is the template reverted in the stalled world, replayed (only when the rollout stalls).
	Undo *UndoOutcome `json:"undo,omitempty"`
	// Recovery is what the set is configured to do about a stuck rollout, or else what a person must do.
	Recovery Recovery `json:"recovery"`
}

// UndoOutcome is `kubectl rollout undo` (the template the set had before the edit) replayed from the stalled
// world, under the same model: the new revision's pods still never become Ready.
type UndoOutcome struct {
	// Recovers: once the replay settles, no pod of the new revision is left not Ready and no ordinal is
	// without a pod: what the stalled rollout did is undone (a pod that was not Ready before the edit may
	// still not be; Outcome says).
	Recovers bool `json:"recovers"`
	// Left are the pods of the new revision still not Ready, and the ordinals without a pod, when it settles.
	Left []string `json:"left,omitempty"`
	// Undetermined: the replay did not settle within the preview's budget or limits; Recovers is false.
	Undetermined bool    `json:"undetermined,omitempty"`
	Outcome      Outcome `json:"outcome"`
	// Deleted are the pods the controller deletes after the revert, and InPlace those it updates in place
	// (extension in-place-update): how it recovers, if it does.
	Deleted []string `json:"deleted,omitempty"`
	InPlace []string `json:"inPlace,omitempty"`
}

// Recovery kinds.
const (
	RecoveryRecoverStuck     = "recover-stuck"     // extension recover-stuck (abi.AnnotationRecoverStuckAfter)
	RecoveryProgressDeadline = "progress-deadline" // a progress deadline with a policy (annotations below)
	RecoveryManual           = "manual"            // nothing configured: a person deletes the stuck pod
)

// Recovery is how a stuck rollout of the set gets out: Kind (above), Detail in words; Ignored names a
// recovery annotation that is set but does not count (not valid, or the module does not have the extension).
type Recovery struct {
	Kind    string   `json:"kind"`
	Detail  string   `json:"detail"`
	Ignored []string `json:"ignored,omitempty"`
}

// WarnUnrecoverable: if the new revision never becomes Ready, reverting the template alone does not recover
// the rollout, and the set has no recovery configured.
const WarnUnrecoverable = "Unrecoverable"

// budgetSpent is the answer when the preview's deadline leaves no time for a what-if replay's first sync.
const budgetSpent = "not replayed: the preview's time budget is spent"

// neverReadyAsked reports whether a preview answers the what-if: the edit changes the pod template (a new
// update revision) and the controller replaces pods itself (not OnDelete, where it replaces none).
func neverReadyAsked(changes []rollout.Change, edited Obj) bool {
	if jsonobj.GetStr(edited, "spec.updateStrategy.type") == "OnDelete" {
		return false
	}
	for _, c := range changes {
		if c.Path == "spec.template" || strings.HasPrefix(c.Path, "spec.template.") {
			return true
		}
	}
	return false
}

// answerNeverReady replays the edit with the new revision never Ready and, when that stalls, the undo; then
// names the recovery and warns when there is none. base is the preview's world, before the edit; edit is the
// scenario that applies it; ann the edited set's annotations. Both replays run under the preview's Budget
// and limits, each on its own; one that its deadline leaves no time for is not started.
func (p *Preview) answerNeverReady(ctx context.Context, base, edit *Scenario, ann map[string]string, opts Options) error {
	n := &NeverReadyOutcome{Revision: p.To, Recovery: p.recovery(ann)}
	p.NeverReady = n
	opts.Progress = nil // the CLI's progress line is the edit's replay's
	opts.Budget.longest = max(opts.Budget.longest, p.Timeline.longestSync)
	if opts.Budget.wouldPass() {
		n.Result, n.Summary = "undetermined", budgetSpent
		return nil
	}
	sc := *edit
	sc.Kubelet.NeverReadyRevision = p.To.Name
	wctx, cancel := whatIfContext(ctx, opts.Budget)
	defer cancel()
	tl, err := Run(wctx, &sc, opts)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		n.Result, n.Summary = "undetermined", budgetSpent // the what-if ran into the preview's deadline
		return nil
	}
	if err != nil {
		return fmt.Errorf("replaying revision %s never Ready: %w", p.To.Name, err)
	}
	n.Outcome = tl.Outcome
	final, err := jsonobj.DecodeObj(tl.Final)
	if err != nil {
		return fmt.Errorf("replaying revision %s never Ready: %w", p.To.Name, err)
	}
	p.readStall(n, final)
	if n.Result == "stalls" {
		if n.Undo, err = p.replayUndo(wctx, &sc, tl, final, base, opts); err != nil {
			if ctx.Err() == nil && wctx.Err() != nil {
				n.Undo = &UndoOutcome{Undetermined: true, Outcome: Outcome{Result: "partial", Summary: budgetSpent}}
			} else {
				return err
			}
		}
	}
	n.Summary = n.summary()
	if n.Result == "stalls" && n.Undo != nil && !n.Undo.Recovers && !n.Undo.Undetermined && n.Recovery.Kind == RecoveryManual {
		p.Warnings = append(p.Warnings, Warning{Code: WarnUnrecoverable, Message: n.unrecoverable()})
	}
	return nil
}

// readStall reads where the never-Ready replay ended: its result, the pods waited on and the counts.
func (p *Preview) readStall(n *NeverReadyOutcome, final Obj) {
	switch n.Outcome.Result {
	case "partial", "limit", OutcomeHeld: // a policy's hold: where the rollout stalls is not reached
		n.Result = "undetermined"
		return
	case "stuck":
	default:
		n.Result = "settles"
	}
	set, _, pods := p.slotPods(final)
	n.Replicas = len(pods)
	orderedReady := jsonobj.GetStr(set, "spec.podManagementPolicy") == "OrderedReady"
	newRevisionWaited := false
	for _, pod := range pods {
		atNew := pod != nil && jsonobj.GetStr(pod, "metadata.labels.controller-revision-hash") == n.Revision.Name
		ready := pod != nil && jsonobj.Get(pod, "metadata.deletionTimestamp") == nil && kube.PodRunningAndReadyJSON(pod)
		if atNew {
			n.AtNewRevision++
		}
		if atNew && ready {
			n.Replaced++
		}
		if ready {
			continue
		}
		n.Unavailable++
		if pod == nil || jsonobj.Get(pod, "metadata.deletionTimestamp") != nil || orderedReady && len(n.WaitsOn) > 0 {
			continue
		}
		n.WaitsOn = append(n.WaitsOn, jsonobj.GetStr(pod, "metadata.name"))
		newRevisionWaited = newRevisionWaited || atNew
	}
	if n.Result == "" {
		n.Result = "blocked"
		if newRevisionWaited {
			n.Result = "stalls"
		}
	}
}

// whatIfContext bounds a what-if replay by the preview's Deadline: the Budget stops a replay between syncs,
// but a replay's setup (the world loaded, the module's first whole snapshot) is no sync, and on a loaded
// machine the what-ifs took a webhook's preview past its admission timeout (no preview at all, where the
// edit's own replay had finished). Past the deadline a what-if is undetermined, never the preview's failure.
func whatIfContext(ctx context.Context, b Budget) (context.Context, context.CancelFunc) {
	if b.Deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, b.Deadline)
}

// replayUndo reverts the template (to the set's before the edit, as `kubectl rollout undo` would) in the
// world the never-Ready replay stalled in (tl, its Final decoded as final), and replays it under the same model.
func (p *Preview) replayUndo(ctx context.Context, stalled *Scenario, tl *Timeline, final Obj, base *Scenario, opts Options) (*UndoOutcome, error) {
	opts.Budget.longest = max(opts.Budget.longest, tl.longestSync)
	if opts.Budget.wouldPass() {
		return &UndoOutcome{Undetermined: true, Outcome: Outcome{Result: "partial", Summary: budgetSpent}}, nil
	}
	sc, err := settledAt(stalled, tl, final)
	if err != nil {
		return nil, fmt.Errorf("the undo of a stalled rollout: %w", err)
	}
	template := jsonobj.Get(jsonobj.GetObj(base.snapshot, "statefulSet"), "spec.template")
	zero := Duration(0)
	sc.Events = []Event{{At: &zero, Set: mustJSON(map[string]any{"spec.template": template}), Note: "the template reverted (kubectl rollout undo)"}}
	utl, err := Run(ctx, sc, opts)
	if err != nil {
		return nil, fmt.Errorf("the undo of a stalled rollout: %w", err)
	}
	u := &UndoOutcome{Outcome: utl.Outcome}
	if r := utl.Outcome.Result; r == "partial" || r == "limit" || r == OutcomeHeld {
		u.Undetermined = true
	} else {
		end, err := jsonobj.DecodeObj(utl.Final)
		if err != nil {
			return nil, fmt.Errorf("the undo of a stalled rollout: %w", err)
		}
		u.Left = p.leftAt(end, p.To.Name)
		u.Recovers = len(u.Left) == 0
	}
	seen := map[string]bool{}
	for _, st := range utl.Steps {
		for _, a := range st.Actions {
			if a.Kind != world.KindPod || a.Error != "" || a.Held != nil || seen[a.Name] {
				continue
			}
			switch {
			case a.Verb == "delete":
				u.Deleted = append(u.Deleted, a.Name)
			case a.Verb == "update" && a.InPlace:
				u.InPlace = append(u.InPlace, a.Name)
			default:
				continue
			}
			seen[a.Name] = true
		}
	}
	world.SortNatural(u.Deleted)
	world.SortNatural(u.InPlace)
	return u, nil
}

// leftAt lists, in ordinal order, the set's pods of a world at revision rev and not Running and Ready, and its
// ordinals without a pod (named as their pod would be).
func (p *Preview) leftAt(world Obj, rev string) []string {
	set, slots, pods := p.slotPods(world)
	var left []string
	for i, pod := range pods {
		if pod == nil || jsonobj.Get(pod, "metadata.deletionTimestamp") != nil ||
			jsonobj.GetStr(pod, "metadata.labels.controller-revision-hash") == rev && !kube.PodRunningAndReadyJSON(pod) {
			left = append(left, ordinal.Name(jsonobj.GetStr(set, "metadata.name"), slots.At(i)))
		}
	}
	return left
}

// slotPods reads a world's set and its pods by replica slot (nil where a slot has none), with the ordinals
// the module the preview ran places them at.
func (p *Preview) slotPods(world Obj) (Obj, ordinal.Slots, []Obj) {
	set := jsonobj.GetObj(world, "statefulSet")
	replicas, _ := jsonobj.GetInt(set, "spec.replicas")
	start, _ := jsonobj.GetInt(set, "spec.ordinals.start")
	slots := p.Slots(start, replicas, annotations(set))
	members := kube.MembersOfJSON(set)
	pods := make([]Obj, min(max(replicas, 0), MaxReplicasEver)) // a replay refuses more
	for _, v := range jsonobj.GetArr(world, "pods") {
		pod, ok := v.(Obj)
		if !ok {
			continue
		}
		if o, ok := members.PodJSON(pod); ok {
			if i, ok := slots.Index(int64(o)); ok && i < len(pods) {
				pods[i] = pod
			}
		}
	}
	return set, slots, pods
}

// recovery is what the edited set is configured to do about a stuck rollout: the extension recover-stuck
// when its module has it, else extension progress-deadline's Rollback when its module has it, else a
// person's delete. (progress-deadline's Pause stops a stuck rollout; it does not get it out.)
func (p *Preview) recovery(ann map[string]string) Recovery {
	r := Recovery{Kind: RecoveryManual}
	if v, ok := ann[abi.AnnotationRecoverStuckAfter]; ok {
		if p.recoverStuck {
			r.Kind, r.Detail = RecoveryRecoverStuck, fmt.Sprintf("%s %s", abi.AnnotationRecoverStuckAfter, v)
		} else {
			r.Ignored = append(r.Ignored, fmt.Sprintf("%s %q: the set's module does not have the extension recover-stuck", abi.AnnotationRecoverStuckAfter, v))
		}
	}
	deadline, policy, why := kube.ProgressDeadline(ann)
	switch {
	case why != "":
		r.Ignored = append(r.Ignored, why)
	case deadline == 0:
	case !p.progressDeadline:
		r.Ignored = append(r.Ignored, fmt.Sprintf("%s %d: the set's module does not have the extension progress-deadline", abi.AnnotationProgressDeadlineSeconds, deadline))
	case policy != "Rollback":
		r.Ignored = append(r.Ignored, fmt.Sprintf("%s %s stops the rollout at the deadline; it does not get it out", abi.AnnotationOnProgressDeadline, policy))
	case r.Kind == RecoveryManual:
		r.Kind, r.Detail = RecoveryProgressDeadline, fmt.Sprintf("%s %d with %s %s", abi.AnnotationProgressDeadlineSeconds, deadline, abi.AnnotationOnProgressDeadline, policy)
	}
	return r
}

// summary is the answer in one line.
func (n *NeverReadyOutcome) summary() string {
	waits := strings.Join(ordinal.Fold(n.WaitsOn), ", ")
	switch n.Result {
	case "undetermined":
		return "not known: the replay did not settle (" + n.Outcome.Result + ": " + n.Outcome.Summary + ")"
	case "settles":
		return fmt.Sprintf("the rollout still settles, %s after the edit (%s: %s)", n.Outcome.Duration, n.Outcome.Result, n.Outcome.Summary)
	case "blocked":
		if len(n.WaitsOn) == 0 {
			return "the rollout is stuck before it creates any pod of this revision: " + n.Outcome.Summary
		}
		return fmt.Sprintf("the rollout waits for %s (another revision) before it creates any pod of this one: see the warnings", waits)
	}
	s := fmt.Sprintf("the rollout stalls on %s %s after the edit (%d of %d pods Ready at %s, %d unavailable); ",
		waits, n.Outcome.Duration, n.Replaced, n.Replicas, n.Revision.Label, n.Unavailable)
	switch u := n.Undo; {
	case u.Undetermined:
		s += "whether reverting the template recovers it is not known (" + u.Outcome.Summary + ")"
	case u.Recovers:
		s += "reverting the template recovers it"
		var moves []string
		if len(u.Deleted) > 0 {
			moves = append(moves, "replaces "+strings.Join(ordinal.Fold(u.Deleted), ", "))
		}
		if len(u.InPlace) > 0 {
			moves = append(moves, "updates "+strings.Join(ordinal.Fold(u.InPlace), ", ")+" in place")
		}
		if len(moves) > 0 {
			s += ": the controller " + strings.Join(moves, " and ")
		}
		s += " (in " + u.Outcome.Duration.String()
		if u.Outcome.Result == "stuck" { // what was not Ready before the edit still is
			s += "; left as before the edit: " + strings.TrimPrefix(u.Outcome.Summary, "nothing more happens: ")
		}
		s += ")"
	default:
		s += "reverting the template alone does not recover it"
	}
	switch {
	case n.Recovery.Kind != RecoveryManual:
		s += "; recovery configured: " + n.Recovery.Detail
	case !n.Undo.Recovers:
		s += "; no recovery configured: " + n.deleteCommand() + " after reverting or fixing the template"
	}
	return s
}

// unrecoverable is the warning's message: the pod early, so that it survives an admission warning's cut, and
// short, so that the text output stays a screen with it printed before the steps and after the outcome.
func (n *NeverReadyOutcome) unrecoverable() string {
	return fmt.Sprintf("if the new revision never becomes Ready, the rollout stalls on %s and reverting the template alone does not recover it; no recovery is configured: %s after reverting",
		strings.Join(ordinal.Fold(n.WaitsOn), ", "), n.deleteCommand())
}

// deleteCommand is the manual way out: delete the pods the rollout waits on (a command when they are few).
func (n *NeverReadyOutcome) deleteCommand() string {
	if len(n.WaitsOn) <= 4 {
		return "kubectl delete pod " + strings.Join(n.WaitsOn, " ")
	}
	return "kubectl delete pod, for each of " + strings.Join(ordinal.Fold(n.WaitsOn), ", ")
}

// writeNeverReady is the text output's line for the what-if (-o json has every figure). A warning
// Unrecoverable is that line: it is printed with the warnings, not again here.
func (p *Preview) writeNeverReady(b *strings.Builder) {
	n := p.NeverReady
	if n == nil {
		return
	}
	for _, w := range p.Warnings {
		if w.Code == WarnUnrecoverable {
			return
		}
	}
	// the edit's own rollout already stops where the what-if does, before any pod of the revision (an
	// InPlaceOnly hold): the line would only repeat the outcome
	if o := p.Timeline.Outcome; o.Result == "stuck" && o.Summary != "" && strings.Contains(n.Summary, o.Summary) {
		return
	}
	rev := n.Revision.Label
	if rev == "" {
		rev = n.Revision.Name
	}
	head := "if " + rev + " never becomes Ready: "
	fmt.Fprintf(b, "%s%s\n", head, wrapJoin(strings.Fields(n.Summary), " ", len(head), 2))
}

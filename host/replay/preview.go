package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/annotation"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// Preview answers "what will this edit do": the edited StatefulSet is applied to a world (a
// snapshot, or the end of a scenario) and replayed with the same engine, so the steps are what the
// controller will do under the kubelet model; known traps are called out.
type Preview struct {
	Set  string        `json:"statefulSet"`
	From RevisionLabel `json:"from"` // the current revision before the edit
	To   RevisionLabel `json:"to"`   // the update revision the edit leads to
	// ToHeld is the policy that held the create of To, when the replay ended with it held: To is the name
	// the revision would have, and no such revision exists.
	ToHeld *ActionHold `json:"toHeld,omitempty"`
	// Settings are the edited set's spec fields that decide how the rollout goes.
	Settings rollout.Settings `json:"settings"`
	// Changes is what the edit changes in the set's spec, as `ordinal history` shows a template change.
	Changes []rollout.Change `json:"changes"`
	Steps   []PreviewStep    `json:"steps"`
	Batches [][]string       `json:"batches"` // pods taken down together, in order
	// Updates are the rolling update's batches under extension in-place-update (ordinal.dev/pod-update-policy):
	// the pods each sync moves to the update revision, in order, each updated in place or recreated, with the
	// module's reason. Absent when the module updated no pod in place and recreated none by that policy.
	Updates  [][]PodUpdate `json:"updates,omitempty"`
	HeldBack []string      `json:"heldBack"` // pods the partition keeps at their revision
	Warnings []Warning     `json:"warnings"`
	// PolicyFailures are the set's policies that failed during the preview (they held nothing back), once per
	// policy and reason; each is a warning PolicyFailed too.
	PolicyFailures []PolicyFailure `json:"policyFailures,omitempty"`
	Outcome        Outcome         `json:"outcome"`
	// Estimate of the rest, when a Budget ended the replay (Outcome.Result "partial").
	Estimate  *Estimate `json:"estimate,omitempty"`
	KubeModel string    `json:"kubeletModel"`
	// Pace is the kubelet model's pace (KubeletConfig.Pace): the delays the preview used, in seconds, and
	// whence; the text says it in words (Pace.String).
	Pace Pace `json:"pace"`
	// NeverReady answers "what if the new revision never becomes Ready?" for an edit of the pod template
	// (preview_never_ready.go); nil for an edit that makes no new revision, or under OnDelete.
	NeverReady *NeverReadyOutcome `json:"neverReady,omitempty"`
	Timeline   *Timeline          `json:"-"`
	features   map[string]bool
	// the edited set turns on extension recover-stuck and its module has it: the OrderedReady trap is not one
	recoverStuck bool
	// the edited set turns on extension progress-deadline and its module has it (its Rollback recovers)
	progressDeadline bool
	reserving        func(annotations map[string]string) bool // the set turns on extension reserve-ordinals and its module has it
	// annotations: what the set's ordinal.dev/ annotations ask that its module will not do (annotationFindings)
	annotations []annotation.Finding
	kubelet     KubeletConfig // the base world's kubelet model, for the estimate's pace when nothing finished
}

// PodUpdate is one pod a sync moves to the update revision under extension in-place-update, and how.
type PodUpdate struct {
	Pod string `json:"pod"`
	// From is the revision (its letter) the pod was at.
	From string `json:"from"`
	// InPlace: updated in place (the pod kept, its containers restarted); else recreated: deleted, then
	// created at the update revision.
	InPlace bool `json:"inPlace"`
	// Why a pod is recreated, in the module's words: its RecreatingPod event, which names the first field the
	// pod cannot change in place (ActionRecord.Why).
	Why string `json:"why,omitempty"`
}

// Warning is a known trap a preview found: Code names it for programs (the webhook decides by it), Message
// says it to people.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Warning codes.
const (
	WarnOrderedReadyBlocked          = "OrderedReadyBlocked"            // a pod not Running and Ready holds an OrderedReady set
	WarnClaimsDeleted                = "ClaimsDeleted"                  // whenScaled=Delete removes PVCs and their data
	WarnMaxUnavailableCountsHeldBack = "MaxUnavailableCountsHeldBack"   // unavailable pods below the partition use up maxUnavailable
	WarnMaxUnavailableIgnored        = "MaxUnavailableIgnored"          // the MaxUnavailableStatefulSet gate is off
	WarnOnDelete                     = "OnDelete"                       // the controller replaces no pod by itself
	WarnUnfinished                   = "Unfinished"                     // the rollout does not finish
	WarnInvalidAnnotation            = "InvalidAnnotation"              // the module cannot read an extension's annotation (its own words)
	WarnExtensionIgnored             = annotation.ExtensionIgnored      // the set turns on an extension its module does not have
	WarnUnknownAnnotation            = annotation.UnknownAnnotation     // an ordinal.dev/ annotation nothing reads (a misspelling)
	WarnInvalidExtensionValue        = annotation.InvalidExtensionValue // a value outside the list of an extension its module lacks
	WarnPolicyFailed                 = "PolicyFailed"                   // a policy of the set failed: it held nothing back (PolicyFailures)
	WarnPolicyHeld                   = "PolicyHeld"                     // the rollout ends waiting on a policy's hold (Outcome.Held)
	// pod-update-policy InPlaceOnly holds a pod whose change cannot be made in place (the module's words: its
	// condition abi.ConditionInPlaceUpdateBlocked at the end of the preview)
	WarnInPlaceBlocked = "InPlaceBlocked"
	// extension progress-deadline: the rollout made no progress for the set's deadline (the module's Warning
	// event, in its words: with on-progress-deadline Rollback it says the edit is rolled back)
	WarnProgressDeadlineExceeded = abi.EventProgressDeadlineExceeded
)

// PreviewStep is a sync after the edit that changed pods or claims.
type PreviewStep struct {
	Offset Duration `json:"offset"`
	// OffsetSeconds is Offset in seconds.
	OffsetSeconds float64      `json:"offsetSeconds"`
	Actions       []string     `json:"actions"`
	World         []WorldEvent `json:"world,omitempty"` // the collector's deletions, pods failing or losing readiness
}

// PreviewEdit replays `edited` (a StatefulSet manifest) applied at once to the world `base`
// (a scenario whose initial state is a snapshot: ScenarioFromSnapshot).
func PreviewEdit(ctx context.Context, base *Scenario, edited []byte, opts Options) (*Preview, error) {
	o, cur, check, err := checkEdit(base, edited)
	if err != nil {
		return nil, err
	}
	changes := rollout.Diff(map[string]any{"spec": jsonobj.Get(cur, "spec")}, map[string]any{"spec": jsonobj.Get(check, "spec")})
	sc := *base
	zero := Duration(0)
	sc.Events = []Event{{At: &zero, Apply: mustJSON(o), Note: "the edit being previewed"}}
	sc.Description = previewDescription(jsonobj.GetStr(cur, "metadata.name"), changes) // the picture's subtitle (--html)
	tl, err := Run(ctx, &sc, opts)
	if err != nil {
		return nil, err
	}
	used := base.Kubelet // as the replay ran it: --model may have chosen another model than the scenario's
	used.Model = tl.Model
	p := &Preview{Set: jsonobj.GetStr(cur, "metadata.name"), Timeline: tl, features: base.Features, kubelet: base.Kubelet, Outcome: tl.Outcome, KubeModel: tl.Model, Pace: used.Pace(),
		Warnings: []Warning{}, HeldBack: []string{}, Batches: [][]string{}, Steps: []PreviewStep{}, Changes: changes}
	p.From = tl.revision(jsonobj.GetStr(cur, "status.currentRevision"))
	final, _ := jsonobj.DecodeObj(tl.Final)
	fs := jsonobj.GetObj(final, "statefulSet") // the set as the replay ended
	if err := p.readEnd(ctx, opts, tl, fs); err != nil {
		return nil, err
	}
	for i := range tl.Steps {
		p.addStep(&tl.Steps[i])
	}
	p.warn(base.snapshot, fs, final, tl)
	if tl.Outcome.Result == "partial" {
		p.Estimate = p.estimateRest(base.snapshot, final)
	}
	if neverReadyAsked(changes, fs) {
		if err := p.answerNeverReady(ctx, base, &sc, annotations(fs), opts); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkEdit reads the edited manifest as the edit of base's set: o as it is applied (kind and apiVersion
// defaulted), cur the set before it, check the edited set as the API server would store it. An edit the
// API server would refuse is refused here, with its message, not replayed as a note.
func checkEdit(base *Scenario, edited []byte) (o, cur, check Obj, err error) {
	o, err = jsonobj.DecodeObj(edited)
	if err != nil {
		return nil, nil, nil, invalidWorld("edited StatefulSet: %w", err)
	}
	if k := jsonobj.GetStr(o, "kind"); k != "" && k != world.KindSet {
		return nil, nil, nil, invalidWorld("edited manifest is a %s, want a StatefulSet", k)
	}
	jsonobj.SetDefault(o, "kind", world.KindSet)
	jsonobj.SetDefault(o, "apiVersion", "apps/v1")
	cur = jsonobj.GetObj(base.snapshot, "statefulSet")
	if n := jsonobj.GetStr(o, "metadata.name"); n != "" && n != jsonobj.GetStr(cur, "metadata.name") {
		return nil, nil, nil, invalidWorld("edited StatefulSet %q is not the snapshot's %q", n, jsonobj.GetStr(cur, "metadata.name"))
	}
	check = jsonobj.CloneObj(o)
	jsonobj.SetDefault(jsonobj.Ensure(check, "metadata"), "name", jsonobj.GetStr(cur, "metadata.name"))
	kube.DefaultStatefulSet(check)
	if err := world.APIAnswer(kube.ValidateStatefulSetUpdate(cur, check, kube.GatesOf(base.Features))); err != nil {
		return nil, nil, nil, &RefusedEditError{Err: err}
	}
	return o, cur, check, nil
}

// readEnd reads what the preview says of the set the replay ended with (fs): the revision the edit leads to
// (or would, when a policy holds its create), the settings that decide how the rollout goes, and the
// extensions its module acts on, which the warnings and the summary weigh.
func (p *Preview) readEnd(ctx context.Context, opts Options, tl *Timeline, fs Obj) error {
	p.To = tl.revision(jsonobj.GetStr(fs, "status.updateRevision"))
	if from := rolledBackFrom(tl); from != "" {
		p.To = tl.revision(from) // the set ends at the revision it was rolled back to, not the edit's
	}
	if name, hold := heldRevision(tl); hold != nil {
		p.To, p.ToHeld = tl.revision(name), hold
	}
	var err error
	if p.Settings, err = settingsOf(fs, p.features); err != nil {
		return err
	}
	p.recoverStuck = extensionOn(ctx, opts, annotations(fs), abi.AnnotationRecoverStuckAfter)
	p.progressDeadline = extensionOn(ctx, opts, annotations(fs), abi.AnnotationProgressDeadlineSeconds)
	p.reserving = func(ann map[string]string) bool { return extensionOn(ctx, opts, ann, abi.AnnotationReserveOrdinals) }
	p.annotations = annotationFindings(ctx, opts, annotations(fs))
	if p.reserving(annotations(fs)) {
		p.Settings.ReservedOrdinals = annotations(fs)[abi.AnnotationReserveOrdinals]
	}
	return nil
}

// addStep adds a sync of the replay as the preview shows it: a step when it wrote pods or claims, failed a
// write, or saw pods fail, lose readiness or be collected; its pod deletes as a batch; its pod updates under
// extension in-place-update as a batch of Updates.
func (p *Preview) addStep(st *Step) {
	var acts, deleted []string
	for _, a := range st.Actions {
		if a.Kind == world.KindPod || a.Kind == world.KindClaim || a.Error != "" {
			acts = append(acts, a.String())
		}
		if a.Kind == world.KindPod && a.Verb == "delete" && a.Error == "" {
			deleted = append(deleted, a.Name)
		}
	}
	if updates := podUpdates(st); len(updates) > 0 {
		p.Updates = append(p.Updates, updates)
	}
	var world []WorldEvent
	for _, w := range st.World {
		if w.Source == "gc" || w.Reason == "Failed" || w.Reason == ReasonLostReadiness || w.Reason == ReasonExpanded ||
			w.Reason == ReasonImageByAnotherTag {
			world = append(world, w)
		}
	}
	if len(acts) > 0 || len(world) > 0 {
		p.Steps = append(p.Steps, PreviewStep{Offset: st.Offset, OffsetSeconds: st.Offset.Seconds(), Actions: acts, World: world})
	}
	if len(deleted) > 0 {
		p.Batches = append(p.Batches, deleted)
	}
}

// podUpdates are the pods a sync moves to the update revision under extension in-place-update, each from
// the revision it was at as the sync saw it: a pod moved in place (its update, not the resize before it),
// or a delete the module says recreates a pod it cannot update in place.
func podUpdates(st *Step) []PodUpdate {
	var updates []PodUpdate
	for _, a := range st.Actions {
		if a.Kind == world.KindPod && a.Error == "" && a.Held == nil && (a.InPlace && a.Verb == "update" || a.Verb == "delete" && a.Why != "") {
			updates = append(updates, PodUpdate{Pod: a.Name, InPlace: a.InPlace, Why: a.Why})
		}
	}
	if len(updates) == 0 {
		return nil
	}
	from := map[string]string{}
	for ps := range st.Pods.All() {
		from[ps.Name] = ps.Label
	}
	for i := range updates {
		updates[i].From = from[updates[i].Pod]
	}
	return updates
}

// rolledBackFrom is the update revision extension progress-deadline's Rollback first moved the set away from:
// the one the status names that the module wrote right before its patch of the set's template (the one
// patch of a set a plan may carry, abi/README.md). "" when nothing was rolled back.
func rolledBackFrom(tl *Timeline) string {
	for _, st := range tl.Steps {
		for _, a := range st.Actions {
			if a.Kind == world.KindSet && a.Verb == "patch" && a.Error == "" && a.Held == nil {
				plan := st.Plan
				if len(st.Replanned) > 0 {
					plan = st.Replanned
				}
				return gjson.GetBytes(plan, `actions.#(verb=="updateStatus").object.status.updateRevision`).String()
			}
		}
	}
	return ""
}

// ToHeldNote is "not created: policy P holds its create (Reason)" when ToHeld says so, else "".
func (p *Preview) ToHeldNote() string {
	if p.ToHeld == nil {
		return ""
	}
	return fmt.Sprintf("not created: policy %s holds its create (%s)", p.ToHeld.Policy, p.ToHeld.Reason)
}

// heldRevision is the revision the replay ended unable to create because a policy held its create: the last
// ControllerRevision create of the replay when it was held, with its hold (nil: it was issued, or none).
// The set's status still names the revision before it, or none for a set never synced.
func heldRevision(tl *Timeline) (string, *ActionHold) {
	for i := len(tl.Steps) - 1; i >= 0; i-- {
		acts := tl.Steps[i].Actions
		for j := len(acts) - 1; j >= 0; j-- {
			if a := acts[j]; a.Kind == world.KindRevision && a.Verb == "create" {
				return a.Name, a.Held
			}
		}
	}
	return "", nil
}

// previewDescription says what a preview's replay is: the edit applied at its start, and what it changes.
func previewDescription(set string, changes []rollout.Change) string {
	s := fmt.Sprintf("preview: the edited StatefulSet %s applied at +0s", set)
	if len(changes) == 0 {
		return s
	}
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = c.String()
	}
	return s + ": " + strings.Join(atMost(parts, 4, "changes"), "; ")
}

// settingsOf reads the settings of the set as the replay ended (rollout.SettingsOf).
func settingsOf(set Obj, features map[string]bool) (rollout.Settings, error) {
	var typed appsv1.StatefulSet
	if err := json.Unmarshal(mustJSON(set), &typed); err != nil {
		return rollout.Settings{}, fmt.Errorf("the previewed StatefulSet: %w", err)
	}
	return rollout.SettingsOf(&typed, features), nil
}

// warn adds the known traps that apply to this edit and world: before is the world before the edit, after
// the set as the replay ended, final the world then. Their order is the warnings' order.
func (p *Preview) warn(before, after, final Obj, tl *Timeline) {
	spec := jsonobj.GetObj(after, "spec")
	// only the set's pods count: a pod with its labels that is not its own (db-0, web--1) holds nothing up
	members := kube.MembersOfJSON(jsonobj.GetObj(before, "statefulSet"))
	p.warnReplayFindings(tl, after)
	// OrderedReady waits for every pod to be Running and Ready before doing anything else.
	if jsonobj.GetStr(spec, "podManagementPolicy") == "OrderedReady" {
		p.warnOrderedReady(before, after, members)
	}
	if jsonobj.GetStr(spec, "persistentVolumeClaimRetentionPolicy.whenScaled") == "Delete" {
		p.warnClaimsDeleted(before, after)
	}
	if jsonobj.GetStr(spec, "updateStrategy.type") == "RollingUpdate" {
		p.warnRollingUpdate(before, spec, final, members)
	}
	if jsonobj.GetStr(spec, "updateStrategy.type") == "OnDelete" && p.From.Name != p.To.Name {
		p.addWarning(WarnOnDelete, "OnDelete: no pod is replaced by the controller; each pod moves to revision %s only when you delete it", p.To.Label)
	}
	if p.Outcome.Result == "stuck" || p.Outcome.Result == "limit" {
		p.addWarning(WarnUnfinished, "the rollout does not finish: %s", p.Outcome.Summary)
	}
	if p.Outcome.Result == OutcomeHeld {
		p.addWarning(WarnPolicyHeld, "the rollout waits on a policy: %s", p.Outcome.Summary)
	}
}

func (p *Preview) addWarning(code, format string, args ...any) {
	p.Warnings = append(p.Warnings, Warning{Code: code, Message: fmt.Sprintf(format, args...)})
}

// warnReplayFindings says what the replay and the module found wrong, first: a policy that failed guarded
// nothing (once per policy and reason), an extension's annotation the module cannot read, the set's
// ordinal.dev/ annotations its module will not act on (the controller's events say the same), a pod
// pod-update-policy InPlaceOnly holds at the end (its condition), a progress deadline passed (the module's
// Warning event: stopped, reported, or the edit rolled back). Each is in its finder's words.
func (p *Preview) warnReplayFindings(tl *Timeline, after Obj) {
	p.PolicyFailures = tl.PolicyFailures
	for _, f := range tl.PolicyFailures {
		p.addWarning(WarnPolicyFailed, "%s", PolicyFailureText(f))
	}
	for _, msg := range tl.invalidAnnotations { // abi.EventInvalidAnnotation
		p.addWarning(WarnInvalidAnnotation, "%s", msg)
	}
	for _, f := range p.annotations {
		p.addWarning(f.Code, "%s", f.Message)
	}
	for _, msg := range inPlaceBlocked(after) {
		p.addWarning(WarnInPlaceBlocked, "%s", msg)
	}
	for _, w := range tl.WarningEvents {
		if w.Reason == abi.EventProgressDeadlineExceeded {
			p.addWarning(WarnProgressDeadlineExceeded, "%s", w.Message)
		}
	}
}

// warnOrderedReady names the set's pods that are not Running and Ready before the edit: under OrderedReady
// they block it, unless extension recover-stuck replaces them (RollingUpdate).
func (p *Preview) warnOrderedReady(before, after Obj, members kube.Members) {
	var notReady []string
	for _, v := range jsonobj.GetArr(before, "pods") {
		pod := v.(Obj)
		if _, ok := members.PodJSON(pod); ok && jsonobj.Get(pod, "metadata.deletionTimestamp") == nil && !(kube.PodRunningAndReadyJSON(pod)) {
			notReady = append(notReady, jsonobj.GetStr(pod, "metadata.name"))
		}
	}
	switch {
	case len(notReady) > 0 && p.recoverStuck && jsonobj.GetStr(after, "spec.updateStrategy.type") == "RollingUpdate":
		p.addWarning(WarnOrderedReadyBlocked, "OrderedReady: %s not Running and Ready; the controller waits for %s before it creates, deletes or updates any other pod, "+
			"but %s %s deletes a pod not at the update revision once it has not been Ready that long, so it is recreated at its ordinal's revision (the steps show when)",
			strings.Join(notReady, ", "), pronoun(len(notReady)), abi.AnnotationRecoverStuckAfter, annotations(after)[abi.AnnotationRecoverStuckAfter])
	case len(notReady) > 0:
		p.addWarning(WarnOrderedReadyBlocked, "OrderedReady: %s not Running and Ready; the controller waits for %s before it creates, deletes or updates any other pod, "+
			"so this edit changes nothing until then. Reverting the template does not help either (forced rollback): delete the broken pod(s) after fixing the template",
			strings.Join(notReady, ", "), pronoun(len(notReady)))
	}
}

// warnClaimsDeleted names the claims whenScaled=Delete deletes: those of the slots a scale-down (or a
// reservation: extension reserve-ordinals) removes.
func (p *Preview) warnClaimsDeleted(before, after Obj) {
	spec := jsonobj.GetObj(after, "spec")
	start, _ := jsonobj.GetInt(spec, "ordinals.start")
	replicas, _ := jsonobj.GetInt(spec, "replicas")
	oldSet := jsonobj.GetObj(before, "statefulSet")
	oldStart, _ := jsonobj.GetInt(oldSet, "spec.ordinals.start")
	oldReplicas, _ := jsonobj.GetInt(oldSet, "spec.replicas")
	oldSlots, newSlots := p.Slots(oldStart, oldReplicas, annotations(oldSet)), p.Slots(start, replicas, annotations(after))
	var claims []string
	for _, v := range jsonobj.GetArr(before, "claims") {
		name := jsonobj.GetStr(v, "metadata.name")
		if o, ok := ordinal.Ordinal(name); ok && oldSlots.Contains(int64(o)) && !newSlots.Contains(int64(o)) {
			for _, t := range jsonobj.GetArr(spec, "volumeClaimTemplates") {
				if strings.HasPrefix(name, jsonobj.GetStr(t, "metadata.name")+"-") {
					claims = append(claims, name)
				}
			}
		}
	}
	world.SortNatural(claims)
	if len(claims) == 0 {
		return
	}
	what := fmt.Sprintf("scaling %d→%d", oldReplicas, replicas) // as the summary says it
	if replicas >= oldReplicas {
		what = fmt.Sprintf("%s %q", abi.AnnotationReserveOrdinals, annotations(after)[abi.AnnotationReserveOrdinals])
	}
	p.addWarning(WarnClaimsDeleted, "persistentVolumeClaimRetentionPolicy.whenScaled=Delete: %s deletes these PVCs and their data: %s",
		what, strings.Join(ordinal.Fold(claims), ", "))
}

// warnRollingUpdate lists the pods the partition holds back at the end (final), and says that maxUnavailable
// counts the unavailable pods below the partition too, and when its feature gate is off.
func (p *Preview) warnRollingUpdate(before, spec, final Obj, members kube.Members) {
	start, _ := jsonobj.GetInt(spec, "ordinals.start")
	part, _ := jsonobj.GetInt(spec, "updateStrategy.rollingUpdate.partition")
	mu := jsonobj.Get(spec, "updateStrategy.rollingUpdate.maxUnavailable")
	var below []string
	for _, v := range jsonobj.GetArr(before, "pods") {
		pod := v.(Obj)
		if o, ok := members.PodJSON(pod); ok && int64(o) < start+part && !kube.PodReadyJSON(pod) {
			below = append(below, jsonobj.GetStr(pod, "metadata.name"))
		}
	}
	if part > 0 {
		finalMembers := kube.MembersOfJSON(jsonobj.GetObj(final, "statefulSet"))
		for _, v := range jsonobj.GetArr(final, "pods") {
			if o, ok := finalMembers.PodJSON(v.(Obj)); ok && int64(o) < start+part {
				p.HeldBack = append(p.HeldBack, jsonobj.GetStr(v, "metadata.name"))
			}
		}
	}
	if part > 0 && len(below) > 0 {
		p.addWarning(WarnMaxUnavailableCountsHeldBack, "maxUnavailable %v counts unavailable pods below the partition as well: %s (ordinal < %d, held back) already count against it, so fewer pods (or none) are updated at a time",
			mu, strings.Join(ordinal.Fold(below), ", "), start+part)
	}
	if n, ok := jsonobj.AsInt(mu); (ok && n > 1 || !ok && mu != nil) && p.featureOff("MaxUnavailableStatefulSet") {
		p.addWarning(WarnMaxUnavailableIgnored, "maxUnavailable %v is ignored: the MaxUnavailableStatefulSet feature gate is off, pods are updated one at a time", mu)
	}
}

// Slots is the ordinals of a set with these annotations as the module the preview ran places its pods
// (slotsOf).
func (p *Preview) Slots(start, replicas int64, annotations map[string]string) ordinal.Slots {
	return slotsOf(start, replicas, annotations, p.reserving != nil && p.reserving(annotations))
}

// featureOff: the gate is explicitly disabled (every gate the warnings name is on by default).
func (p *Preview) featureOff(gate string) bool {
	on, set := p.features[gate]
	return set && !on
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// WriteText prints the preview for people: what can fail a CI job (the warnings) first, their codes last, a
// rollout's repeated steps once at each end of the run (text_fold.go), lists of pods as runs; -o json has
// every step.
func (p *Preview) WriteText(w io.Writer) error {
	var b strings.Builder
	p.writeHeader(&b)
	if len(p.Warnings) > 0 {
		b.WriteString("\n")
		writeWarnings(&b, p.Warnings)
	}
	b.WriteString("\n")
	p.writeSteps(&b)
	p.writeBatches(&b)
	p.writeOutcome(&b)
	_, err := io.WriteString(w, termsafe.String(b.String())) // module and scenario text inside
	return err
}

// writeHeader writes what is previewed: the set and its revisions, its settings, the kubelet model and pace,
// and the edit's changes.
func (p *Preview) writeHeader(b *strings.Builder) {
	to := letterOf(p.To)
	if note := p.ToHeldNote(); note != "" {
		to += " (" + note + ")"
	}
	fmt.Fprintf(b, "preview: StatefulSet %s, revision %s -> %s\n", p.Set, letterOf(p.From), to)
	fmt.Fprintf(b, "%s\n", wrapJoin(rollout.RevisionLegendItems(p.revisions()), " ", 0, 2))
	fmt.Fprintf(b, "settings: %s\n", wrapJoin(p.Settings.Items(), ", ", len("settings: "), 2))
	fmt.Fprintf(b, "kubelet model: %s\n", p.KubeModel)
	if pace := p.Pace.String(); pace != "" {
		fmt.Fprintf(b, "pace: %s\n", wrapPace(pace))
	}
	if len(p.Changes) > 0 {
		b.WriteString("changes:\n")
		for _, c := range p.Changes {
			fmt.Fprintf(b, "  %s\n", c)
		}
	}
}

// writeSteps writes the steps, one a line at its offset, runs of steps alike folded.
func (p *Preview) writeSteps(b *strings.Builder) {
	if len(p.Steps) == 0 {
		b.WriteString("steps: none (the controller changes no pod)\n")
		return
	}
	b.WriteString("steps:\n")
	parts := make([][]string, len(p.Steps)) // each step's world changes and writes
	shapes := make([]shape, len(p.Steps))
	width := 7 // the offsets' column: "+49m55s", or wider for hours ("+5h59m48s")
	for i, s := range p.Steps {
		parts[i] = append(world.EventStrings(s.World), s.Actions...)
		shapes[i] = shapeOf(strings.Join(parts[i], "; "))
		width = max(width, len(s.Offset.String()))
	}
	eachFolded(shapes, 4, 12, func(i int) {
		fmt.Fprintf(b, "  +%-*s %s\n", width, p.Steps[i].Offset, wrapJoin(foldList(parts[i]), "; ", width+4, width+4))
	}, func(r run, first, last int) {
		fmt.Fprintf(b, "  %-*s %s (+%s .. +%s)\n", width+1, "...", r.left("times"), p.Steps[first].Offset, p.Steps[last].Offset)
	})
}

// writeBatches writes how pods move: the in-place updates and recreations, the batches pods are taken down
// in, and what the partition holds back.
func (p *Preview) writeBatches(b *strings.Builder) {
	taken := p.Batches
	if len(p.Updates) > 0 {
		b.WriteString("\n")
		taken = p.writeUpdates(b)
	}
	if len(taken) > 0 {
		parts := make([]string, len(taken))
		for i, bt := range taken {
			parts[i] = "[" + strings.Join(ordinal.Fold(bt), " ") + "]"
		}
		head := "pods taken down, in batches: "
		if len(p.Updates) > 0 {
			head = "other pods taken down, in batches: "
		} else {
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "%s%s\n", head, wrapJoin(atMost(foldList(parts), 24, "batches"), " -> ", len(head), 2))
	}
	if len(p.HeldBack) > 0 {
		const head = "held back by the partition: "
		fmt.Fprintf(b, "%s%s\n", head, wrapJoin(ordinal.Fold(p.HeldBack), ", ", len(head), 2))
	}
}

// writeOutcome writes how the rollout ends, the estimate for what the replay did not reach, the never-Ready
// replay's findings and what the warnings mean for a CI job.
func (p *Preview) writeOutcome(b *strings.Builder) {
	fmt.Fprintf(b, "\noutcome: %s after %s: %s\n", p.Outcome.Result, p.Outcome.Duration, p.Outcome.Summary)
	if p.Estimate != nil {
		fmt.Fprintf(b, "estimate for the rest: %s (%s)\n", p.Estimate, p.Estimate.Basis)
	}
	p.writeNeverReady(b)
	if len(p.Warnings) > 0 {
		b.WriteString("\n")
		writeWarningsNote(b, p.Warnings)
	}
}

// Recreation is the pods extension in-place-update recreates from one revision for one reason.
type Recreation struct {
	From string   // the revision (its letter) they were at
	Pods []string // in ordinal order
	Why  string   // the module's reason for the first of them (its RecreatingPod event)
}

// Recreations groups the pods Updates recreates by the revision they were at and the module's reason, in
// order of first appearance, each group with the reason as its first pod's event says it. The event names its
// pod, so two pods' reasons are alike when their messages are but for the pod's name. A revision's pods
// usually share one (the first field the update revision's template changes), but a group names only one
// reason, so pods whose reasons differ (the update revision changed during the preview) are groups apart.
func (p *Preview) Recreations() []Recreation {
	var out []Recreation
	at := map[[2]string]int{}
	for _, bt := range p.Updates {
		for _, u := range bt {
			if u.InPlace {
				continue
			}
			key := [2]string{u.From, strings.Replace(u.Why, u.Pod, "", 1)}
			i, ok := at[key]
			if !ok {
				i = len(out)
				at[key] = i
				out = append(out, Recreation{From: u.From, Why: u.Why})
			}
			out[i].Pods = append(out[i].Pods, u.Pod)
		}
	}
	for i := range out {
		world.SortNatural(out[i].Pods)
	}
	return out
}

// UpdateCounts are how many pods Updates moves in place and how many it recreates.
func (p *Preview) UpdateCounts() (inPlace, recreated int) {
	for _, bt := range p.Updates {
		for _, u := range bt {
			if u.InPlace {
				inPlace++
			} else {
				recreated++
			}
		}
	}
	return inPlace, recreated
}

// UpdateBatchText is one batch of Updates in words, its runs of pods folded: "web-4 web-3" when every pod of
// the preview moves alike (mark false), else "web-4 in place; web-3 recreated".
func UpdateBatchText(bt []PodUpdate, mark bool) string {
	var ip, rc []string
	for _, u := range bt {
		if u.InPlace {
			ip = append(ip, u.Pod)
		} else {
			rc = append(rc, u.Pod)
		}
	}
	var groups []string
	for _, g := range []struct {
		pods []string
		how  string
	}{{ip, "in place"}, {rc, "recreated"}} {
		if len(g.pods) == 0 {
			continue
		}
		s := strings.Join(ordinal.Fold(g.pods), " ")
		if mark {
			s += " " + g.how
		}
		groups = append(groups, s)
	}
	return strings.Join(groups, "; ")
}

// RecreationText is a Recreation in one line: the pods (at most 8 runs), the revision they were at (as
// revision names it: its letter in a preview's text, its name in a summary without the letters), the
// module's reason.
func RecreationText(r Recreation, revision func(label string) string) string {
	runs := ordinal.Fold(r.Pods)
	if len(runs) > 8 {
		runs = append(runs[:8:8], fmt.Sprintf("and %d more", len(runs)-8))
	}
	at := ""
	if r.From != "" {
		at = " (from " + revision(r.From) + ")"
	}
	return fmt.Sprintf("%s%s: %s", strings.Join(runs, ", "), at, r.Why)
}

// revisions are the revisions the preview's text names, lettered (its legend).
func (p *Preview) revisions() []RevisionLabel {
	if p.Timeline != nil {
		return p.Timeline.Revisions
	}
	var out []RevisionLabel
	for _, r := range []RevisionLabel{p.From, p.To} {
		if r.Name != "" && (len(out) == 0 || out[0].Name != r.Name) {
			out = append(out, r)
		}
	}
	return out
}

// letterOf is how the preview's text names a revision: its letter; its name if the replay never lettered it;
// "(none)" for a set that has no revision yet.
func letterOf(r RevisionLabel) string {
	switch {
	case r.Label != "":
		return r.Label
	case r.Name != "":
		return r.Name
	}
	return "(none)"
}

// RevisionName is the name of the revision the preview's text calls label (A, B, ...); the label itself when
// the preview has no timeline (decoded from JSON).
func (p *Preview) RevisionName(label string) string {
	if p.Timeline != nil {
		for _, r := range p.Timeline.Revisions {
			if r.Label == label {
				return r.Name
			}
		}
	}
	return label
}

// writeUpdates writes the rolling update's batches under extension in-place-update, each pod in place or
// recreated (runs of pods folded, at most 24 batches: -o json has them all), then why pods are recreated
// (Recreations). It returns the batches of pods taken down that are not among them (a scale-down in the same
// edit).
func (p *Preview) writeUpdates(b *strings.Builder) [][]string {
	inPlace, recreated := p.UpdateCounts()
	head, mark := "pods updated, in batches: ", true
	switch {
	case recreated == 0:
		head, mark = "pods updated in place, in batches: ", false
	case inPlace == 0:
		head, mark = "pods recreated (not in place), in batches: ", false
	}
	parts := make([]string, len(p.Updates))
	for i, bt := range p.Updates {
		parts[i] = "[" + UpdateBatchText(bt, mark) + "]"
	}
	fmt.Fprintf(b, "%s%s\n", head, wrapJoin(atMost(foldList(parts), 24, "batches"), " -> ", len(head), 2))
	recreating := map[string]bool{}
	for _, r := range p.Recreations() {
		for _, n := range r.Pods {
			recreating[n] = true
		}
		fmt.Fprintf(b, "%s\n", wrapJoin(strings.Fields("recreated, not in place: "+RecreationText(r, func(l string) string { return l })), " ", 0, 2))
	}
	var taken [][]string
	for _, bt := range p.Batches {
		var rest []string
		for _, n := range bt {
			if !recreating[n] {
				rest = append(rest, n)
			}
		}
		if len(rest) > 0 {
			taken = append(taken, rest)
		}
	}
	return taken
}

// atMost keeps a long list to its first and last max/2 items, saying how many it left out (-o json has them).
func atMost(items []string, max int, unit string) []string {
	if len(items) <= max {
		return items
	}
	out := append([]string{}, items[:max/2]...)
	out = append(out, fmt.Sprintf("... %d more %s (-o json lists them) ...", len(items)-max, unit))
	return append(out, items[len(items)-max/2:]...)
}

// WriteJSON prints the preview as JSON.
func (p *Preview) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// wrapPace wraps a pace's words at its commas, or, when a part between two commas is longer than a line
// (what a learned pace says it was learned from), at any space: a pace learned from a live set was one
// line of 150 characters in the webhook's and kubectl ordinal preview's text.
func wrapPace(pace string) string {
	parts, sep := strings.Split(pace, ", "), ", "
	for _, p := range parts {
		if len("pace: ")+len(p) > textWidth {
			parts, sep = strings.Fields(pace), " "
			break
		}
	}
	return wrapJoin(parts, sep, len("pace: "), 2)
}

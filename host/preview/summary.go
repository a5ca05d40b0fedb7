package preview

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/annotation"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Summary is a preview reduced to what a person applying the edit needs to read: a few lines, each a
// warning kubectl prints. Blocked and DeletedClaims feed the deny policies.
type Summary struct {
	Lines []string `json:"lines"`
	// Change names the edit in a few words ("scaling 5→3", "rolling update", "create").
	Change string `json:"change"`
	// Blocked is non-empty when the edit would block behind a pod that is not Ready under OrderedReady.
	Blocked string `json:"blocked,omitempty"`
	// DeletedClaims are the PVCs the edit deletes (whenScaled=Delete).
	DeletedClaims []string `json:"deletedClaims,omitempty"`
}

// Summarize reduces a preview of old -> cur (old nil: a create). sel are the objects the snapshot held. Its
// lines come in the order a person needs them: the headline (what happens to the pods), what the set's
// policies hold or did not guard, claims grown, pods recreated rather than updated in place, the partition,
// a pod that blocks an OrderedReady rollout, claims deleted or kept, and the preview's other warnings.
func Summarize(p *replay.Preview, old, cur *appsv1.StatefulSet, sel snapshot.Objects) Summary {
	e := newEdit(p, old, cur)
	var s Summary
	e.headline(&s, sel)
	e.otherControllerLine(&s)
	e.policyLines(&s)
	e.resizedClaims(&s)
	e.recreations(&s)
	e.partitionLine(&s)
	e.notReadyLine(&s, sel)
	e.claimLines(&s, sel)
	e.otherWarnings(&s)
	return s
}

func (s *Summary) add(format string, args ...any) {
	s.Lines = append(s.Lines, fmt.Sprintf(format, args...))
}

// edit is what the summary's lines are made from: the edit's spec values and what the replay did.
type edit struct {
	p                     *replay.Preview
	old, cur              *appsv1.StatefulSet
	name                  string
	replicas, oldReplicas int32
	// the set's ordinals by replica slot: upstream's, or those the reserve-ordinals extension leaves
	slots, oldSlots ordinal.Slots
	reserving       bool
	// what the replay did to pods: created, deleted out of the set's range, and adopted (existing pods the
	// set's controller took as its own: a set created over orphans, as kubectl ordinal migrate does)
	created, deletedOut, adopted []string
	// the rolling update's batches of pods in range taken down together; with the extension
	// in-place-update, each pod moved in place or recreated (the module's own account, typed)
	batches            [][]string
	updates            [][]replay.PodUpdate
	inPlace, recreated int
	replaced           int
	orderedReady       bool
	policyWord         string
	templateChanged    bool
	rollingUpdate      bool
	partition          int32
	maxUnavailable     string
	toRev              string
}

func newEdit(p *replay.Preview, old, cur *appsv1.StatefulSet) *edit {
	e := &edit{p: p, old: old, cur: cur, name: cur.Name, replicas: 1, maxUnavailable: "1"}
	var start int32
	if cur.Spec.Ordinals != nil {
		start = cur.Spec.Ordinals.Start
	}
	if cur.Spec.Replicas != nil {
		e.replicas = *cur.Spec.Replicas
	}
	if old != nil {
		e.oldReplicas = 1
		if old.Spec.Replicas != nil {
			e.oldReplicas = *old.Spec.Replicas
		}
	}
	e.slots = p.Slots(int64(start), int64(e.replicas), cur.Annotations)
	e.oldSlots = e.slots
	if old != nil {
		e.oldSlots = p.Slots(int64(start), int64(e.oldReplicas), old.Annotations)
	}
	e.reserving = e.slots.Reserved()
	e.podWrites()
	e.rollingBatches()
	e.orderedReady = cur.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	e.policyWord = "one at a time, each after the previous is Running and Ready (OrderedReady)"
	if !e.orderedReady {
		e.policyWord = "all at once (Parallel)"
	}
	e.templateChanged = old != nil && !apiequality.Semantic.DeepEqual(old.Spec.Template, cur.Spec.Template)
	e.rollingUpdate = cur.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
	if ru := cur.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.Partition != nil {
			e.partition = *ru.Partition
		}
		if ru.MaxUnavailable != nil {
			e.maxUnavailable = ru.MaxUnavailable.String()
		}
	}
	e.toRev = p.To.Name
	switch note := p.ToHeldNote(); {
	case note != "":
		e.toRev += " (" + note + ")"
	case e.toRev == "":
		e.toRev = "(none created)"
	}
	return e
}

// inRange: the pod is one of the set's ordinals after the edit.
func (e *edit) inRange(pod string) bool {
	o, ok := ordinal.Of(pod, e.name)
	return ok && e.slots.Contains(int64(o))
}

// podWrites are the pods the replay created, and those it deleted out of the set's range, in its order.
func (e *edit) podWrites() {
	if e.p.Timeline == nil {
		return
	}
	seenCreate, seenDelete := map[string]bool{}, map[string]bool{}
	for _, st := range e.p.Timeline.Steps {
		for _, a := range st.Actions {
			if a.Kind != "Pod" || a.Error != "" {
				continue
			}
			switch a.Verb {
			case "create":
				if !seenCreate[a.Name] && !seenDelete[a.Name] {
					e.created = append(e.created, a.Name)
				}
				seenCreate[a.Name] = true
			case "delete":
				if !e.inRange(a.Name) && !seenDelete[a.Name] {
					e.deletedOut = append(e.deletedOut, a.Name)
				}
				seenDelete[a.Name] = true
			case "patch":
				if a.Ownership() == replay.OwnershipAdopt && e.inRange(a.Name) && !seenCreate[a.Name] && !seenDelete[a.Name] &&
					!slices.Contains(e.adopted, a.Name) {
					e.adopted = append(e.adopted, a.Name)
				}
			}
		}
	}
}

// rollingBatches are the rolling update's batches of pods in range, and how many pods it replaced.
func (e *edit) rollingBatches() {
	for _, b := range e.p.Batches {
		var in []string
		for _, n := range b {
			if e.inRange(n) {
				in = append(in, n)
			}
		}
		if len(in) > 0 {
			e.batches = append(e.batches, in)
			e.replaced += len(in)
		}
	}
	for _, b := range e.p.Updates {
		var in []replay.PodUpdate
		for _, u := range b {
			if e.inRange(u.Pod) {
				in = append(in, u)
			}
		}
		if len(in) > 0 {
			e.updates = append(e.updates, in)
		}
	}
	e.inPlace, e.recreated = e.p.UpdateCounts()
	if len(e.updates) > 0 {
		e.replaced = 0
		for _, b := range e.updates {
			e.replaced += len(b)
		}
	}
}

// slotRange names the pods of slots [from, to) (highest first when down): set-a..set-b when their
// ordinals are consecutive, else at most 8 names and how many more, without a name per slot (a set may
// have millions).
func (e *edit) slotRange(s ordinal.Slots, from, to int32, down bool) string {
	n := int(to - from)
	if n <= 0 {
		return "none"
	}
	if first, last := s.At(int(from)), s.At(int(to-1)); n > 2 && !down && last-first == int64(n-1) {
		return ordinal.Name(e.name, first) + ".." + ordinal.Name(e.name, last)
	}
	var names []string
	for k := 0; k < n && k < 8; k++ {
		i := int(from) + k
		if down {
			i = int(to) - 1 - k
		}
		names = append(names, ordinal.Name(e.name, s.At(i)))
	}
	if n > 8 {
		return strings.Join(names, ", ") + fmt.Sprintf(" and %d more", n-8)
	}
	return strings.Join(names, ", ")
}

// 1. The headline: what happens to the pods.
func (e *edit) headline(s *Summary, sel snapshot.Objects) {
	if e.old == nil {
		e.createHeadline(s, sel)
		return
	}
	var parts []string
	// An edit of ordinal.dev/pod-update-policy alone moves pods too: InPlaceOnly to InPlaceIfPossible
	// recreates the pods the hold kept (the module's account of them is e.updates).
	if e.templateChanged || len(e.updates) > 0 {
		s.Change = "rolling update"
		if !e.rollingUpdate {
			s.Change = "template change"
		}
		parts = append(parts, e.templatePart())
	}
	if e.replicas != e.oldReplicas {
		s.Change = fmt.Sprintf("scaling %d→%d", e.oldReplicas, e.replicas)
		parts = append(parts, e.scalePart())
	}
	if e.old.Annotations[abi.AnnotationReserveOrdinals] != e.cur.Annotations[abi.AnnotationReserveOrdinals] && e.replicas == e.oldReplicas {
		s.Change = "reserved ordinals"
		parts = append(parts, e.reservePart())
	}
	if len(parts) == 0 {
		s.Change = "spec change"
		parts = append(parts, "no pod is created, deleted or replaced")
		if len(e.created) > 0 {
			parts[0] = fmt.Sprintf("creates missing pods %s", listNames(e.created, 8))
		}
	}
	s.add("%s", strings.Join(parts, "; "))
}

// createHeadline: the pods a new set creates, and the claims of earlier sets it reuses.
func (e *edit) createHeadline(s *Summary, sel snapshot.Objects) {
	s.Change = "create"
	switch {
	case len(e.adopted) > 0:
		// The pods exist (kubectl ordinal migrate deletes a set with orphan propagation and creates it again):
		// "5 pods web-0..web-4, one at a time" read as if they would be created, where none was.
		ordinal.Sort(e.adopted)
		line := fmt.Sprintf("create StatefulSet %s: adopts %s that exist already (%s)", e.name, plural(len(e.adopted), "pod"), compactRange(e.adopted, e.name))
		var created []string
		for _, n := range e.created {
			if e.inRange(n) {
				created = append(created, n)
			}
		}
		if len(created) > 0 {
			line += fmt.Sprintf(", creates %s (%s), %s", plural(len(created), "pod"), listNames(created, 8), e.policyWord)
		} else {
			line += ", creates none"
		}
		line += ", revision " + e.toRev
		if e.replaced > 0 {
			line += "; then " + e.templatePart()
		}
		s.add("%s", line)
	case e.replicas == 0:
		s.add("create StatefulSet %s with 0 replicas: no pods", e.name)
	default:
		s.add("create StatefulSet %s: %s %s, %s, revision %s", e.name, plural(int(e.replicas), "pod"), e.slotRange(e.slots, 0, e.replicas, false), e.policyWord, e.toRev)
	}
	var reused []string
	for _, c := range sel.Claims {
		if o, ok := claimOrdinal(c.Name, e.cur); ok && e.slots.Contains(int64(o)) {
			reused = append(reused, c.Name)
		}
	}
	if len(reused) > 0 {
		ordinal.Sort(reused)
		s.add("existing PVCs are reused with their data: %s", listNames(reused, 8))
	}
}

// otherControllerLine: the set asks for Ordinal's behaviour (an ordinal.dev/ annotation: an extension, a
// module, policies) yet another controller last wrote its status (kube-controller-manager's, for an apps/v1
// set Ordinal was never given), which, if it runs the set, acts as upstream does whatever the annotations
// say: the preview is what Ordinal would do, not what will happen. An InPlaceIfPossible set previewed "in place (the pods are
// kept)" had every pod recreated by kube-controller-manager.
func (e *edit) otherControllerLine(s *Summary) {
	if e.old == nil {
		return
	}
	if m := annotation.OtherController(e.old, e.cur.Annotations); m != "" {
		s.add("%s", rollout.OtherControllerSays(m, e.name, "this preview shows"))
	}
}

// templatePart: what a template change does to the pods (OnDelete, none now, the rolling update's batches).
func (e *edit) templatePart() string {
	soFar := ""
	if e.p.Estimate != nil {
		soFar = " so far"
	}
	switch {
	case !e.rollingUpdate:
		return fmt.Sprintf("template change to revision %s with updateStrategy OnDelete: no pod is replaced until you delete it", e.toRev)
	case e.replaced == 0 && inPlaceBlocked(e.p):
		return fmt.Sprintf("template change to revision %s: no pod is replaced now: %s %s holds the rollout at a pod it cannot update in place",
			e.toRev, abi.AnnotationPodUpdatePolicy, e.cur.Annotations[abi.AnnotationPodUpdatePolicy])
	case e.replaced == 0:
		return fmt.Sprintf("template change to revision %s: no pod is replaced now", e.toRev)
	case len(e.updates) > 0:
		how, mark := fmt.Sprintf(", %d in place and %d recreated", e.inPlace, e.recreated), true
		switch {
		case e.recreated == 0 && !e.restarts():
			how, mark = " in place (the pods are kept, no container restarts)", false
		case e.recreated == 0:
			how, mark = " in place (the pods are kept, their containers restart)", false
		case e.inPlace == 0:
			how, mark = ", each recreated (not in place)", false
		}
		texts := make([][]string, len(e.updates))
		for i, b := range e.updates {
			texts[i] = []string{replay.UpdateBatchText(b, mark)}
		}
		return fmt.Sprintf("rolling update of %s%s to revision %s%s (%s %s), maxUnavailable %s: %s; %s%s",
			plural(e.replaced, "pod"), soFar, e.toRev, how, abi.AnnotationPodUpdatePolicy, e.cur.Annotations[abi.AnnotationPodUpdatePolicy],
			e.maxUnavailable, batchList(texts, 6), plural(len(e.updates), "step"), soFar)
	default:
		return fmt.Sprintf("rolling update of %s%s to revision %s, maxUnavailable %s: %s; %s%s",
			plural(e.replaced, "pod"), soFar, e.toRev, e.maxUnavailable, batchList(e.batches, 6), plural(len(e.batches), "step"), soFar)
	}
}

// scalePart: the pods a replica change creates or deletes, in upstream's order.
func (e *edit) scalePart() string {
	if e.replicas > e.oldReplicas {
		return fmt.Sprintf("scaling %d→%d creates %s, %s", e.oldReplicas, e.replicas,
			e.slotRange(e.slots, e.oldReplicas, e.replicas, false), e.policyWord)
	}
	gone := listNames(e.deletedOut, 8)
	if len(e.deletedOut) == 0 {
		gone = e.slotRange(e.oldSlots, e.replicas, e.oldReplicas, true)
	}
	order := "highest ordinal first, one at a time"
	if !e.orderedReady {
		order = "all at once"
	}
	return fmt.Sprintf("scaling %d→%d deletes %s (%s)", e.oldReplicas, e.replicas, gone, order)
}

// reservePart: the pods the extension reserve-ordinals moves (the extended module's; previewed above).
func (e *edit) reservePart() string {
	moved := fmt.Sprintf("%s %q", abi.AnnotationReserveOrdinals, e.cur.Annotations[abi.AnnotationReserveOrdinals])
	if !e.reserving {
		moved = "no ordinal reserved"
	}
	var does []string
	if len(e.created) > 0 {
		does = append(does, "creates "+listNames(e.created, 8))
	}
	if len(e.deletedOut) > 0 {
		does = append(does, "deletes "+listNames(e.deletedOut, 8))
	}
	if len(does) == 0 {
		does = append(does, "moves no pod")
	}
	return moved + ": " + strings.Join(does, ", ")
}

// 1a. What the set's policies did not guard (they failed) or hold the rollout at: said before the details,
// where the API server's limit on warnings cannot cut it.
func (e *edit) policyLines(s *Summary) {
	for _, w := range e.p.Warnings {
		if w.Code == replay.WarnPolicyFailed || w.Code == replay.WarnPolicyHeld {
			s.add("%s", w.Message)
		}
	}
}

// 1b. The claims the extension resize-claims grows (the extended module's), in the order it does.
func (e *edit) resizedClaims(s *Summary) {
	if e.p.Timeline == nil {
		return
	}
	var resized []string
	for _, st := range e.p.Timeline.Steps {
		for _, a := range st.Actions {
			if a.Kind == "PersistentVolumeClaim" && a.Verb == "patch" && a.Error == "" {
				resized = append(resized, a.Name+" to "+a.ClaimStorage())
			}
		}
	}
	if len(resized) > 0 {
		s.add("%s grows claims one ordinal at a time, each once the one before is expanded: %s", abi.AnnotationResizeClaims, listNames(resized, 8))
	}
}

// 1c. Why pods are recreated rather than updated in place (extension in-place-update), in the module's words.
func (e *edit) recreations(s *Summary) {
	for _, r := range e.p.Recreations() {
		s.add("not in place, so recreated: %s", replay.RecreationText(r, e.p.RevisionName))
	}
}

// 2. The pods the partition holds at their revision.
func (e *edit) partitionLine(s *Summary) {
	old, p := e.old, e.p
	if old == nil || !e.rollingUpdate || e.partition <= 0 || len(p.HeldBack) == 0 || !(e.templateChanged || old.Status.CurrentRevision != old.Status.UpdateRevision) {
		return
	}
	held := append([]string(nil), p.HeldBack...)
	ordinal.Sort(held)
	at := p.From.Name
	if at == "" {
		at = "their current revision"
	}
	if saved, ok := rollout.PausePartitionHolds(e.cur.Annotations, int64(e.partition)); ok {
		// kubectl ordinal pause's partition: whose it is, and what lets the edit roll
		s.add("kubectl ordinal pause holds %s at %s (partition %d; the partition was %s): kubectl ordinal resume statefulset/%s rolls this edit out",
			compactRange(held, e.name), at, e.partition, saved, e.name)
		return
	}
	s.add("partition %d holds %s at %s", e.partition, compactRange(held, e.name), at)
}

// 3. Pods that are not Ready under OrderedReady: nothing happens past them.
func (e *edit) notReadyLine(s *Summary, sel snapshot.Objects) {
	p := e.p
	podChanges := e.old == nil || e.replicas != e.oldReplicas || (e.templateChanged && e.rollingUpdate && (e.replaced > 0 || p.Outcome.Result == "stuck"))
	if !e.orderedReady || !podChanges {
		return
	}
	var notReady []string
	members := kube.MembersOf(sel.Set) // a pod with the set's labels that is not its own holds nothing up
	for _, pod := range sel.Pods {
		if _, ok := members.Pod(pod); ok && pod.DeletionTimestamp == nil && !(kube.PodRunningAndReady(pod)) {
			notReady = append(notReady, pod.Name)
		}
	}
	ordinal.Sort(notReady)
	if len(notReady) == 0 || p.Outcome.Result == "complete" || p.Outcome.Result == "partitioned" {
		return
	}
	verb := "is"
	if len(notReady) > 1 {
		verb = "are"
	}
	var msg string
	if len(p.Steps) == 0 {
		msg = fmt.Sprintf("%s %s not Ready: with OrderedReady this rollout will not start until %s Ready (fix or delete the pod; reverting the template does not help)",
			listNames(notReady, 4), verb, pronounIs(len(notReady)))
	} else {
		msg = fmt.Sprintf("%s %s not Ready: with OrderedReady this rollout will stop at %s", listNames(notReady, 4), verb, notReady[0])
	}
	s.add("%s", msg)
	s.Blocked = msg
}

// 4. The PVCs the edit deletes (the garbage collector's, in the replay, and those whenScaled=Delete takes
// from the ordinals scaled away), or keeps under whenScaled=Retain.
func (e *edit) claimLines(s *Summary, sel snapshot.Objects) {
	deleted := map[string]bool{}
	for _, st := range e.p.Steps {
		for _, w := range st.World {
			if w.Source == "gc" && w.Reason == replay.ReasonDeleted && w.Kind == "PersistentVolumeClaim" {
				deleted[w.Name] = true
			}
		}
	}
	if e.cur.Spec.PersistentVolumeClaimRetentionPolicy != nil && e.old != nil && e.replicas < e.oldReplicas {
		var beyond []string
		for _, c := range sel.Claims {
			if o, ok := claimOrdinal(c.Name, e.cur); ok && e.oldSlots.Contains(int64(o)) && !e.slots.Contains(int64(o)) {
				beyond = append(beyond, c.Name)
			}
		}
		ordinal.Sort(beyond)
		if e.cur.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
			for _, c := range beyond {
				deleted[c] = true
			}
		} else if len(beyond) > 0 {
			s.add("whenScaled=Retain: the PVCs %s are kept (with their data) and reused if the set scales up again", listNames(beyond, 8))
		}
	}
	for c := range deleted {
		s.DeletedClaims = append(s.DeletedClaims, c)
	}
	ordinal.Sort(s.DeletedClaims)
	if len(s.DeletedClaims) > 0 {
		s.add("whenScaled=Delete: %s deletes PVCs %s and their data", s.Change, listNames(s.DeletedClaims, 8))
	}
}

// 5. The engine's other traps, and an unfinished rollout.
func (e *edit) otherWarnings(s *Summary) {
	p := e.p
	for _, w := range p.Warnings {
		switch w.Code {
		case replay.WarnOrderedReadyBlocked, replay.WarnClaimsDeleted, replay.WarnUnfinished, replay.WarnOnDelete:
			continue // said above in the webhook's own words
		case replay.WarnPolicyFailed, replay.WarnPolicyHeld:
			continue // said above
		}
		s.add("%s", w.Message)
	}
	if (p.Outcome.Result == "stuck" || p.Outcome.Result == "limit") && s.Blocked == "" {
		s.add("the rollout does not finish: %s", p.Outcome.Summary)
	}
	if p.Estimate != nil {
		s.add("preview cut short (%s): estimate for the rest: %s", p.Timeline.StopReason, p.Estimate)
	}
}

// inPlaceBlocked: the preview ends with pod-update-policy InPlaceOnly holding a pod (the module's condition).
func inPlaceBlocked(p *replay.Preview) bool {
	for _, w := range p.Warnings {
		if w.Code == replay.WarnInPlaceBlocked {
			return true
		}
	}
	return false
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func pronounIs(n int) string {
	if n == 1 {
		return "it is"
	}
	return "they are"
}

// claimOrdinal parses <template>-<set>-<n> for one of the set's claim templates.
func claimOrdinal(claim string, set *appsv1.StatefulSet) (int, bool) {
	for _, t := range set.Spec.VolumeClaimTemplates {
		if rest, ok := strings.CutPrefix(claim, t.Name+"-"); ok {
			if o, ok := ordinal.Of(rest, set.Name); ok {
				return o, true
			}
		}
	}
	return 0, false
}

// compactRange writes sorted pod names as set-a..set-b when they are consecutive ordinals.
func compactRange(pods []string, set string) string {
	if len(pods) > 2 {
		first, ok1 := ordinal.Of(pods[0], set)
		last, ok2 := ordinal.Of(pods[len(pods)-1], set)
		if ok1 && ok2 && last-first == len(pods)-1 {
			return fmt.Sprintf("%s..%s", pods[0], pods[len(pods)-1])
		}
	}
	return listNames(pods, 8)
}

// batchList writes [a b] then [c d] then [e], eliding the middle of long lists.
func batchList(batches [][]string, max int) string {
	f := func(b []string) string { return "[" + strings.Join(b, " ") + "]" }
	var parts []string
	if len(batches) <= max {
		for _, b := range batches {
			parts = append(parts, f(b))
		}
		return strings.Join(parts, " then ")
	}
	for _, b := range batches[:max-2] {
		parts = append(parts, f(b))
	}
	parts = append(parts, fmt.Sprintf("... (%d more) ...", len(batches)-max+1), f(batches[len(batches)-1]))
	return strings.Join(parts, " then ")
}

func listNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
}

// restarts reports whether the in-place updates restart a container: unless the live set is settled (its
// template is its current revision's), every pod moved from that revision and the edit changes no image and
// resizes only resources whose resizePolicy is NotRequired (the default: the kubelet resizes them live), the
// summary says the containers restart, as abi/POLICY.md section 2.1 counts an in-place update a disruption.
func (e *edit) restarts() bool {
	if o := e.old; o == nil || o.Status.ObservedGeneration != o.Generation || o.Status.UpdateRevision != o.Status.CurrentRevision ||
		o.Status.CurrentRevision != e.p.From.Name {
		return true // mid-rollout, the pods' template is not the live set's
	}
	for _, b := range e.updates {
		for _, u := range b {
			if u.From != e.p.From.Label {
				return true
			}
		}
	}
	return restartsContainers(&e.old.Spec.Template.Spec, &e.cur.Spec.Template.Spec)
}

// restartsContainers: moving a pod from template old to cur in place restarts a container (a new image, a
// container of another name, a CPU or memory change under resizePolicy RestartContainer).
func restartsContainers(old, cur *corev1.PodSpec) bool {
	changed := func(olds, curs []corev1.Container, resources bool) bool {
		if len(olds) != len(curs) {
			return true
		}
		for i, c := range curs {
			o := olds[i]
			if o.Name != c.Name || o.Image != c.Image {
				return true
			}
			if !resources {
				if !apiequality.Semantic.DeepEqual(o.Resources, c.Resources) {
					return true // an init container's resources are not resized: it is recreated anyway
				}
				continue
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if o.Resources.Requests[r].Equal(c.Resources.Requests[r]) && o.Resources.Limits[r].Equal(c.Resources.Limits[r]) {
					continue
				}
				for _, p := range c.ResizePolicy {
					if p.ResourceName == r && p.RestartPolicy == corev1.RestartContainer {
						return true
					}
				}
			}
		}
		return false
	}
	return changed(old.InitContainers, cur.InitContainers, false) || changed(old.Containers, cur.Containers, true)
}

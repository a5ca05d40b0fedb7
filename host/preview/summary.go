package preview

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay"
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

// Summarize reduces a preview of old -> cur (old nil: a create). sel are the objects the snapshot held.
func Summarize(p *replay.Preview, old, cur *appsv1.StatefulSet, sel snapshot.Objects) Summary {
	var s Summary
	add := func(format string, args ...any) { s.Lines = append(s.Lines, fmt.Sprintf(format, args...)) }
	name := cur.Name
	var start int32
	if cur.Spec.Ordinals != nil {
		start = cur.Spec.Ordinals.Start
	}
	replicas := int32(1)
	if cur.Spec.Replicas != nil {
		replicas = *cur.Spec.Replicas
	}
	oldReplicas := int32(0)
	if old != nil {
		oldReplicas = 1
		if old.Spec.Replicas != nil {
			oldReplicas = *old.Spec.Replicas
		}
	}
	// the set's ordinals by replica slot: upstream's, or those the reserve-ordinals extension leaves
	slots := p.Slots(int64(start), int64(replicas), cur.Annotations)
	oldSlots := slots
	if old != nil {
		oldSlots = p.Slots(int64(start), int64(oldReplicas), old.Annotations)
	}
	reserving := slots.Reserved()
	// slotRange names the pods of slots [from, to) (highest first when down): set-a..set-b when their
	// ordinals are consecutive, else at most 8 names and how many more, without a name per slot (a set may
	// have millions)
	slotRange := func(s ordinal.Slots, from, to int32, down bool) string {
		n := int(to - from)
		if n <= 0 {
			return "none"
		}
		if first, last := s.At(int(from)), s.At(int(to-1)); n > 2 && !down && last-first == int64(n-1) {
			return ordinal.Name(name, first) + ".." + ordinal.Name(name, last)
		}
		var names []string
		for k := 0; k < n && k < 8; k++ {
			i := int(from) + k
			if down {
				i = int(to) - 1 - k
			}
			names = append(names, ordinal.Name(name, s.At(i)))
		}
		if n > 8 {
			return strings.Join(names, ", ") + fmt.Sprintf(" and %d more", n-8)
		}
		return strings.Join(names, ", ")
	}
	inRange := func(pod string) bool {
		o, ok := ordinal.Of(pod, name)
		return ok && slots.Contains(int64(o))
	}
	// What the replay did to pods.
	var created, deletedOut []string
	seenCreate, seenDelete := map[string]bool{}, map[string]bool{}
	if p.Timeline != nil {
		for _, st := range p.Timeline.Steps {
			for _, a := range st.Actions {
				if a.Kind != "Pod" || a.Error != "" {
					continue
				}
				switch a.Verb {
				case "create":
					if !seenCreate[a.Name] && !seenDelete[a.Name] {
						created = append(created, a.Name)
					}
					seenCreate[a.Name] = true
				case "delete":
					if !inRange(a.Name) && !seenDelete[a.Name] {
						deletedOut = append(deletedOut, a.Name)
					}
					seenDelete[a.Name] = true
				}
			}
		}
	}
	var batches [][]string // rolling-update batches: pods in range taken down together
	for _, b := range p.Batches {
		var in []string
		for _, n := range b {
			if inRange(n) {
				in = append(in, n)
			}
		}
		if len(in) > 0 {
			batches = append(batches, in)
		}
	}
	// extension in-place-update: the rolling update's batches are the pods moved to the update revision, each
	// in place or recreated (the module's own account, typed: replay.PodUpdate)
	var updates [][]replay.PodUpdate
	for _, b := range p.Updates {
		var in []replay.PodUpdate
		for _, u := range b {
			if inRange(u.Pod) {
				in = append(in, u)
			}
		}
		if len(in) > 0 {
			updates = append(updates, in)
		}
	}
	inPlace, recreated := p.UpdateCounts()
	replaced := 0
	for _, b := range batches {
		replaced += len(b)
	}
	if len(updates) > 0 {
		replaced = 0
		for _, b := range updates {
			replaced += len(b)
		}
	}
	orderedReady := cur.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	policyWord := "one at a time, each after the previous is Running and Ready (OrderedReady)"
	if !orderedReady {
		policyWord = "all at once (Parallel)"
	}
	templateChanged := old != nil && !apiequality.Semantic.DeepEqual(old.Spec.Template, cur.Spec.Template)
	rollingUpdate := cur.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
	partition := int32(0)
	maxUnavailable := "1"
	if ru := cur.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.Partition != nil {
			partition = *ru.Partition
		}
		if ru.MaxUnavailable != nil {
			maxUnavailable = ru.MaxUnavailable.String()
		}
	}
	toRev := p.To.Name
	switch note := p.ToHeldNote(); {
	case note != "":
		toRev += " (" + note + ")"
	case toRev == "":
		toRev = "(none created)"
	}

	// 1. the headline: what happens to the pods
	switch {
	case old == nil:
		s.Change = "create"
		if replicas == 0 {
			add("create StatefulSet %s with 0 replicas: no pods", name)
		} else {
			add("create StatefulSet %s: %s %s, %s, revision %s", name, plural(int(replicas), "pod"), slotRange(slots, 0, replicas, false), policyWord, toRev)
		}
		var reused []string
		for _, c := range sel.Claims {
			if o, ok := claimOrdinal(c.Name, cur); ok && slots.Contains(int64(o)) {
				reused = append(reused, c.Name)
			}
		}
		if len(reused) > 0 {
			ordinal.Sort(reused)
			add("existing PVCs are reused with their data: %s", listNames(reused, 8))
		}
	default:
		var parts []string
		if templateChanged {
			s.Change = "rolling update"
			switch {
			case !rollingUpdate:
				s.Change = "template change"
				parts = append(parts, fmt.Sprintf("template change to revision %s with updateStrategy OnDelete: no pod is replaced until you delete it", toRev))
			case replaced == 0 && inPlaceBlocked(p):
				parts = append(parts, fmt.Sprintf("template change to revision %s: no pod is replaced now: %s %s holds the rollout at a pod it cannot update in place",
					toRev, abi.AnnotationPodUpdatePolicy, cur.Annotations[abi.AnnotationPodUpdatePolicy]))
			case replaced == 0:
				parts = append(parts, fmt.Sprintf("template change to revision %s: no pod is replaced now", toRev))
			case len(updates) > 0:
				soFar := ""
				if p.Estimate != nil {
					soFar = " so far"
				}
				how, mark := fmt.Sprintf(", %d in place and %d recreated", inPlace, recreated), true
				switch {
				case recreated == 0:
					how, mark = " in place (the pods are kept, their containers restart)", false
				case inPlace == 0:
					how, mark = ", each recreated (not in place)", false
				}
				texts := make([][]string, len(updates))
				for i, b := range updates {
					texts[i] = []string{replay.UpdateBatchText(b, mark)}
				}
				parts = append(parts, fmt.Sprintf("rolling update of %s%s to revision %s%s (%s %s), maxUnavailable %s: %s; %s%s",
					plural(replaced, "pod"), soFar, toRev, how, abi.AnnotationPodUpdatePolicy, cur.Annotations[abi.AnnotationPodUpdatePolicy],
					maxUnavailable, batchList(texts, 6), plural(len(updates), "step"), soFar))
			default:
				soFar := ""
				if p.Estimate != nil {
					soFar = " so far"
				}
				parts = append(parts, fmt.Sprintf("rolling update of %s%s to revision %s, maxUnavailable %s: %s; %s%s",
					plural(replaced, "pod"), soFar, toRev, maxUnavailable, batchList(batches, 6), plural(len(batches), "step"), soFar))
			}
		}
		if replicas != oldReplicas {
			s.Change = fmt.Sprintf("scaling %d→%d", oldReplicas, replicas)
			if replicas > oldReplicas {
				parts = append(parts, fmt.Sprintf("scaling %d→%d creates %s, %s", oldReplicas, replicas,
					slotRange(slots, oldReplicas, replicas, false), policyWord))
			} else {
				gone := listNames(deletedOut, 8)
				if len(deletedOut) == 0 {
					gone = slotRange(oldSlots, replicas, oldReplicas, true)
				}
				order := "highest ordinal first, one at a time"
				if !orderedReady {
					order = "all at once"
				}
				parts = append(parts, fmt.Sprintf("scaling %d→%d deletes %s (%s)", oldReplicas, replicas, gone, order))
			}
		}
		if old != nil && old.Annotations[abi.AnnotationReserveOrdinals] != cur.Annotations[abi.AnnotationReserveOrdinals] && replicas == oldReplicas {
			// the extension reserve-ordinals: the pods it moves (the extended module's; previewed above)
			s.Change = "reserved ordinals"
			moved := fmt.Sprintf("%s %q", abi.AnnotationReserveOrdinals, cur.Annotations[abi.AnnotationReserveOrdinals])
			if !reserving {
				moved = "no ordinal reserved"
			}
			var does []string
			if len(created) > 0 {
				does = append(does, "creates "+listNames(created, 8))
			}
			if len(deletedOut) > 0 {
				does = append(does, "deletes "+listNames(deletedOut, 8))
			}
			if len(does) == 0 {
				does = append(does, "moves no pod")
			}
			parts = append(parts, moved+": "+strings.Join(does, ", "))
		}
		if len(parts) == 0 {
			s.Change = "spec change"
			parts = append(parts, "no pod is created, deleted or replaced")
			if len(created) > 0 {
				parts[0] = fmt.Sprintf("creates missing pods %s", listNames(created, 8))
			}
		}
		add("%s", strings.Join(parts, "; "))
	}

	// 1a. what the set's policies did not guard (they failed) or hold the rollout at: said before the details,
	// where the API server's limit on warnings cannot cut it
	for _, w := range p.Warnings {
		if w.Code == replay.WarnPolicyFailed || w.Code == replay.WarnPolicyHeld {
			add("%s", w.Message)
		}
	}

	// 1b. the claims extension resize-claims grows (the extended module's), in the order it does
	if p.Timeline != nil {
		var resized []string
		for _, st := range p.Timeline.Steps {
			for _, a := range st.Actions {
				if a.Kind == "PersistentVolumeClaim" && a.Verb == "patch" && a.Error == "" {
					resized = append(resized, a.Name+" to "+strings.TrimPrefix(a.Detail, "storage "))
				}
			}
		}
		if len(resized) > 0 {
			add("%s grows claims one ordinal at a time, each once the one before is expanded: %s", abi.AnnotationResizeClaims, listNames(resized, 8))
		}
	}

	// 1c. why pods are recreated rather than updated in place (extension in-place-update), in the module's words
	for _, r := range p.Recreations() {
		add("not in place, so recreated: %s", replay.RecreationText(r, p.RevisionName))
	}

	// 2. the partition
	if old != nil && rollingUpdate && partition > 0 && len(p.HeldBack) > 0 && (templateChanged || old.Status.CurrentRevision != old.Status.UpdateRevision) {
		held := append([]string(nil), p.HeldBack...)
		ordinal.Sort(held)
		at := p.From.Name
		if at == "" {
			at = "their current revision"
		}
		add("partition %d holds %s at %s", partition, compactRange(held, name), at)
	}

	// 3. pods that are not Ready under OrderedReady: nothing happens past them
	podChanges := old == nil || replicas != oldReplicas || (templateChanged && rollingUpdate && (replaced > 0 || p.Outcome.Result == "stuck"))
	if orderedReady && podChanges {
		var notReady []string
		members := kube.MembersOf(sel.Set) // a pod with the set's labels that is not its own holds nothing up
		for _, pod := range sel.Pods {
			if _, ok := members.Pod(pod); ok && pod.DeletionTimestamp == nil && !(kube.PodRunningAndReady(pod)) {
				notReady = append(notReady, pod.Name)
			}
		}
		ordinal.Sort(notReady)
		if len(notReady) > 0 && p.Outcome.Result != "complete" && p.Outcome.Result != "partitioned" {
			first := notReady[0]
			verb := "is"
			if len(notReady) > 1 {
				verb = "are"
			}
			var msg string
			if len(p.Steps) == 0 {
				msg = fmt.Sprintf("%s %s not Ready: with OrderedReady this rollout will not start until %s Ready (fix or delete the pod; reverting the template does not help)",
					listNames(notReady, 4), verb, pronounIs(len(notReady)))
			} else {
				msg = fmt.Sprintf("%s %s not Ready: with OrderedReady this rollout will stop at %s", listNames(notReady, 4), verb, first)
			}
			add("%s", msg)
			s.Blocked = msg
		}
	}

	// 4. PVCs deleted
	deleted := map[string]bool{}
	for _, st := range p.Steps {
		for _, w := range st.World {
			if w.Source == "gc" && w.Reason == replay.ReasonDeleted && w.Kind == "PersistentVolumeClaim" {
				deleted[w.Name] = true
			}
		}
	}
	if cur.Spec.PersistentVolumeClaimRetentionPolicy != nil && old != nil && replicas < oldReplicas {
		policy := cur.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled
		var beyond []string
		for _, c := range sel.Claims {
			if o, ok := claimOrdinal(c.Name, cur); ok && oldSlots.Contains(int64(o)) && !slots.Contains(int64(o)) {
				beyond = append(beyond, c.Name)
			}
		}
		ordinal.Sort(beyond)
		if policy == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
			for _, c := range beyond {
				deleted[c] = true
			}
		} else if len(beyond) > 0 {
			add("whenScaled=Retain: the PVCs %s are kept (with their data) and reused if the set scales up again", listNames(beyond, 8))
		}
	}
	for c := range deleted {
		s.DeletedClaims = append(s.DeletedClaims, c)
	}
	ordinal.Sort(s.DeletedClaims)
	if len(s.DeletedClaims) > 0 {
		add("whenScaled=Delete: %s deletes PVCs %s and their data", s.Change, listNames(s.DeletedClaims, 8))
	}

	// 5. the engine's other traps, and an unfinished rollout
	for _, w := range p.Warnings {
		switch w.Code {
		case replay.WarnOrderedReadyBlocked, replay.WarnClaimsDeleted, replay.WarnUnfinished, replay.WarnOnDelete:
			continue // said above in the webhook's own words
		case replay.WarnPolicyFailed, replay.WarnPolicyHeld:
			continue // said above
		}
		add("%s", w.Message)
	}
	if (p.Outcome.Result == "stuck" || p.Outcome.Result == "limit") && s.Blocked == "" {
		add("the rollout does not finish: %s", p.Outcome.Summary)
	}
	if p.Estimate != nil {
		add("preview cut short (%s): estimate for the rest: %s", p.Timeline.StopReason, p.Estimate)
	}
	return s
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

package statefulset

import (
	"strconv"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Extensions beyond upstream, compiled into the extended module only (extendedBuild): each is off unless
// the set opts in with an annotation on the set (so apps/v1 and the CRD kind both carry it), and the
// faithful module has none. A set without the annotations gets upstream's plan from either module.

// extension is one entry of describe's "extensions": what a host shows and documents.
type extension struct {
	name, annotation, upstreamIssue string
}

// extensions lists the extended module's extensions, in describe order.
var extensions = [...]extension{
	{"pause", annotationPaused, "kubernetes/kubernetes#49890"},
	{"recover-stuck", annotationRecoverStuckAfter, "kubernetes/kubernetes#67250"},
	{"reserve-ordinals", annotationReserveOrdinals, "kubernetes/kubernetes#83224"},
	{"resize-claims", annotationResizeClaims, "kubernetes/kubernetes#68737"},
	{"progress-deadline", annotationProgressDeadline, "kubernetes/kubernetes#79606"},
	{"in-place-update", annotationPodUpdatePolicy, "kubernetes/kubernetes#122926"},
}

// The extensions' annotations.
const (
	annotationPaused            = "ordinal.dev/paused"              // "true": extension pause
	annotationRecoverStuckAfter = "ordinal.dev/recover-stuck-after" // a Go duration ("10m"): extension recover-stuck
	annotationReserveOrdinals   = "ordinal.dev/reserve-ordinals"    // "1,4-6": extension reserve-ordinals
)

// ordinalSlots is the set's ordinals by replica slot: upstream's (start, start+1, ...), or with the
// extension reserve-ordinals the ordinals from start that are not reserved, replicas of them. A pod at
// any other ordinal (reserved ones included) is condemned as upstream condemns one past the end: deleted,
// highest first, its claims retained or deleted as spec.persistentVolumeClaimRetentionPolicy.whenScaled
// says. An invalid value holds every pod write (podsHeld) with a warning rather than fall back to
// creating the reserved pods.
func (s *syncer) ordinalSlots() ordinal.Slots {
	start, replicas := s.set.startOrdinal(), int64(s.set.Replicas)
	v, ok := s.set.Meta.Annotations[annotationReserveOrdinals]
	if !extendedBuild || !ok {
		return ordinal.NewSlots(start, replicas, nil)
	}
	slots, err := ordinal.ReservedSlots(start, replicas, v)
	if err != nil {
		s.podsHeld = true
		s.event(eventWarning, "InvalidAnnotation", annotationReserveOrdinals+": "+strconv.Quote(v)+": "+err.Error()+
			`: no pod is created, deleted or updated until it is fixed (e.g. "1,4-6")`)
		return ordinal.NewSlots(start, replicas, nil)
	}
	return slots
}

// enumAnnotation is the value of an extension's annotation that takes one of a list of values (paused,
// resize-claims, on-progress-deadline, pod-update-policy); ok is false when it is absent or empty. An empty
// value (a Helm value left unset renders as "") asks for the default, as no annotation does: holding pods
// or warning, as a misspelt value does, would punish a set that asked for nothing.
func (s *syncer) enumAnnotation(key string) (v string, ok bool) {
	v = s.set.Meta.Annotations[key]
	return v, v != ""
}

// paused says whether the set opted into the pause extension: no pod is created, deleted, updated,
// adopted or released and no claim touched; revisions and the status stay current (as upstream does
// for a set being deleted).
func (s *syncer) paused() bool {
	return extendedBuild && s.set.Meta.Annotations[annotationPaused] == "true"
}

// checkPaused holds every pod write (podsHeld) with a warning when the pause annotation is neither "true"
// nor "false" ("True", "yes", "1", " true"): whoever wrote it most likely meant to pause, so a spelling
// must not let a rollout run, as an invalid reserve-ordinals holds rather than fall back. Values are
// exact, as the other extensions' are.
func (s *syncer) checkPaused() {
	v, ok := s.enumAnnotation(annotationPaused)
	if !extendedBuild || !ok || v == "true" || v == "false" {
		return
	}
	s.podsHeld = true
	s.event(eventWarning, "InvalidAnnotation", annotationPaused+": "+strconv.Quote(v)+` is neither "true" nor "false"`+
		`: no pod is created, deleted or updated until it is fixed`)
}

// pauseEvent records, while a paused set has work pending, what the pause holds back.
func (s *syncer) pauseEvent(st *setStatus) {
	r := s.set.Replicas
	if st.Replicas == r && st.UpdatedReplicas == r {
		return // nothing held back: no event every sync
	}
	s.event(eventNormal, "Paused", "StatefulSet "+s.set.Meta.Name+" is paused ("+annotationPaused+`: "true"`+
		"): no pod is created, deleted or updated; "+strconv.Itoa(int(st.Replicas))+" of "+strconv.Itoa(int(r))+
		" replicas exist, "+strconv.Itoa(int(st.UpdatedReplicas))+" at update revision "+st.UpdateRevision)
}

// appendExtensions appends describe's "extensions" member (the extended module only).
func appendExtensions(b []byte) []byte {
	if !extendedBuild {
		return b
	}
	b = append(b, `,"extensions":[`...)
	for i, e := range extensions {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsonv.AppendString(b, e.name)
		b = append(b, `,"annotation":`...)
		b = jsonv.AppendString(b, e.annotation)
		b = append(b, `,"upstreamIssue":`...)
		b = jsonv.AppendString(b, e.upstreamIssue)
		b = append(b, '}')
	}
	return append(b, ']')
}

// recoverStuckAfter is the set's stuck-rollout recovery delay (extension recover-stuck; 0: off). A value
// that is not a positive Go duration turns it off, with a warning.
func (s *syncer) recoverStuckAfter(update string) time.Duration {
	if !extendedBuild {
		return 0
	}
	v, ok := s.set.Meta.Annotations[annotationRecoverStuckAfter]
	if !ok {
		return s.rollbackRecoversAfter(update) // extension progress-deadline's Rollback recovers after the deadline
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		s.event(eventWarning, "InvalidAnnotation", annotationRecoverStuckAfter+": "+strconv.Quote(v)+
			" is not a positive duration of at most 2562047h (e.g. 10m): stuck-rollout recovery is off")
		return 0
	}
	return d
}

// recoverStuck is the forced-rollback trap's way out (kubernetes/kubernetes#67250): a pod at a revision
// other than the update revision whose Ready condition has not been True (False or Unknown) for the set's
// recover-stuck-after holds every
// rollout back (an ordered rollout waits for it to become Ready, a rolling update for every pod to be
// healthy), and upstream never replaces it. The highest such ordinal is deleted, so the next sync recreates
// it at the revision its ordinal gets (the update revision, but for a partition); true stops the pass
// there, as upstream does after deleting a failed pod. A pod not stuck for long enough yet sets the
// requeue for when it will be. Pods without a Ready condition, terminating or being deleted are left.
func (s *syncer) recoverStuck(replicas *replicaSlots, update *revision) bool {
	if s.set.StrategyType != strategyRolling {
		return false // OnDelete leaves replacing pods to the user; the trap is a rolling update's
	}
	after := s.recoverStuckAfter(update.Meta.Name)
	if after == 0 {
		return false
	}
	for i := len(replicas.pods) - 1; i >= 0; i-- {
		p := replicas.pods[i]
		if p == nil || !p.isCreated() || p.isTerminating() || p.Ready || p.ReadySince.IsZero() ||
			p.revisionLabel() == update.Meta.Name {
			continue
		}
		stuckFor := s.now.Sub(p.ReadySince) // saturates (time.Time.Sub)
		if stuckFor < after {
			if stuckFor < 0 {
				stuckFor = 0 // a transition time after now: not stuck yet (and no overflow below)
			}
			s.requeueWithin(after - stuckFor)
			continue
		}
		over := annotationRecoverStuckAfter
		if _, ok := s.set.Meta.Annotations[annotationRecoverStuckAfter]; !ok {
			over = annotationOnProgressDeadline + ": " + onDeadlineRollback + "'s " + annotationProgressDeadline
		}
		s.event(eventNormal, "RecoveredStuckPod", "Deleting Pod "+p.Meta.Name+" of StatefulSet "+s.set.Meta.Name+
			" at revision "+p.revisionLabel()+": not Ready for "+stuckFor.Round(time.Second).String()+", over "+
			over+" "+after.String()+", while the update revision is "+update.Meta.Name+
			"; it is recreated at the revision of its ordinal")
		_ = s.deletePod(p)
		return true
	}
	return false
}

// requeueWithin asks for a sync within d at the latest (the plan's requeueAfterSeconds is the earliest
// of the asks).
func (s *syncer) requeueWithin(d time.Duration) {
	if s.requeueExt == 0 || d < s.requeueExt {
		s.requeueExt = d
	}
}

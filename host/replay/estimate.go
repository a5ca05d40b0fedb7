package replay

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Estimate is the rest of a rollout that a preview's Budget cut short, extrapolated from the part that
// was replayed. It is an estimate, and says so: the replayed steps are exact, the rest is arithmetic.
type Estimate struct {
	// Basis says what the figures are computed from.
	Basis string `json:"basis"`
	// RemainingPods still to be created, updated or removed for the rollout to be over.
	RemainingPods int `json:"remainingPods"`
	// RemainingBatches at the batch size seen so far (0 when no batch was seen).
	RemainingBatches int `json:"remainingBatches"`
	// RemainingDuration at the pace seen so far or, when no pod finished within the budget, at the
	// kubelet model's pace (Basis says which); nil only when nothing remains.
	RemainingDuration *Duration `json:"remainingDuration,omitempty"`
	// RemainingDurationSeconds is RemainingDuration in seconds (setRemaining sets both).
	RemainingDurationSeconds *float64 `json:"remainingDurationSeconds,omitempty"`
}

func (e *Estimate) setRemaining(d Duration) {
	s := d.Seconds()
	e.RemainingDuration, e.RemainingDurationSeconds = &d, &s
}

func (e *Estimate) String() string {
	s := fmt.Sprintf("about %d more pods", e.RemainingPods)
	if e.RemainingBatches > 0 {
		s += fmt.Sprintf(" in about %d more batches", e.RemainingBatches)
	}
	if e.RemainingDuration != nil {
		s += fmt.Sprintf(", about %s more", *e.RemainingDuration)
	}
	return s
}

// pendingPods counts the pods a world still needs changed for the set spec to be rolled out: ordinals in
// [start+partition, start+replicas) not Running and Ready at the update revision, plus pods beyond the
// replicas still present.
func pendingPods(world Obj, spec Obj, update string) int {
	name := jsonobj.GetStr(world, "statefulSet.metadata.name")
	members := kube.MembersOfJSON(jsonobj.GetObj(world, "statefulSet"))
	replicas, _ := jsonobj.GetInt(spec, "replicas")
	start, _ := jsonobj.GetInt(spec, "ordinals.start")
	partition, _ := jsonobj.GetInt(spec, "updateStrategy.rollingUpdate.partition")
	if jsonobj.GetStr(spec, "updateStrategy.type") == "OnDelete" {
		partition = replicas // the controller replaces nothing itself
	}
	done := map[int64]bool{}
	pending := 0
	for _, p := range jsonobj.GetArr(world, "pods") {
		po, ok := p.(Obj)
		if !ok {
			continue
		}
		o, ok := members.PodJSON(po)
		if !ok || jsonobj.GetStr(po, "metadata.name") != ordinal.Name(name, int64(o)) {
			continue
		}
		ord := int64(o)
		switch {
		case ord < start || ord >= start+replicas:
			pending++ // to be removed
		case jsonobj.Get(po, "metadata.deletionTimestamp") == nil && kube.PodReadyJSON(po) &&
			(ord < start+partition || jsonobj.GetStr(po, "metadata.labels.controller-revision-hash") == update):
			done[ord] = true
		}
	}
	for o := start; o < start+replicas; o++ {
		if !done[o] {
			pending++
		}
	}
	return pending
}

// estimateRest extrapolates a partial preview: the pods still pending at the end, the batches at the size
// seen, the time at the pace seen (pods finished per virtual second).
func (p *Preview) estimateRest(before, final Obj) *Estimate {
	fs := jsonobj.GetObj(final, "statefulSet")
	spec := jsonobj.GetObj(fs, "spec")
	update := jsonobj.GetStr(fs, "status.updateRevision")
	atStart := pendingPods(before, spec, update)
	left := pendingPods(final, spec, update)
	e := &Estimate{RemainingPods: left}
	elapsed := time.Duration(p.Outcome.Duration)
	e.Basis = fmt.Sprintf("extrapolated from the first %d syncs, +%s of the rollout, in which %d of %d pods finished",
		p.Outcome.Steps, p.Outcome.Duration, max(atStart-left, 0), atStart)
	taken, n := 0, len(p.Batches)
	for _, b := range p.Batches {
		taken += len(b)
	}
	for _, b := range p.Updates { // extension in-place-update: pods updated in place count as the batches they make
		inPlace := 0
		for _, u := range b {
			if u.InPlace {
				inPlace++
			}
		}
		if taken += inPlace; inPlace == len(b) {
			n++ // a batch no pod of which was taken down (else Batches has it)
		}
	}
	if n > 0 && left > 0 {
		size := (taken + n - 1) / n
		e.RemainingBatches = (left + size - 1) / size
	}
	if finished := atStart - left; finished > 0 && elapsed > 0 {
		d := Duration(time.Duration(float64(elapsed) * float64(left) / float64(finished)).Round(time.Second))
		e.setRemaining(d)
	} else if left > 0 {
		// Nothing finished yet (a large set, a tight deadline): the pace is the kubelet model's, one
		// batch after another, each as long as a pod takes to go and come back.
		replace := jsonobj.GetStr(fs, "status.currentRevision") != update
		batches := e.RemainingBatches
		if batches == 0 {
			size := p.batchSize(spec, replace, left)
			batches = (left + size - 1) / size
			e.RemainingBatches = batches
		}
		cycle, how := p.kubelet.PodCycle(replace)
		if m, _ := jsonobj.GetInt(spec, "minReadySeconds"); m > 0 {
			cycle += time.Duration(m) * time.Second
			how += fmt.Sprintf(" + minReadySeconds %ds", m)
		}
		d := Duration(time.Duration(batches) * cycle)
		e.setRemaining(d)
		e.Basis += fmt.Sprintf("; no pod finished yet, so the duration is %d batches at the kubelet model's pace (%s = %s each)",
			batches, how, Duration(cycle))
	}
	return e
}

// batchSize is how many pods the controller takes on at once when the replay saw no batch: replacements
// go maxUnavailable at a time (one with the gate off), creations one at a time under OrderedReady and all
// at once under Parallel.
func (p *Preview) batchSize(spec Obj, replace bool, left int) int {
	if !replace {
		if jsonobj.GetStr(spec, "podManagementPolicy") == "Parallel" {
			return max(left, 1)
		}
		return 1
	}
	if p.featureOff("MaxUnavailableStatefulSet") {
		return 1
	}
	replicas, _ := jsonobj.GetInt(spec, "replicas")
	return maxUnavailableOf(jsonobj.Get(spec, "updateStrategy.rollingUpdate.maxUnavailable"), int(replicas))
}

// maxUnavailableOf resolves a maxUnavailable held as generic JSON (an integer or a percentage string) with
// kube.MaxUnavailable; 1 when unset or not either.
func maxUnavailableOf(v any, replicas int) int {
	var is intstr.IntOrString
	switch x := v.(type) {
	case string:
		is = intstr.FromString(x)
	default:
		n, ok := jsonobj.AsInt(v)
		if !ok {
			return 1
		}
		is = intstr.FromInt32(int32(n))
	}
	return kube.MaxUnavailable(&is, int32(replicas))
}

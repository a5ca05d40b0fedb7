package rollout

import (
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Status is a set's rollout as the module sees it at one moment.
type Status struct {
	Namespace          string `json:"namespace"`
	Name               string `json:"name"`
	Generation         int64  `json:"generation"`
	ObservedGeneration int64  `json:"observedGeneration"`
	Replicas           int32  `json:"replicas"`
	ReadyReplicas      int32  `json:"readyReplicas"`
	CurrentReplicas    int32  `json:"currentReplicas"`
	UpdatedReplicas    int32  `json:"updatedReplicas"`
	AvailableReplicas  int32  `json:"availableReplicas"`
	// Settings are the spec fields that decide how the rollout goes.
	Settings        Settings   `json:"settings"`
	CurrentRevision string     `json:"currentRevision"`
	UpdateRevision  string     `json:"updateRevision"`
	Revisions       []Revision `json:"revisions"`
	Pods            []Pod      `json:"pods"`
	Next            Next       `json:"next"`
	// State is complete, progressing (the next sync writes to pods), waiting, partitioned, or failed
	// (the module reported an error).
	State string `json:"state"`
	// Reasons say why, when the state is not progressing: what the controller waits for.
	Reasons []string `json:"reasons"`
	// Conditions are the set's status conditions as the API server has them (extension progress-deadline's
	// Progressing and Available, the Recreate strategy's Progressing, a policy's PolicyHold).
	Conditions []Condition `json:"conditions"`
	// OtherController is the field manager that last wrote the set's status when it is not Ordinal's controller
	// while the set's annotations ask something of the controller: if it runs the set, it ignores them.
	OtherController string `json:"otherController,omitempty"`
	// ApplyPreview is the webhook's last recorded preview of the set's edits (PreviewedAtApply), when known.
	ApplyPreview *ApplyPreview `json:"applyPreview,omitempty"`
}

// Condition is one of the set's status conditions.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// States.
const (
	StateComplete    = "complete"
	StateProgressing = "progressing"
	StateWaiting     = "waiting"
	StatePartitioned = "partitioned"
	StateFailed      = "failed"
	StateNotFound    = "notFound" // the set does not exist (a watch waits for it)
)

// NotFound is the status of a set that does not exist.
func NotFound(namespace, name string) *Status {
	return &Status{Namespace: namespace, Name: name, State: StateNotFound, Revisions: []Revision{}, Pods: []Pod{},
		Next: Next{Writes: []Write{}}, Reasons: []string{"the StatefulSet does not exist"}}
}

// Revision is one of the set's ControllerRevisions.
type Revision struct {
	RevisionRef      // its letter (from its number), name and number
	Pods        int  `json:"pods"`
	Current     bool `json:"current,omitempty"`
	Update      bool `json:"update,omitempty"`
}

// Pod is one pod of the grid.
type Pod struct {
	Name     string `json:"name"`
	Ordinal  int    `json:"ordinal"`
	Revision string `json:"revision"` // the revision's letter (RevisionLetter); "?" for a revision the set does not have
	State    string `json:"state"`    // Ready, Available, Running, Pending, Failed, Succeeded, Unknown
	// Reason is why a pod that is not Ready does not run, as kubectl get pods says it: the reason a container
	// waits (ImagePullBackOff, CrashLoopBackOff, CreateContainerConfigError, ...), init containers first.
	Reason      string `json:"reason,omitempty"`
	Terminating bool   `json:"terminating,omitempty"`
	// InPlace is the pod's in-place update while it is under way (extension in-place-update, on a module that
	// has it: Reading.InPlace): the pod was moved to its revision in place and does not run it yet, or runs it
	// and is not Ready since its containers restarted.
	InPlace *InPlaceUpdate `json:"inPlace,omitempty"`
}

// InPlaceUpdate is a pod mid in-place update, as the module reads it: kube.InPlace, which is the module's own
// rule (internal/inplaceready), so the state shown and the module's wait agree.
type InPlaceUpdate struct {
	// Waiting is what for: a container's status to report its spec's "image" or "resources" (Resource names
	// which), a container's "status", the pod's "resize", or "ready": it runs its spec, not Ready since
	// its containers restarted.
	Waiting   string `json:"waiting"`
	Container string `json:"container,omitempty"`
	Resource  string `json:"resource,omitempty"`
	// Has is what the container's status reports, Want what its spec asks.
	Has  string `json:"has,omitempty"`
	Want string `json:"want,omitempty"`
	// RestartedAt is the last start of its containers (RFC 3339), once it runs its spec.
	RestartedAt string `json:"restartedAt,omitempty"`
	// OtherTag: the status names the spec's repository by a tag no revision of the set gives the container
	// (app:latest for app:2): the runtime may report the spec's image by another of its tags, which the pod
	// cannot tell from a container not restarted yet (inplaceready.OtherTag), so the pod may wait for good.
	OtherTag bool `json:"otherTag,omitempty"`
}

// InPlaceReady is InPlaceUpdate.Waiting for a pod that runs its spec and is not Ready yet.
const InPlaceReady = "ready"

// Reading is how the module that plans the set reads its pods, where an extension of it changes that.
type Reading struct {
	// InPlace: the module has extension in-place-update (module.HasExtension with abi.AnnotationPodUpdatePolicy),
	// so a pod it updated in place is read by its container statuses (kube.InPlace), as the module reads it.
	InPlace bool
	// OtherController is the field manager that last wrote the set's status when it is not Ordinal's while the
	// set's annotations ask something of the controller (annotation.OtherController): the status says first
	// that the next sync shown is Ordinal's (OtherControllerSays).
	OtherController string
}

// OtherControllerSays is what a preview or a status says of a controller m other than Ordinal's that last wrote
// the status of the set name (annotation.OtherController): shown is what the reader sees ("this preview shows",
// "the next sync shown here does"). It is conditional: a set that settled under kube-controller-manager keeps it as
// its status writer after Ordinal's controller takes the set over, until a change makes Ordinal write the status.
func OtherControllerSays(m, name, shown string) string {
	return fmt.Sprintf("%q last wrote this set's status, not Ordinal: if it runs the set, it ignores the ordinal.dev/ annotations "+
		"and does what upstream does, not what %s; kubectl ordinal migrate statefulset/%s --to ordinal hands the set to Ordinal", m, shown, name)
}

// Next is what the next sync writes.
type Next struct {
	Writes []Write `json:"writes"`
	// UpdateRevision and CurrentRevision are the revisions the next sync's status names, when they differ
	// from the set's status (an edit the controller has not synced yet).
	UpdateRevision      string   `json:"updateRevision,omitempty"`
	CurrentRevision     string   `json:"currentRevision,omitempty"`
	RequeueAfterSeconds float64  `json:"requeueAfterSeconds,omitempty"`
	Events              []string `json:"events,omitempty"`
	Error               string   `json:"error,omitempty"`
}

// Write is one write of the plan.
type Write struct {
	Verb  string `json:"verb"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Error string `json:"expectedError,omitempty"` // the API server will refuse it, as the snapshot shows
	// HeldBy: a policy of the set holds it (Status.Held): the controller will not send it.
	HeldBy *HeldBy `json:"heldBy,omitempty"`
}

// Of is the status of the snapshot's set given the module's plan for that snapshot, the module reading pods
// as upstream does.
func Of(snapshot []byte, plan *abi.Plan) (*Status, error) { return OfWith(snapshot, plan, Reading{}) }

// OfWith is Of for a module that reads pods as r says.
func OfWith(snapshot []byte, plan *abi.Plan, r Reading) (*Status, error) {
	w, err := decode(snapshot)
	if err != nil {
		return nil, err
	}
	set := w.set
	st := &Status{Namespace: set.Namespace, Name: set.Name, Generation: set.Generation,
		ObservedGeneration: set.Status.ObservedGeneration, Replicas: replicas(set),
		ReadyReplicas: set.Status.ReadyReplicas, CurrentReplicas: set.Status.CurrentReplicas,
		UpdatedReplicas: set.Status.UpdatedReplicas, AvailableReplicas: set.Status.AvailableReplicas,
		Settings: SettingsOf(set, w.features), CurrentRevision: set.Status.CurrentRevision, UpdateRevision: set.Status.UpdateRevision,
		Revisions: []Revision{}, Pods: []Pod{}, Reasons: []string{}, Next: Next{Writes: []Write{}}, Conditions: []Condition{}}
	for _, c := range set.Status.Conditions {
		t := ""
		if !c.LastTransitionTime.IsZero() {
			t = c.LastTransitionTime.UTC().Format(time.RFC3339)
		}
		st.Conditions = append(st.Conditions, Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message, LastTransitionTime: t})
	}
	// The set's status is shown as the API server has it (a status nobody updates says no controller
	// acts on the set); the revisions the module computes, when they differ, are the next sync's.
	update := st.UpdateRevision
	conds := set.Status.Conditions
	if ns := plannedStatus(plan); ns != nil {
		conds = ns.Conditions
		if ns.UpdateRevision != st.UpdateRevision {
			st.Next.UpdateRevision = ns.UpdateRevision
		}
		if ns.CurrentRevision != st.CurrentRevision {
			st.Next.CurrentRevision = ns.CurrentRevision
		}
		if ns.UpdateRevision != "" {
			update = ns.UpdateRevision
		}
	}
	labels := w.labels()
	counts := map[string]int{}
	for _, p := range w.pods {
		rev := p.Labels[appsv1.ControllerRevisionHashLabelKey]
		counts[rev]++
		o, _ := ordinal.Ordinal(p.Name)
		l := labels[rev]
		if l == "" {
			l = UnknownRevision
		}
		pod := Pod{Name: p.Name, Ordinal: o, Revision: l, State: podState(p, set.Spec.MinReadySeconds, w), Terminating: p.DeletionTimestamp != nil}
		if pod.State != "Ready" && pod.State != "Available" {
			pod.Reason = waitingReason(p)
		}
		if r.InPlace && p.DeletionTimestamp == nil {
			inPlaceState(&pod, p, set.Spec.MinReadySeconds, w)
		}
		st.Pods = append(st.Pods, pod)
	}
	for _, rv := range w.revisions {
		st.Revisions = append(st.Revisions, Revision{RevisionRef: RevisionRef{Label: labels[rv.Name], Name: rv.Name, Number: rv.Revision}, Pods: counts[rv.Name],
			Current: rv.Name == st.CurrentRevision, Update: rv.Name == update})
	}
	if plan != nil {
		for _, a := range plan.Actions {
			st.Next.Writes = append(st.Next.Writes, Write{Verb: a.Verb, Kind: a.Kind, Name: a.Name, Error: a.Error})
		}
		st.Next.RequeueAfterSeconds = plan.RequeueAfterSeconds
		for _, e := range plan.Events {
			st.Next.Events = append(st.Next.Events, e.Type+" "+e.Reason+": "+e.Message)
		}
		if plan.Error != nil {
			st.Next.Error = plan.Error.Code + ": " + plan.Error.Message
		}
	}
	st.State, st.Reasons = explain(w, st, labels, update, inPlaceBlocked(conds), pausedBy(w.set, plan, conds, update))
	if m := r.OtherController; m != "" {
		st.OtherController = m
		st.Reasons = append([]string{OtherControllerSays(m, set.Name, "the next sync shown here does")}, st.Reasons...)
	}
	return st, nil
}

// inPlaceBlocked is the message of the set's InPlaceUpdateBlocked condition when it is True (the one the
// next sync writes, else the set's): pod-update-policy InPlaceOnly holds the rollout at a pod.
func inPlaceBlocked(conds []appsv1.StatefulSetCondition) string {
	for _, c := range conds {
		if abi.InPlaceOnlyHolds(string(c.Type), string(c.Status)) {
			return c.Message
		}
	}
	return ""
}

// plannedStatus is the status the plan's updateStatus writes, if it writes one.
func plannedStatus(plan *abi.Plan) *appsv1.StatefulSetStatus {
	if plan == nil {
		return nil
	}
	for _, a := range plan.Actions {
		if a.Verb == abi.VerbUpdateStatus && a.Error == "" {
			var o struct {
				Status *appsv1.StatefulSetStatus `json:"status"`
			}
			if json.Unmarshal(a.Object, &o) == nil && o.Status != nil {
				return o.Status
			}
		}
	}
	return nil
}

func replicas(set *appsv1.StatefulSet) int32 {
	if set.Spec.Replicas == nil {
		return 1
	}
	return *set.Spec.Replicas
}

// maxUnavailable is the pods the set's maxUnavailable comes to (Settings), 1 with the gate off or under OnDelete.
func maxUnavailable(set *appsv1.StatefulSet, w *world) int {
	if r := SettingsOf(set, w.features).RollingUpdate; r != nil {
		return r.MaxUnavailablePods
	}
	return 1
}

func partition(set *appsv1.StatefulSet) int32 {
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		return *ru.Partition
	}
	return 0
}

func start(set *appsv1.StatefulSet) int32 {
	if set.Spec.Ordinals != nil {
		return set.Spec.Ordinals.Start
	}
	return 0
}

// podState is one word: Available (Ready for minReadySeconds, when the set has them), Ready, Running
// (not Ready), or the pod's phase.
func podState(p *corev1.Pod, minReady int32, w *world) string {
	switch {
	case kube.PodRunningAndReady(p) && minReady > 0 && kube.PodAvailable(p, minReady, w.now):
		return "Available"
	case kube.PodRunningAndReady(p):
		return "Ready"
	case p.Status.Phase == "":
		return "Pending"
	}
	return string(p.Status.Phase)
}

// waitingReason is the reason the pod's first waiting container gives (init containers first), as kubectl's
// STATUS column shows it; "" when none waits with a reason, or only for its start (ContainerCreating,
// PodInitializing: nothing is wrong yet).
func waitingReason(p *corev1.Pod) string {
	for _, cs := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, c := range cs {
			if w := c.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
				return w.Reason
			}
		}
	}
	return ""
}

// inPlaceState reads a pod extension in-place-update moved to its revision as the module does (kube.InPlace):
// not Ready while its statuses do not report its spec, however its Ready condition reads; Ready only since its
// containers restarted, so Available counts minReadySeconds from the restart. A pod mid-update says what it
// waits for (InPlace).
func inPlaceState(pod *Pod, p *corev1.Pod, minReady int32, w *world) {
	v, ok := kube.InPlace(p)
	if !ok {
		return
	}
	ready := kube.PodRunningAndReady(p)
	switch {
	case v.Pending:
		if ready {
			pod.State = string(p.Status.Phase) // the module reads it not Ready: Running
		}
		pod.InPlace = &InPlaceUpdate{Waiting: v.Waiting, Container: v.Container, Resource: v.Resource, Has: v.Has, Want: v.Want}
		pod.InPlace.OtherTag = kube.OtherTagWait(v, w.revisionData())
	case !ready:
		pod.InPlace = &InPlaceUpdate{Waiting: InPlaceReady}
		if !v.LastStart.IsZero() {
			pod.InPlace.RestartedAt = v.LastStart.UTC().Format(time.RFC3339)
		}
	case minReady > 0:
		pod.State = "Ready"
		if kube.ReadyLongEnough(kube.ReadySince(p, v.LastStart), minReady, w.now) {
			pod.State = "Available"
		}
	}
}

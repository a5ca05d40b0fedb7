// Package abi is the host-side description of Ordinal's wasm ABI v1: the JSON a
// host sends to the reconcile module (Snapshot), the JSON it gets back (Plan,
// Describe), and JSON Schemas for all three. README.md in this directory is the
// normative document; these types mirror it.
//
// Kubernetes objects travel as json.RawMessage: the ABI carries Kubernetes JSON
// exactly as the API server returns it, not a new object model.
package abi

import (
	"encoding/json"

	"github.com/ordinal-dev/ordinal/abi/inplace"
)

// Version is the ABI version this package describes. A host must refuse a module
// whose describe output reports a different "abi", and a module answers a
// snapshot with another "abi" with an UnsupportedABI error plan.
const Version = 1

// Snapshot is the reconcile input: one StatefulSet and the objects it owns or may
// adopt, as the controller's informers would see them.
type Snapshot struct {
	ABI         int               `json:"abi"`
	Now         string            `json:"now,omitempty"` // RFC 3339; the guest never reads a clock
	StatefulSet json.RawMessage   `json:"statefulSet"`
	Pods        []json.RawMessage `json:"pods,omitempty"`
	Revisions   []json.RawMessage `json:"revisions,omitempty"` // ControllerRevisions
	Claims      []json.RawMessage `json:"claims,omitempty"`    // PersistentVolumeClaims
	Features    map[string]bool   `json:"features,omitempty"`  // overrides of gate defaults
	// EventActions asks the module for Event.Action (additive; modules that do not know it ignore it).
	EventActions bool `json:"eventActions,omitempty"`
	// WriteFailures are writes of the plan for this snapshot that the API server refused unexpectedly:
	// the module plans the sync again with those answers in place (only where describe says writeFailures).
	WriteFailures []WriteFailure `json:"writeFailures,omitempty"`
}

// WriteFailure is one write the API server refused where the plan did not predict it (README section 5,
// "Writes that failed").
type WriteFailure struct {
	// Action is the index of the refused write in the plan the module returned for the same snapshot with
	// the write failures before this one.
	Action int `json:"action"`
	// Reason is the API server's metav1.StatusReason ("Conflict", "NotFound", "Forbidden", ...; empty when
	// the answer was not an API status, e.g. a timeout).
	Reason string `json:"reason,omitempty"`
	// Message is the error's text, as upstream's err.Error() prints it (it reaches events and the sync error).
	Message string `json:"message"`
}

// MaxWriteFailures is how many write failures one snapshot may carry (each costs the module a pass).
const MaxWriteFailures = 64

// Plan is the reconcile output: the writes upstream's sync would issue, in order.
type Plan struct {
	ABI                 int      `json:"abi"`
	Actions             []Action `json:"actions"`
	RequeueAfterSeconds float64  `json:"requeueAfterSeconds"`
	Events              []Event  `json:"events"`
	Error               *Error   `json:"error,omitempty"`
}

// Action is one API write. Object is set for create, update and updateStatus
// (for updateStatus it is {"status":{...}}); PatchType and Patch for patch.
// Error is set only when the API server, as the snapshot shows it, rejects the
// write (for example AlreadyExists): upstream still issues it.
type Action struct {
	Verb      string          `json:"verb"`
	Kind      string          `json:"kind"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Object    json.RawMessage `json:"object,omitempty"`
	PatchType string          `json:"patchType,omitempty"`
	Patch     json.RawMessage `json:"patch,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// Event is a Kubernetes event the controller would record for the StatefulSet.
type Event struct {
	Type    string `json:"type"` // EventNormal or EventWarning
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Action is the index in Plan.Actions of the write this event reports, when the snapshot asked for it
	// (Snapshot.EventActions) and the event reports one write.
	Action *int `json:"action,omitempty"`
}

// Error is the plan-level error. Path, when present, is a dotted/indexed JSON
// path into the snapshot, e.g. "statefulSet.spec.replicas" or "pods[3].metadata.name".
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

// Error makes a plan error usable as a Go error.
func (e *Error) Error() string {
	if e.Path != "" {
		return e.Code + " at " + e.Path + ": " + e.Message
	}
	return e.Code + ": " + e.Message
}

// Describe is the module's self-description, read once by the host at load.
type Describe struct {
	ABI               int             `json:"abi"`
	Module            string          `json:"module"`
	ModuleVersion     string          `json:"moduleVersion"`
	KubernetesVersion string          `json:"kubernetesVersion"`
	Features          map[string]bool `json:"features"` // gate name -> default
	// CustomSetKinds: the module accepts a set of another API group with apps/v1's spec and status
	// (kind StatefulSet) and names it in the ownerReferences it writes (the host's CRD mode).
	CustomSetKinds bool `json:"customSetKinds,omitempty"`
	// WriteFailures: the module reads the snapshot's writeFailures and plans what upstream does after
	// those refusals (a host that gets an unexpected refusal asks again instead of stopping there).
	WriteFailures bool `json:"writeFailures,omitempty"`
	// UnchangedObjects: a snapshot may name objects of the instance's previous snapshot instead of carrying
	// them again (Unchanged); a reference the module cannot resolve gets a CodeStaleReference plan.
	UnchangedObjects bool `json:"unchangedObjects,omitempty"`
	// ObjectDeltas: a snapshot with a Delta carries only the objects new or changed since the instance's
	// previous call, and the uids of those gone; the module keeps the rest (a delta it cannot apply gets a
	// CodeStaleReference plan).
	ObjectDeltas bool `json:"objectDeltas,omitempty"`
	// Extensions are behaviours beyond upstream the module has, each off unless a set opts in with its
	// annotation (none: the module's plans are upstream's).
	Extensions []Extension `json:"extensions,omitempty"`
}

// AnnotationModule on a set names the module a host runs its syncs with (the controller's and replay's
// registry: "faithful", "extended"); absent, the host's active module. Not part of a snapshot's contract:
// modules ignore it.
const AnnotationModule = "ordinal.dev/module"

// AnnotationPrefix begins every annotation of this contract (the module a set names, its extensions).
const AnnotationPrefix = "ordinal.dev/"

// The extended module's extensions' annotations (describe's extensions, docs/extensions.md). Hosts
// read them too: the firewall knows reserve-ordinals' members (internal/ordinal.ReservedSlots), previews
// what recover-stuck resolves.
const (
	AnnotationPaused            = "ordinal.dev/paused"              // "true": no pod written
	AnnotationRecoverStuckAfter = "ordinal.dev/recover-stuck-after" // a duration: replace a pod stuck that long
	AnnotationReserveOrdinals   = "ordinal.dev/reserve-ordinals"    // "1,4-6": ordinals never used
	AnnotationResizeClaims      = "ordinal.dev/resize-claims"       // "true": grow claims to their template's request
	// "600": Deployment's rollout conditions (Progressing, Available) and a progress deadline
	AnnotationProgressDeadlineSeconds = "ordinal.dev/progress-deadline-seconds"
	AnnotationOnProgressDeadline      = "ordinal.dev/on-progress-deadline" // "Pause": no pod written past the deadline
	// "InPlaceIfPossible" | "InPlaceOnly" | "ReCreate": how a pod moves to the update revision
	AnnotationPodUpdatePolicy = "ordinal.dev/pod-update-policy"
	// on a pod: the revision an in-place update moved it to (it counts unavailable until it runs that spec);
	// abi/inplace judges which writes of a plan are an in-place update (POLICY.md section 2.1)
	AnnotationInPlaceUpdate = inplace.Annotation
)

// EnumAnnotation is the value of an extension's annotation that takes one of a list of values
// (AnnotationPaused, AnnotationResizeClaims, AnnotationOnProgressDeadline, AnnotationPodUpdatePolicy); ok is
// false when it is absent or empty. The extended module reads an empty value (a Helm value left unset
// renders as "") as no annotation, the default, not as a misspelling it warns of or holds pods for; hosts
// read it so too.
func EnumAnnotation(ann map[string]string, key string) (v string, ok bool) {
	v = ann[key]
	return v, v != ""
}

// LabelRevision is the label a set's pods carry naming the revision they run (upstream's apps/v1
// ControllerRevisionHashLabelKey): an in-place update moves it.
const LabelRevision = inplace.LabelRevision

// Values of AnnotationPodUpdatePolicy.
const (
	PodUpdateReCreate          = "ReCreate"
	PodUpdateInPlaceIfPossible = "InPlaceIfPossible"
	PodUpdateInPlaceOnly       = "InPlaceOnly"
)

// ConditionInPlaceUpdateBlocked is the set condition pod-update-policy InPlaceOnly keeps True while it holds a
// pod whose change cannot be made in place (its message names the pod and the field).
const ConditionInPlaceUpdateBlocked = "InPlaceUpdateBlocked"

// InPlaceOnlyHolds reports whether a set condition, by its type and status, says pod-update-policy InPlaceOnly
// holds a pod: ConditionInPlaceUpdateBlocked, True. The one reading of the hold, whether the condition is a
// typed object's or JSON's (its message then names the pod and the field).
func InPlaceOnlyHolds(condType, status string) bool {
	return condType == ConditionInPlaceUpdateBlocked && status == "True"
}

// The conditions of extension progress-deadline (AnnotationProgressDeadlineSeconds) that say a rollout will
// not end by itself (Deployment's names): ConditionProgressing False with ReasonProgressDeadlineExceeded, no
// progress for the deadline; ConditionRolledBack True, on-progress-deadline Rollback put the template back.
const (
	ConditionProgressing           = "Progressing"
	ConditionRolledBack            = "RolledBack"
	ReasonProgressDeadlineExceeded = EventProgressDeadlineExceeded
)

// ProgressDeadlineExceeded reports whether a set condition, by its type, status and reason, says the rollout
// passed its progress deadline: ConditionProgressing, False, ReasonProgressDeadlineExceeded. The one reading
// of it, whether the condition is a typed object's or a host's own copy (its message names the revision).
func ProgressDeadlineExceeded(condType, status, reason string) bool {
	return condType == ConditionProgressing && status == "False" && reason == ReasonProgressDeadlineExceeded
}

// Extension is one behaviour beyond upstream a module offers (describe's extensions).
type Extension struct {
	Name          string `json:"name"`
	Annotation    string `json:"annotation"`    // the set annotation that turns it on
	UpstreamIssue string `json:"upstreamIssue"` // the upstream issue it answers, owner/repo#number
}

// Error codes of Plan.Error.
const (
	CodeInvalidJSON        = "InvalidJSON"        // the snapshot is not valid JSON
	CodeInvalidSnapshot    = "InvalidSnapshot"    // valid JSON, wrong shape or types
	CodeUnsupportedABI     = "UnsupportedABI"     // snapshot "abi" missing or not Version
	CodeUnknownFeatureGate = "UnknownFeatureGate" // a gate in "features" the module does not know
	CodeSyncFailed         = "SyncFailed"         // upstream's sync returned an error; actions still listed
	CodeStaleReference     = "StaleReference"     // a reference to an object the instance does not hold: send it whole
)

// Unchanged is what a snapshot carries in place of a pod, revision or claim the same module instance was
// given in its previous call (only for modules whose describe says unchangedObjects).
type Unchanged struct {
	Unchanged ObjectRef `json:"unchanged"`
}

// Delta is a snapshot's "delta" member (only to modules whose describe says objectDeltas): the snapshot's
// pods, revisions and claims are the objects new or changed since the same instance's previous call,
// Removed the uids of the previous call's objects that are gone, Counts each list's length after it.
type Delta struct {
	Removed ObjectLists[[]string] `json:"removed"`
	Counts  ObjectLists[int]      `json:"counts"`
}

// ObjectLists is a value per object list of a snapshot.
type ObjectLists[T any] struct {
	Pods      T `json:"pods"`
	Revisions T `json:"revisions"`
	Claims    T `json:"claims"`
}

// ObjectRef names an object by uid and resourceVersion.
type ObjectRef struct {
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
}

// Action verbs.
const (
	VerbCreate       = "create"
	VerbUpdate       = "update"
	VerbPatch        = "patch"
	VerbDelete       = "delete"
	VerbUpdateStatus = "updateStatus"
	// VerbResize is an update of a pod's resize subresource (pods/resize): the object is the pod with the
	// container resources it is to have; the API server takes only those from it. Only the extended
	// module's in-place updates send it (AnnotationPodUpdatePolicy).
	VerbResize = "resize"
)

// Object kinds an action can write.
const (
	KindPod                   = "Pod"
	KindPersistentVolumeClaim = "PersistentVolumeClaim"
	KindControllerRevision    = "ControllerRevision"
	KindStatefulSet           = "StatefulSet"
)

// Event types.
const (
	EventNormal  = "Normal"
	EventWarning = "Warning"
)

// EventInvalidAnnotation is the reason of the Warning event a module records for an extension's annotation
// whose value it cannot read; the message names the annotation, the value and what the module does instead.
// Previews (and so the webhook's warnings) repeat it.
const EventInvalidAnnotation = "InvalidAnnotation"

// EventProgressDeadlineExceeded is the reason of the Warning event the extended module records when a set's
// rollout passes its progress deadline (extension progress-deadline; its Progressing condition says the same).
const EventProgressDeadlineExceeded = "ProgressDeadlineExceeded"

// The reasons of extension in-place-update's events (AnnotationPodUpdatePolicy), by which hosts read them
// (previews say per pod how it moves and why): EventInPlaceUpdate, Normal, a pod updated in place;
// EventRecreatingPod, Normal, a pod InPlaceIfPossible recreates, its message naming the first field a pod
// cannot change in place, and (with eventActions) its action the pod's delete; EventInPlaceBlocked, Warning,
// a pod InPlaceOnly holds (the message the set's ConditionInPlaceUpdateBlocked carries).
const (
	EventInPlaceUpdate  = "InPlaceUpdate"
	EventRecreatingPod  = "RecreatingPod"
	EventInPlaceBlocked = "InPlaceBlocked"
)

// Feature gates understood by ABI v1 modules (defaults are in Describe.Features).
const (
	GateMaxUnavailableStatefulSet             = "MaxUnavailableStatefulSet"
	GateStatefulSetRecreateStrategy           = "StatefulSetRecreateStrategy"
	GateStatefulSetSemanticRevisionComparison = "StatefulSetSemanticRevisionComparison"
	GateStaleControllerConsistencyStatefulSet = "StaleControllerConsistencyStatefulSet"
)

package abi

import "encoding/json"

// Policy modules (POLICY.md): a small module of the user's that may hold back writes of the reconcile
// module's plan, never add or change one. The types below mirror POLICY.md, which is normative.

// PolicyKind is describe's "kind" of a policy module (a reconcile module's describe has none).
const PolicyKind = "policy"

// PolicyDescribe is a policy module's self-description, read once by the host at load.
type PolicyDescribe struct {
	ABI     int    `json:"abi"`
	Kind    string `json:"kind"`    // PolicyKind
	Policy  string `json:"policy"`  // its name: lower-case letters, digits and '-', as sets name it
	Version string `json:"version"` // the policy's own version, for events and `ordinal version`
	// Context names what the policy reads of the host's context beyond held and signals, so a host fetches
	// only that: ContextPodDisruptionBudgets, ContextNodes, ContextDisrupted, ContextSnapshot.
	Context []string `json:"context,omitempty"`
}

// Describe's context entries.
const (
	// ContextPodDisruptionBudgets: PolicyContext.PodDisruptionBudgets.
	ContextPodDisruptionBudgets = "podDisruptionBudgets"
	// ContextNodes: PolicyContext.Nodes.
	ContextNodes = "nodes"
	// ContextSnapshot: the whole snapshot in PolicyInput.Snapshot. Without it a policy is given the set,
	// "now" and "features", and of the pods, revisions and claims only those the plan's actions name: a
	// policy pays for what the plan touches, not for the whole set.
	ContextSnapshot = "snapshot"
	// ContextDisrupted: PolicyContext.Disrupted. A policy that must know about every pod of the set only
	// whether it is down (a zone's, a rack's) asks for this instead of the whole snapshot: what it is given
	// grows with the pods that are down, not with the set.
	ContextDisrupted = "disrupted"
)

// PolicyContexts are describe's context entries a host may be asked for (an unknown one refuses the policy).
var PolicyContexts = []string{ContextPodDisruptionBudgets, ContextNodes, ContextDisrupted, ContextSnapshot}

// PolicyInput is what a host gives a policy module's evaluate export: the sync as the reconcile module saw
// it and the plan it made, the first action not yet issued, and what the host knows beyond the snapshot.
type PolicyInput struct {
	ABI      int             `json:"abi"`
	Snapshot json.RawMessage `json:"snapshot"` // the reconcile module's snapshot: whole with ContextSnapshot, else the objects the plan names
	Plan     *Plan           `json:"plan"`
	From     int             `json:"from"` // holds of actions before From are too late: they were issued
	Context  PolicyContext   `json:"context"`
}

// PolicyContext is read-only context the host supplies. Every member may be absent.
type PolicyContext struct {
	// Held are the writes this policy held in earlier syncs of the set and holds still, with the time it
	// first held each (a policy is stateless between calls: "since" is how a timeout is measured).
	Held []HeldWrite `json:"held,omitempty"`
	// Signals are values the host fetched for the policy (a maintenance window, a health check), by name;
	// the module never does I/O.
	Signals map[string]json.RawMessage `json:"signals,omitempty"`
	// PodDisruptionBudgets are the policy/v1 PodDisruptionBudgets of the set's namespace that select any of
	// its pods, as the API server returns them (status included: the disruption controller's).
	PodDisruptionBudgets []json.RawMessage `json:"podDisruptionBudgets,omitempty"`
	// Nodes are the nodes the set's pods run on, each {"metadata":{"name","labels"}} (a zone, a rack).
	Nodes []json.RawMessage `json:"nodes,omitempty"`
	// Disrupted is what of the set is down now (ContextDisrupted).
	Disrupted *Disrupted `json:"disrupted,omitempty"`
}

// Disrupted is what of a set is down now (POLICY.md section 2, context.disrupted).
type Disrupted struct {
	// Pods are the snapshot's pods that are not healthy, as the disruption controller counts a budget's
	// currentHealthy: being deleted (a deletionTimestamp), or their Ready condition (the first of that type)
	// not True. As the snapshot carries them, in its order.
	Pods []json.RawMessage `json:"pods"`
	// Missing are the set's replicas without a pod: <set>-<ordinal> for each ordinal from
	// spec.ordinals.start (0 without one) below start+spec.replicas that no pod of the snapshot is named, in
	// ordinal order (at most MaxDisruptedMissing).
	Missing []string `json:"missing"`
}

// MaxDisruptedMissing bounds Disrupted.Missing.
const MaxDisruptedMissing = 1024

// HeldWrite names a write a policy has been holding (by what it writes: action indexes change between
// syncs).
type HeldWrite struct {
	Verb  string `json:"verb"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Since string `json:"since"` // RFC 3339, the snapshot's "now" of the sync that first held it
}

// PolicyAnswer is what evaluate returns: the writes it holds (every other write is allowed), or an error.
type PolicyAnswer struct {
	ABI   int          `json:"abi"`
	Holds []PolicyHold `json:"holds"`
	// Spends are the PodDisruptionBudgets allowed pod disruptions spend — pod deletes and in-place updates
	// (POLICY.md sections 2.1, 4.1): the host commits each before it sends the write, as the eviction API
	// does, or holds the write.
	Spends []PolicySpend `json:"spends,omitempty"`
	Error  *Error        `json:"error,omitempty"` // the policy could not decide: the host holds nothing back
}

// PolicySpend is one disruption of a PodDisruptionBudget that an allowed pod delete or in-place update spends.
type PolicySpend struct {
	// Action is an index into the plan's actions, From or later, that the answer does not hold: a pod
	// delete, or an in-place update's first action (abi/inplace: its resize when it has one, else its update).
	Action int `json:"action"`
	// PodDisruptionBudget is the name of a budget of context.podDisruptionBudgets that selects the pod.
	PodDisruptionBudget string `json:"podDisruptionBudget"`
}

// PolicyHold holds one write back.
type PolicyHold struct {
	Action  int    `json:"action"` // index into the plan's actions, From or later; not an updateStatus
	Reason  string `json:"reason"` // UpperCamelCase, like an event reason
	Message string `json:"message"`
	// RetryAfterSeconds asks for the set's next sync after this long (0: the host's retry after a failed
	// sync, as for any refused write).
	RetryAfterSeconds float64 `json:"retryAfterSeconds,omitempty"`
}

// Limits of a policy answer (POLICY.md, "Limits").
const (
	MaxPolicyHolds         = 1024
	MaxPolicySpends        = 1024
	MaxPolicyReasonLength  = 128
	MaxPolicyMessageLength = 1024
	MaxPolicyRetrySeconds  = 86400
)

// AnnotationPolicies on a set names the policies its syncs run, comma-separated (POLICY.md).
const AnnotationPolicies = "ordinal.dev/policies"

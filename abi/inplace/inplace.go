// Package inplace is the one judgement of which actions of a plan are an in-place update of a pod, as
// policies see them (abi/POLICY.md section 2.1): the Go host checks a policy's answer with it (host/policy)
// and Go policies find the writes they hold with it (policies/kit), so the two cannot disagree. It imports
// nothing: a TinyGo policy that uses it pays for these functions, not for package abi's embedded schemas and
// patterns (importing abi grew a shipped policy by 150 KB).
package inplace

// The ABI's names this judgement reads. Package abi's AnnotationInPlaceUpdate and LabelRevision are these;
// its tests hold the verbs and the kind to abi.VerbUpdate, abi.VerbResize and abi.KindPod.
const (
	// Annotation, on a pod: the revision an in-place update moved it to (abi.AnnotationInPlaceUpdate).
	Annotation = "ordinal.dev/in-place-update"
	// LabelRevision is the label a set's pods carry naming the revision they run (upstream's apps/v1
	// ControllerRevisionHashLabelKey): an in-place update moves it.
	LabelRevision = "controller-revision-hash"

	VerbUpdate = "update"
	VerbResize = "resize"
	KindPod    = "Pod"
)

// Plan is what At reads of a plan and of the snapshot it was made for: a host's abi.Plan and snapshot, a
// policy's input.
type Plan interface {
	// Len is the number of the plan's actions.
	Len() int
	// Action is action i's verb, kind and name.
	Action(i int) (verb, kind, name string)
	// Marks are, of action i's object, its LabelRevision label and its Annotation, each "" when absent or
	// not a string (asked of Pod updates only).
	Marks(i int) (revision, inPlace string)
	// PodRevision is the LabelRevision label of the snapshot's pod of that name ("" when it has none, or
	// the snapshot has no such pod).
	PodRevision(name string) string
}

// Update is one in-place update of a pod in a plan: the pod's update that moves its revision label, and the
// resize (pods/resize) right before it when the pod's CPU or memory change. The module sends the update only
// once the resize succeeded, so a hold of the resize holds the whole in-place update.
type Update struct {
	Pod    string // the pod's name
	Resize int    // the index of its resize, -1 when it has none
	Update int    // the index of its update
}

// First is the action that stands for the in-place update in a policy's answer (abi/POLICY.md section 2.1):
// its resize when it has one, else its update. A policy holds the in-place update by holding it and names
// it in its spends; the host commits those spends right before it sends that action.
func (u Update) First() int {
	if u.Resize >= 0 {
		return u.Resize
	}
	return u.Update
}

// IsUpdate reports whether a write is the update of an in-place update: a Pod update whose object's
// LabelRevision (revision) is set, differs from the snapshot pod's (podRevision), and is what the object's
// Annotation (inPlace) names. A pod update that keeps the revision label — the identity and storage
// repairs upstream makes, on a pod updated in place earlier too — is none.
func IsUpdate(verb, kind, revision, inPlace, podRevision string) bool {
	return verb == VerbUpdate && kind == KindPod && revision != "" && inPlace == revision && revision != podRevision
}

// At is the in-place update action i of p is part of, as its update or as its resize (ok false: none). A
// resize is part of one only right before the update of the same pod (the module writes nothing between
// them); one the plan predicts to fail is the last write of its pod's move, and part of none.
func At(p Plan, i int) (u Update, ok bool) {
	n := p.Len()
	if i < 0 || i >= n {
		return Update{}, false
	}
	verb, kind, name := p.Action(i)
	if kind != KindPod {
		return Update{}, false
	}
	update := i
	switch verb {
	case VerbResize:
		update = i + 1
		if update >= n {
			return Update{}, false
		}
		if v, k, nm := p.Action(update); v != VerbUpdate || k != KindPod || nm != name {
			return Update{}, false
		}
	case VerbUpdate:
	default:
		return Update{}, false
	}
	revision, inPlace := p.Marks(update)
	if !IsUpdate(VerbUpdate, KindPod, revision, inPlace, p.PodRevision(name)) {
		return Update{}, false
	}
	u = Update{Pod: name, Resize: -1, Update: update}
	if update > 0 {
		if v, k, nm := p.Action(update - 1); v == VerbResize && k == KindPod && nm == name {
			u.Resize = update - 1
		}
	}
	return u, true
}

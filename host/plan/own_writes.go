package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
)

// ownWrites remembers the updates one plan has made, so that a later update of the same object with the
// same bytes is sent at the resourceVersion the first one returned rather than the snapshot's.
//
// A module plans a sync from one snapshot, as upstream's listers are modelled (they never see the sync's
// own writes), so when one sync updates an object twice (UpdateStatefulPod repeats
// UpdatePodClaimForRetentionPolicy for a pending pod whose claims it has just updated) both writes carry the
// snapshot's resourceVersion and the second is refused with a Conflict against the sync's own first write.
// Upstream's live lister has usually caught up by then, and its RetryOnConflict re-reads it when not: either
// way the object ends as the first write left it and the sync goes on. The same bytes sent again at the
// first write's resourceVersion end there too (an update that changes nothing is a no-op to the API server),
// and nothing a foreign writer did is overwritten: had anyone else written the object since, the
// resourceVersion would be stale again and the Conflict would come back as before. A later update with other
// bytes is sent as planned: rebasing it could undo what the first write did.
//
// The extended module's in-place update is the other such pair: a resize of a pod (pods/resize, which takes
// only the containers' resources from its object), then an update of the pod carrying the same
// resourceVersion and those resources. The update is sent at the version the resize returned: the resize is
// the only write between the two that the plan knows of, and a foreign write in between changes the version
// again, so its Conflict still comes back. The kubelet's own answer to the resize (a write of the pod's
// status) is such a write, and comes first more often than not: a writer that can re-read the pod (Rereader)
// has the update sent once more at the pod's version when nothing but its status changed since the resize.
type ownWrites map[string]ownWrite

type ownWrite struct {
	object          []byte
	resourceVersion string
	// resize: the write was a resize, sentAt the resourceVersion its object carried, resized its object
	resize  bool
	sentAt  string
	resized []byte
}

// Rereader is a Writer that can read an object as the API server has it now (uncached). The applier asks only
// when the update after its own resize of a pod meets a Conflict (statusOnlySince).
type Rereader interface {
	Reread(ctx context.Context, kind, namespace, name string) (json.RawMessage, error)
}

func ownKey(a *abi.Action) string { return a.Kind + "/" + a.Namespace + "/" + a.Name }

// write issues a (rebased when it repeats an update of this plan) and remembers it when it is an update.
func (o ownWrites) write(ctx context.Context, w Writer, a *abi.Action, precondition types.UID) error {
	send := a
	if a.Verb == abi.VerbUpdate {
		if prev, ok := o[ownKey(a)]; ok && prev.resourceVersion != "" &&
			(bytes.Equal(prev.object, a.Object) || prev.resize && prev.sentAt != "" && resourceVersionOf(a.Object) == prev.sentAt) {
			obj, err := withResourceVersion(a.Object, prev.resourceVersion)
			if err != nil {
				return err
			}
			rebased := *a
			rebased.Object = obj
			send = &rebased
		}
	}
	rv, err := w.Write(ctx, send, precondition)
	if prev, ok := o[ownKey(a)]; ok && send != a && prev.resize && apierrors.IsConflict(err) {
		// The kubelet answers a resize by writing the pod's status, often between the resize and this update:
		// when that is all that changed since, the update is sent again at the version the pod has now.
		if now, ok := statusOnlySince(ctx, w, a, prev.resized); ok {
			obj, rerr := withResourceVersion(a.Object, now)
			if rerr != nil {
				return rerr
			}
			again := *a
			again.Object = obj
			rv, err = w.Write(ctx, &again, precondition)
		}
	}
	switch {
	case err == nil && a.Verb == abi.VerbUpdate:
		o[ownKey(a)] = ownWrite{object: a.Object, resourceVersion: rv}
	case err == nil && a.Verb == abi.VerbResize:
		o[ownKey(a)] = ownWrite{resourceVersion: rv, resize: true, sentAt: resourceVersionOf(a.Object), resized: a.Object}
	}
	return err
}

// statusOnlySince reads the pod a's update is for and returns its resourceVersion when its metadata and spec
// are what this plan's resize left (the resize's object: the pod as the snapshot had it, with the new
// resources), so that only its status, resourceVersion, generation or managedFields changed since; ok false
// when the writer cannot read, or anything else changed (the Conflict then stands, as before).
func statusOnlySince(ctx context.Context, w Writer, a *abi.Action, resized []byte) (string, bool) {
	r, ok := w.(Rereader)
	if !ok || a.Kind != abi.KindPod || len(resized) == 0 {
		return "", false
	}
	fresh, err := r.Reread(ctx, a.Kind, a.Namespace, a.Name)
	if err != nil {
		return "", false
	}
	var was, now corev1.Pod
	if json.Unmarshal(resized, &was) != nil || json.Unmarshal(fresh, &now) != nil || now.ResourceVersion == "" {
		return "", false
	}
	rv := now.ResourceVersion
	for _, p := range []*corev1.Pod{&was, &now} {
		p.TypeMeta, p.ResourceVersion, p.Generation, p.ManagedFields, p.Status = metav1.TypeMeta{}, "", 0, nil, corev1.PodStatus{}
	}
	if !equality.Semantic.DeepEqual(was.ObjectMeta, now.ObjectMeta) || !equality.Semantic.DeepEqual(was.Spec, now.Spec) {
		return "", false
	}
	return rv, true
}

// resourceVersionOf reads an object's metadata.resourceVersion ("" when absent or unreadable).
func resourceVersionOf(obj json.RawMessage) string {
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(obj, &o) != nil {
		return ""
	}
	return o.Metadata.ResourceVersion
}

// withResourceVersion is obj with metadata.resourceVersion set to rv (numbers kept as written).
func withResourceVersion(obj json.RawMessage, rv string) (json.RawMessage, error) {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(obj, &o); err != nil {
		return nil, fmt.Errorf("update object: %w", err)
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(o["metadata"], &meta); err != nil || meta == nil {
		return nil, fmt.Errorf("update object without metadata")
	}
	v, _ := json.Marshal(rv)
	meta["resourceVersion"] = v
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	o["metadata"] = m
	return json.Marshal(o)
}

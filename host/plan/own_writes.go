package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

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
// again, so its Conflict still comes back.
type ownWrites map[string]ownWrite

type ownWrite struct {
	object          []byte
	resourceVersion string
	// resize: the write was a resize, sentAt the resourceVersion its object carried
	resize bool
	sentAt string
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
	switch {
	case err == nil && a.Verb == abi.VerbUpdate:
		o[ownKey(a)] = ownWrite{object: a.Object, resourceVersion: rv}
	case err == nil && a.Verb == abi.VerbResize:
		o[ownKey(a)] = ownWrite{resourceVersion: rv, resize: true, sentAt: resourceVersionOf(a.Object)}
	}
	return err
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

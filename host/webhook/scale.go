package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// scaledSets are the sets of a review of the scale subresource (kubectl scale, an autoscaler, anything that
// writes .../statefulsets/NAME/scale): the set as the API server stores it, read from it (the review carries
// only a Scale), and the same set with the Scale's replicas and the generation the change gives it, as the
// API server will store it. A scale-down through the subresource deletes pods, and with whenScaled Delete
// their claims, as an edit of spec.replicas does, so it is previewed (and denied) alike. skip: the replica
// count does not change, or the set is being deleted.
func (s *Server) scaledSets(ctx context.Context, req *admissionv1.AdmissionRequest, t snapshot.Target) (old, cur *appsv1.StatefulSet, skip bool, err error) {
	var now, before autoscalingv1.Scale
	if err := json.Unmarshal(req.Object.Raw, &now); err != nil || len(req.Object.Raw) == 0 {
		return nil, nil, false, fmt.Errorf("request.object is not a Scale: %v", errOr(err, "empty"))
	}
	if len(req.OldObject.Raw) > 0 {
		if err := json.Unmarshal(req.OldObject.Raw, &before); err != nil {
			return nil, nil, false, fmt.Errorf("request.oldObject is not a Scale: %v", err)
		}
		if before.Spec.Replicas == now.Spec.Replicas {
			return nil, nil, true, nil
		}
	}
	if s.cfg.GetSet == nil {
		return nil, nil, false, errors.New("a scale of the set cannot be previewed: the webhook has no client to read the set")
	}
	live, err := s.cfg.GetSet(ctx, t, req.Namespace, req.Name)
	if err != nil {
		return nil, nil, false, fmt.Errorf("reading the %s being scaled: %w", t.Kind, err)
	}
	if live.DeletionTimestamp != nil || (live.Spec.Replicas != nil && *live.Spec.Replicas == now.Spec.Replicas) {
		return nil, nil, true, nil
	}
	live.APIVersion, live.Kind = t.APIVersion(), t.Kind // as a review of the set itself carries them
	cur = live.DeepCopy()
	cur.Spec.Replicas = &now.Spec.Replicas
	cur.Generation++ // spec.replicas is part of the spec
	return live, cur, false, nil
}

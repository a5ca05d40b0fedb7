package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	sigsjson "sigs.k8s.io/json"

	"github.com/ordinal-dev/ordinal/abi"
)

// restClients gives a REST client per group/version. The applier sends the
// plan's objects and patches as the exact JSON bytes the module produced (no
// round trip through client-go's Go types, which could drop or reorder
// fields), so it uses REST clients rather than the typed clientset.
type restClients map[schema.GroupVersion]rest.Interface

// newRESTClients builds JSON REST clients for core/v1, apps/v1 and the target's
// group/version, sharing cfg's rate limiter.
func newRESTClients(cfg *rest.Config, target Target) (restClients, error) {
	rc := restClients{}
	for _, gv := range []schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}, target.GroupVersion} {
		if _, ok := rc[gv]; ok {
			continue
		}
		c := rest.CopyConfig(cfg)
		c.GroupVersion = &gv
		c.APIPath = "/apis"
		if gv.Group == "" {
			c.APIPath = "/api"
		}
		c.ContentType = "application/json"
		c.AcceptContentTypes = "application/json"
		c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		client, err := rest.RESTClientFor(c)
		if err != nil {
			return nil, fmt.Errorf("REST client for %s: %w", gv, err)
		}
		rc[gv] = client
	}
	return rc, nil
}

const jsonType = "application/json"

// writeResult is what the API server answered for one write.
type writeResult struct {
	ResourceVersion string
	UID             types.UID
}

// applier carries out one plan for one set.
type applier struct {
	rest   restClients
	target Target
	snap   *Snapshot
	set    types.NamespacedName
	setUID types.UID
	// wrote is called after each successful write with the resourceVersion the
	// API server returned (the consistency store).
	wrote func(gr schema.GroupResource, rv string)
	// recheck is upstream's canAdopt: an uncached GET of the set, called once
	// before the first adoption patch.
	recheck   func(ctx context.Context) error
	rechecked bool
	// issued is called for every write issued, with its outcome (metrics).
	issued func(a *abi.Action, err error)
}

// applyError is the first unexpected failure of a plan's writes.
type applyError struct {
	Index  int
	Action abi.Action
	Err    error
}

func (e *applyError) Error() string {
	return fmt.Sprintf("%s %s %s/%s (action %d): %v", e.Action.Verb, e.Action.Kind, e.Action.Namespace, e.Action.Name, e.Index, e.Err)
}

func (e *applyError) Unwrap() error { return e.Err }

// errAdoptionRefused is returned when the adoption re-check fails.
var errAdoptionRefused = errors.New("adoption refused")

// apply issues the plan's actions in order and stops at the first write that
// fails unexpectedly (as upstream's sync returns at its first error). A write
// the plan marks with an error (the module predicted the rejection from the
// snapshot, e.g. AlreadyExists) is issued, its failure is expected, and the
// plan goes on as upstream does after that rejection. Returns how many
// actions were issued and the first unexpected failure.
func (a *applier) apply(ctx context.Context, actions []abi.Action, onDone func(i int, err error)) (int, error) {
	for i := range actions {
		act := &actions[i]
		if act.Verb == abi.VerbPatch && !a.rechecked && isAdoptionPatch(act.Patch) {
			a.rechecked = true
			if err := a.recheck(ctx); err != nil {
				return i, &applyError{Index: i, Action: *act, Err: fmt.Errorf("%w: %v", errAdoptionRefused, err)}
			}
		}
		res, err := a.do(ctx, act)
		if a.issued != nil {
			a.issued(act, err)
		}
		if err == nil && res.ResourceVersion != "" {
			if gr, ok := groupResourceOf(a.target, act.Kind); ok {
				a.wrote(gr, res.ResourceVersion)
			}
		}
		// asPlanned: the write did what the plan says (succeeded, or failed as it predicted).
		switch {
		case act.Error != "" && err != nil:
			err = nil // the rejection the plan predicted: go on as upstream does
		case act.Error != "" && err == nil:
			err = fmt.Errorf("the plan expected this write to fail (%s) but it succeeded: the cache was stale", act.Error)
		case err != nil && ignorableError(act, err):
			err = nil
		}
		if onDone != nil {
			onDone(i, err)
		}
		if err != nil {
			return i + 1, &applyError{Index: i, Action: *act, Err: err}
		}
	}
	return len(actions), nil
}

// ignorableError: upstream's ControllerRefManager ignores a pod or revision
// that vanished before it could be adopted or released (404), and a release
// whose uid precondition no longer holds (422).
func ignorableError(act *abi.Action, err error) bool {
	if act.Verb != abi.VerbPatch {
		return false
	}
	if apierrors.IsNotFound(err) {
		return true
	}
	return apierrors.IsInvalid(err) && !isAdoptionPatch(act.Patch)
}

func groupResourceOf(t Target, kind string) (schema.GroupResource, bool) {
	gvr, ok := resourceForKind(t, kind)
	return gvr.GroupResource(), ok
}

// do issues one action.
func (a *applier) do(ctx context.Context, act *abi.Action) (writeResult, error) {
	gvr, ok := resourceForKind(a.target, act.Kind)
	if !ok {
		return writeResult{}, fmt.Errorf("plan writes unknown kind %q", act.Kind)
	}
	client := a.rest[gvr.GroupVersion()]
	if client == nil {
		return writeResult{}, fmt.Errorf("no client for %s", gvr.GroupVersion())
	}
	ns := act.Namespace
	if ns == "" {
		ns = a.set.Namespace
	}
	var req *rest.Request
	switch act.Verb {
	case abi.VerbCreate:
		req = client.Post().Namespace(ns).Resource(gvr.Resource).SetHeader("Content-Type", jsonType).Body([]byte(act.Object))
	case abi.VerbUpdate:
		req = client.Put().Namespace(ns).Resource(gvr.Resource).Name(act.Name).SetHeader("Content-Type", jsonType).Body([]byte(act.Object))
	case abi.VerbPatch:
		pt := types.PatchType(act.PatchType)
		if pt == "" {
			pt = types.StrategicMergePatchType
		}
		req = client.Patch(pt).Namespace(ns).Resource(gvr.Resource).Name(act.Name).Body([]byte(act.Patch))
	case abi.VerbDelete:
		opts := &metav1.DeleteOptions{}
		// Departure from upstream (abi/README.md "Deletes carry no
		// preconditions"): delete only the object the plan was made from.
		if uid, ok := a.snap.UIDs[objectKey{act.Kind, act.Name}]; ok && uid != "" {
			opts.Preconditions = &metav1.Preconditions{UID: &uid}
		}
		req = client.Delete().Namespace(ns).Resource(gvr.Resource).Name(act.Name).Body(opts)
	case abi.VerbUpdateStatus:
		if act.Kind != a.target.Kind {
			return writeResult{}, fmt.Errorf("updateStatus of kind %q", act.Kind)
		}
		body, err := statusBody(a.snap.SetJSON, act.Object)
		if err != nil {
			return writeResult{}, err
		}
		req = client.Put().Namespace(ns).Resource(gvr.Resource).Name(act.Name).SubResource("status").SetHeader("Content-Type", jsonType).Body(body)
	default:
		return writeResult{}, fmt.Errorf("plan has unknown verb %q", act.Verb)
	}
	raw, err := req.Do(ctx).Raw()
	if err != nil {
		return writeResult{}, err
	}
	var meta struct {
		Metadata struct {
			ResourceVersion string    `json:"resourceVersion"`
			UID             types.UID `json:"uid"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &meta) // a Status answer has no object metadata
	return writeResult{ResourceVersion: meta.Metadata.ResourceVersion, UID: meta.Metadata.UID}, nil
}

// statusBody is the set as it went into the snapshot with its status replaced
// by the plan's: what upstream PUTs to the status subresource (set.Status =
// *status; UpdateStatus(set)), so the resourceVersion precondition is the
// snapshot's.
func statusBody(setJSON, object json.RawMessage) ([]byte, error) {
	var obj struct {
		Status json.RawMessage `json:"status"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(object, &obj); err != nil || len(obj.Status) == 0 {
		return nil, fmt.Errorf("updateStatus action without a status object")
	}
	var set map[string]json.RawMessage
	if err := json.Unmarshal(setJSON, &set); err != nil {
		return nil, err
	}
	set["status"] = obj.Status
	return json.Marshal(set)
}

// isAdoptionPatch reports whether a patch adds a controller ownerReference
// (adoption), as opposed to removing one (release, "$patch":"delete").
func isAdoptionPatch(patch json.RawMessage) bool {
	var p struct {
		Metadata struct {
			OwnerReferences []map[string]any `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if json.Unmarshal(patch, &p) != nil {
		return false
	}
	for _, ref := range p.Metadata.OwnerReferences {
		if _, del := ref["$patch"]; del {
			continue
		}
		if c, _ := ref["controller"].(bool); c {
			return true
		}
	}
	return false
}

package controller

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	sigsjson "sigs.k8s.io/json"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// restClients gives a REST client per group/version. The applier sends the
// plan's objects and patches as the exact JSON bytes the module produced (no
// round trip through client-go's Go types, which could drop or reorder
// fields), so it uses REST clients rather than the typed clientset.
type restClients map[schema.GroupVersion]rest.Interface

// newRESTClients builds JSON REST clients for core/v1, apps/v1 and each target's
// group/version, sharing cfg's rate limiter. A target's client decodes through
// the target's scheme (its informer lists and watches through it).
func newRESTClients(cfg *rest.Config, targets ...snapshot.Target) (restClients, error) {
	rc := restClients{}
	gvs := []schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}}
	schemes := map[schema.GroupVersion]*runtime.Scheme{}
	for _, t := range targets {
		s, err := t.Scheme()
		if err != nil {
			return nil, err
		}
		gvs, schemes[t.GroupVersion] = append(gvs, t.GroupVersion), s
	}
	for _, gv := range gvs {
		if _, ok := rc[gv]; ok {
			continue
		}
		client, err := snapshot.JSONClient(cfg, gv, schemes[gv])
		if err != nil {
			return nil, err
		}
		rc[gv] = client
	}
	return rc, nil
}

const jsonType = "application/json"

// restWriter is the controller's plan.Writer: it sends each action to the API server as the exact bytes
// the module produced, and tells the consistency store the resourceVersion each write returned.
type restWriter struct {
	rest   restClients
	target snapshot.Target
	snap   *snapshot.Snapshot
	ns     string // the set's namespace
	// wrote is called after each successful write with the resourceVersion the API server returned.
	wrote func(gr schema.GroupResource, rv string)
	// canAdopt is upstream's canAdopt: an uncached GET of the set.
	canAdopt func(ctx context.Context) error
}

func (w *restWriter) CanAdopt(ctx context.Context) error { return w.canAdopt(ctx) }

// Reread is an uncached GET of a pod (hostplan.Rereader: the update after the sync's own resize met a Conflict).
func (w *restWriter) Reread(ctx context.Context, kind, namespace, name string) (json.RawMessage, error) {
	gvr, ok := resourceForKind(w.target, kind)
	if !ok || kind != abi.KindPod {
		return nil, fmt.Errorf("reread of kind %q", kind)
	}
	client := w.rest[gvr.GroupVersion()]
	if client == nil {
		return nil, fmt.Errorf("no client for %s", gvr.GroupVersion())
	}
	if namespace == "" {
		namespace = w.ns
	}
	return client.Get().Namespace(namespace).Resource(gvr.Resource).Name(name).Do(ctx).Raw()
}

// Write issues one action and returns the resourceVersion the API server answered with.
func (w *restWriter) Write(ctx context.Context, act *abi.Action, precondition types.UID) (string, error) {
	gvr, ok := resourceForKind(w.target, act.Kind)
	if !ok {
		return "", fmt.Errorf("plan writes unknown kind %q", act.Kind)
	}
	client := w.rest[gvr.GroupVersion()]
	if client == nil {
		return "", fmt.Errorf("no client for %s", gvr.GroupVersion())
	}
	ns := act.Namespace
	if ns == "" {
		ns = w.ns
	}
	var req *rest.Request
	switch act.Verb {
	case abi.VerbCreate:
		req = client.Post().Namespace(ns).Resource(gvr.Resource).Param("fieldManager", FieldManager).SetHeader("Content-Type", jsonType).Body([]byte(act.Object))
	case abi.VerbUpdate:
		req = client.Put().Namespace(ns).Resource(gvr.Resource).Name(act.Name).Param("fieldManager", FieldManager).SetHeader("Content-Type", jsonType).Body([]byte(act.Object))
	case abi.VerbPatch:
		pt := types.PatchType(act.PatchType)
		if pt == "" {
			pt = types.StrategicMergePatchType
		}
		req = client.Patch(pt).Namespace(ns).Resource(gvr.Resource).Name(act.Name).Param("fieldManager", FieldManager).Body([]byte(act.Patch))
	case abi.VerbDelete:
		opts := &metav1.DeleteOptions{}
		if precondition != "" {
			opts.Preconditions = &metav1.Preconditions{UID: &precondition}
		}
		req = client.Delete().Namespace(ns).Resource(gvr.Resource).Name(act.Name).Body(opts)
	case abi.VerbResize: // extension in-place-update: the pods/resize subresource
		req = client.Put().Namespace(ns).Resource(gvr.Resource).Name(act.Name).SubResource("resize").Param("fieldManager", FieldManager).SetHeader("Content-Type", jsonType).Body([]byte(act.Object))
	case abi.VerbUpdateStatus:
		if act.Kind != w.target.Kind {
			return "", fmt.Errorf("updateStatus of kind %q", act.Kind)
		}
		body, err := statusBody(w.snap.SetJSON, act.Object, w.target)
		if err != nil {
			return "", err
		}
		req = client.Put().Namespace(ns).Resource(gvr.Resource).Name(act.Name).SubResource("status").Param("fieldManager", FieldManager).SetHeader("Content-Type", jsonType).Body(body)
	default:
		return "", fmt.Errorf("plan has unknown verb %q", act.Verb)
	}
	res := req.Do(ctx)
	if err := res.Error(); err != nil { // Error, not Raw: it reads the API server's Status (message, causes)
		return "", err
	}
	raw, _ := res.Raw()
	var meta struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &meta) // a Status answer has no object metadata
	if meta.Metadata.ResourceVersion != "" && w.wrote != nil {
		w.wrote(gvr.GroupResource(), meta.Metadata.ResourceVersion)
	}
	return meta.Metadata.ResourceVersion, nil
}

// statusBody is the set as it went into the snapshot with its status replaced
// by the plan's: what upstream PUTs to the status subresource (set.Status =
// *status; UpdateStatus(set)), so the resourceVersion precondition is the
// snapshot's. A custom target's status also carries the selector of its scale
// subresource (status.selector, which apps/v1's status lacks: the PUT would
// clear it otherwise), the set's spec.selector as a string.
func statusBody(setJSON, object json.RawMessage, target snapshot.Target) ([]byte, error) {
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
	if target.Custom {
		status, err := withScaleSelector(set["spec"], obj.Status)
		if err != nil {
			return nil, err
		}
		set["status"] = status
	}
	return json.Marshal(set)
}

// withScaleSelector adds status.selector, metav1.FormatLabelSelector of spec.selector (what apps/v1's
// scale subresource reports), to a custom target's status.
func withScaleSelector(spec, status json.RawMessage) (json.RawMessage, error) {
	var s struct {
		Selector *metav1.LabelSelector `json:"selector"`
	}
	if err := json.Unmarshal(spec, &s); err != nil {
		return nil, fmt.Errorf("the set's spec: %w", err)
	}
	var st map[string]json.RawMessage
	if err := json.Unmarshal(status, &st); err != nil {
		return nil, fmt.Errorf("the plan's status: %w", err)
	}
	sel, err := json.Marshal(metav1.FormatLabelSelector(s.Selector))
	if err != nil {
		return nil, err
	}
	st["selector"] = sel
	return json.Marshal(st)
}

// Group resources of the objects the module plans writes for.
var (
	podResource      = schema.GroupResource{Resource: "pods"}
	claimResource    = schema.GroupResource{Resource: "persistentvolumeclaims"}
	revisionResource = schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}
)

// resourceForKind maps a plan action's kind to its group/version/resource.
func resourceForKind(t snapshot.Target, kind string) (schema.GroupVersionResource, bool) {
	switch kind {
	case "Pod":
		return schema.GroupVersionResource{Version: "v1", Resource: "pods"}, true
	case "PersistentVolumeClaim":
		return schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, true
	case "ControllerRevision":
		return schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}, true
	case t.Kind:
		return t.GroupVersion.WithResource(t.Resource), true
	}
	return schema.GroupVersionResource{}, false
}

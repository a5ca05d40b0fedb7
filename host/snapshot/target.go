package snapshot

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/ordinal-dev/ordinal/host/crd"
)

// Target is a kind of object the controller reconciles. Everything in this
// package that depends on the kind (the ownerReference kind it resolves and
// adopts under, the apiVersion/kind stamped on the snapshot's set, the REST
// path of the uncached adoption re-check and of updateStatus, the kind events
// are recorded on) reads it from here. Objects of either kind decode into
// *appsv1.StatefulSet, so listers, snapshots and the module are the same.
type Target struct {
	GroupVersion schema.GroupVersion
	Kind         string
	Resource     string // plural, as in the REST path
	// Custom: served from a CustomResourceDefinition, so the API server neither defaults nor validates
	// the set as apps/v1 (the controller does both before planning: see customSetJSON), and its status
	// has a selector for the scale subresource that apps/v1's lacks (the controller writes it).
	Custom bool
}

// StatefulSetTarget is the built-in apps/v1 StatefulSet.
var StatefulSetTarget = Target{
	GroupVersion: schema.GroupVersion{Group: "apps", Version: "v1"},
	Kind:         "StatefulSet",
	Resource:     "statefulsets",
}

// CRDTarget is Ordinal's own ordinal.dev/v1 StatefulSet (host/crd), which no built-in controller acts on.
var CRDTarget = Target{
	GroupVersion: crd.GroupVersion,
	Kind:         crd.Kind,
	Resource:     crd.Resource,
	Custom:       true,
}

// TargetOfGroup is the kind a StatefulSet of API group group is: Ordinal's own for its group, else apps/v1.
func TargetOfGroup(group string) Target {
	if group == CRDTarget.GroupVersion.Group {
		return CRDTarget
	}
	return StatefulSetTarget
}

// Served reports whether the API server serves kind t's resource (for a CRD: installed and established,
// as discovery lists a CRD's resources only then); err is any other discovery failure.
func Served(disc discovery.DiscoveryInterface, t Target) (bool, error) {
	list, err := disc.ServerResourcesForGroupVersion(t.APIVersion())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == t.Resource }), nil
}

// OrApps is the target, the zero Target being apps/v1.
func (t Target) OrApps() Target {
	if t.Kind == "" {
		return StatefulSetTarget
	}
	return t
}

// GetSet reads a set of kind t with an uncached GET. A custom kind is read as JSON into apps/v1's Go type
// through the clientset's untyped REST client (the typed clientset knows apps/v1 only); the API server's
// error, NotFound included, is returned as it is.
func GetSet(ctx context.Context, client kubernetes.Interface, t Target, ns, name string) (*appsv1.StatefulSet, error) {
	t = t.OrApps()
	if !t.Custom {
		return client.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return customSetCall(ctx, client, t, ns, name, func(r *rest.Request) *rest.Request { return r })
}

// PatchSet patches a set of kind t (a custom kind through the untyped REST client, as GetSet).
func PatchSet(ctx context.Context, client kubernetes.Interface, t Target, ns, name string, pt types.PatchType, data []byte, fieldManager string) (*appsv1.StatefulSet, error) {
	return patchSet(ctx, client, t, ns, name, pt, data, metav1.PatchOptions{FieldManager: fieldManager})
}

// patchSet is the one PATCH of a set of kind t, with opts (a custom kind through the clientset's untyped REST
// client, its options as the typed client encodes them).
func patchSet(ctx context.Context, client kubernetes.Interface, t Target, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*appsv1.StatefulSet, error) {
	t = t.OrApps()
	if !t.Custom {
		return client.AppsV1().StatefulSets(ns).Patch(ctx, name, pt, data, opts)
	}
	return customSetCall(ctx, client, t, ns, name, func(r *rest.Request) *rest.Request {
		return r.Verb("PATCH").SetHeader("Content-Type", string(pt)).VersionedParams(&opts, metav1.ParameterCodec).Body(data)
	})
}

// SetNames lists the names of the namespace's sets of kind t (a custom kind through the untyped REST
// client, as GetSet).
func SetNames(ctx context.Context, client kubernetes.Interface, t Target, ns string) ([]string, error) {
	t = t.OrApps()
	var l *appsv1.StatefulSetList
	if !t.Custom {
		var err error
		if l, err = client.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{}); err != nil {
			return nil, err
		}
	} else {
		req, err := customSetsRequest(client, t, ns)
		if err != nil {
			return nil, err
		}
		raw, err := req.Do(ctx).Raw()
		if err != nil {
			return nil, err
		}
		l = &appsv1.StatefulSetList{}
		if err := json.Unmarshal(raw, l); err != nil {
			return nil, fmt.Errorf("%s in %s: %w", t, ns, err)
		}
	}
	names := make([]string, 0, len(l.Items))
	for _, s := range l.Items {
		names = append(names, s.Name)
	}
	return names, nil
}

// DryRunApplySet is what the API server would store for manifest (JSON) applied to the set of kind t
// (server-side apply with dryRun=All, forced, under fieldManager; nothing is changed). A custom kind goes
// through the clientset's untyped REST client, as GetSet.
func DryRunApplySet(ctx context.Context, client kubernetes.Interface, t Target, ns, name string, manifest []byte, fieldManager string) (*appsv1.StatefulSet, error) {
	force := true
	return patchSet(ctx, client, t, ns, name, types.ApplyPatchType, manifest,
		metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: fieldManager, Force: &force})
}

// DryRunReplaceSet is what the API server would store for manifest (JSON: the whole set, as kubectl replace
// sends it) put in place of the live set of kind t (an update with dryRun=All, under fieldManager; nothing is
// changed). It is sent at the live set's resourceVersion: a preview asks what the set would become, not
// whether it changed since the manifest was read (a controller's status writes move it all the time).
func DryRunReplaceSet(ctx context.Context, client kubernetes.Interface, t Target, live *appsv1.StatefulSet, manifest []byte, fieldManager string) (*appsv1.StatefulSet, error) {
	var set map[string]any
	if err := json.Unmarshal(manifest, &set); err != nil {
		return nil, err
	}
	meta, _ := set["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		set["metadata"] = meta
	}
	meta["resourceVersion"] = live.ResourceVersion
	body, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	opts := metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: fieldManager}
	t = t.OrApps()
	if !t.Custom {
		typed := &appsv1.StatefulSet{}
		if err := json.Unmarshal(body, typed); err != nil {
			return nil, err
		}
		return client.AppsV1().StatefulSets(live.Namespace).Update(ctx, typed, opts)
	}
	return customSetCall(ctx, client, t, live.Namespace, live.Name, func(r *rest.Request) *rest.Request {
		return r.Verb("PUT").SetHeader("Content-Type", "application/json").VersionedParams(&opts, metav1.ParameterCodec).Body(body)
	})
}

// DryRunPatchSet is what the API server would store for the patch (of type pt) of the set of kind t
// (dryRun=All, under fieldManager; nothing is changed): a client-side kubectl apply's patch.
func DryRunPatchSet(ctx context.Context, client kubernetes.Interface, t Target, ns, name string, pt types.PatchType, patch []byte, fieldManager string) (*appsv1.StatefulSet, error) {
	return patchSet(ctx, client, t, ns, name, pt, patch, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: fieldManager})
}

// customSetCall makes one request for the set ns/name of custom kind t through the clientset's untyped REST
// client (a GET unless call changes it) and reads the answer into apps/v1's Go type. Namespace and Name
// check their segments (no '/', no ".."), as the typed client's requests do.
func customSetCall(ctx context.Context, client kubernetes.Interface, t Target, ns, name string, call func(*rest.Request) *rest.Request) (*appsv1.StatefulSet, error) {
	req, err := customSetsRequest(client, t, ns)
	if err != nil {
		return nil, err
	}
	res := call(req.Name(name)).Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	raw, err := res.Raw()
	if err != nil {
		return nil, err
	}
	var set appsv1.StatefulSet
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", t, ns, name, err)
	}
	set.TypeMeta = metav1.TypeMeta{} // as a typed client returns it
	return &set, nil
}

// customSetsRequest is a GET of the namespace's sets of custom kind t through the clientset's untyped REST
// client (the typed clientset knows apps/v1 only).
func customSetsRequest(client kubernetes.Interface, t Target, ns string) (*rest.Request, error) {
	rc := client.Discovery().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		return nil, fmt.Errorf("no REST client to reach %s in %s", t, ns)
	}
	return rc.Get().AbsPath("/apis", t.GroupVersion.Group, t.GroupVersion.Version).Namespace(ns).Resource(t.Resource), nil
}

// APIVersion is the target's apiVersion string ("apps/v1").
func (t Target) APIVersion() string { return t.GroupVersion.String() }

// GroupResource is the target's group and resource (for the consistency store).
func (t Target) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: t.GroupVersion.Group, Resource: t.Resource}
}

// String is the kind as kubectl names it: StatefulSet.apps, StatefulSet.ordinal.dev.
func (t Target) String() string { return t.Kind + "." + t.GroupVersion.Group }

// Scheme maps *appsv1.StatefulSet to the target's kind alone: client-go's scheme for apps/v1; for the
// CRD a scheme of its own (crd.AddToScheme), in which the Go type has no other kind. Events name the
// kind the scheme gives, and the CRD's REST client decodes through it.
func (t Target) Scheme() (*runtime.Scheme, error) {
	switch {
	case !t.Custom:
		return scheme.Scheme, nil
	case t.GroupVersion == crd.GroupVersion && t.Kind == crd.Kind:
		s := runtime.NewScheme()
		return s, crd.AddToScheme(s)
	}
	return nil, fmt.Errorf("no Go types for %s", t)
}

package firewall

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Scope is what the firewall knows of the set a snapshot is about: the set's identity and the parts of
// its spec that bound the plan, and the metadata of every object in the snapshot (in the set's
// namespace), by name.
type Scope struct {
	APIVersion, Kind string // of the set, e.g. apps/v1 StatefulSet
	Namespace, Name  string
	UID              types.UID
	Deleting         bool // the set has a deletionTimestamp: upstream adopts nothing

	Start, Replicas int            // ordinals [Start, Start+Replicas) are the set's (spec.ordinals.start, spec.replicas)
	reserved        *ordinal.Slots // with a valid reserve-ordinals annotation: the members it makes the set's too
	ClaimTemplates  []string       // names of spec.volumeClaimTemplates
	// claimSizes: with extension resize-claims on, each template's storage request (claim_resize.go)
	claimSizes map[string]string
	selector   labels.Selector
	rollback   rollbackScope // extension progress-deadline's rollback (set_rollback.go)
	inPlace    inPlaceScope  // extension in-place-update (in_place.go)
	// podTemplate, serviceName: the set's spec.template and spec.serviceName (created_pods.go)
	podTemplate *corev1.PodTemplateSpec
	serviceName string

	// the revision chain (revision_chain.go): the status's revisions, the snapshot's revisions' data, the set
	currentRevision, updateRevision string
	revisionData                    map[string][]byte        // by name, from the snapshot (ScopeFromParts, ScopeFromObjects)
	revisionDataOf                  func(name string) []byte // else this (SetRevisionData: a host that keeps its objects)
	setJSON                         json.RawMessage
	setTemplate                     any
	setTemplateRead                 bool

	Pods, Revisions, Claims map[string]*Object
}

// Object is the metadata of one object of the snapshot. Raw is the object as the snapshot carries it
// (kept for claims, whose updates are compared with it).
type Object struct {
	Name, Namespace string
	UID             types.UID
	Labels          map[string]string
	OwnerReferences []metav1.OwnerReference
	Raw             json.RawMessage
	// Images: a pod's container images (PodImages), which only an in-place update changes (in_place.go);
	// nil when the host records none
	Images map[string]string
	// Pod, else PodOf: the snapshot's pod, which a pod update changes only as upstream and an in-place update
	// do (pod_update.go); both nil when the host records none (then only Images are judged)
	Pod   *corev1.Pod
	PodOf func() (*corev1.Pod, error)
}

// objectMeta is the part of an object the firewall decodes.
type objectMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name              string                  `json:"name"`
		GenerateName      string                  `json:"generateName"`
		Namespace         string                  `json:"namespace"`
		UID               types.UID               `json:"uid"`
		Labels            map[string]string       `json:"labels"`
		OwnerReferences   []metav1.OwnerReference `json:"ownerReferences"`
		DeletionTimestamp *metav1.Time            `json:"deletionTimestamp"`
	} `json:"metadata"`
}

// ScopeFromSnapshot decodes the scope from an ABI v1 snapshot (the exact bytes the module was given).
func ScopeFromSnapshot(snapshot []byte) (*Scope, error) {
	var snap abi.Snapshot
	if err := json.Unmarshal(snapshot, &snap); err != nil {
		return nil, fmt.Errorf("firewall: snapshot: %w", err)
	}
	return ScopeFromParts(snap.StatefulSet, snap.Pods, snap.Revisions, snap.Claims)
}

// ScopeFromParts builds the scope from the snapshot's set and object lists.
func ScopeFromParts(setJSON json.RawMessage, pods, revisions, claims []json.RawMessage) (*Scope, error) {
	var set appsv1.StatefulSet
	if err := json.Unmarshal(setJSON, &set); err != nil {
		return nil, fmt.Errorf("firewall: statefulSet: %w", err)
	}
	s, err := newScope(&set, setJSON)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	s.revisionData = data
	for _, l := range []struct {
		raws []json.RawMessage
		into map[string]*Object
		what string
	}{{pods, s.Pods, "pods"}, {revisions, s.Revisions, "revisions"}, {claims, s.Claims, "claims"}} {
		for i, raw := range l.raws {
			var m objectMeta
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("firewall: %s[%d]: %w", l.what, i, err)
			}
			md := &m.Metadata
			var keep json.RawMessage
			if l.what == "claims" {
				keep = raw
			}
			var pod *corev1.Pod
			if l.what == "pods" {
				pod = &corev1.Pod{}
				if err := json.Unmarshal(raw, pod); err != nil {
					return nil, fmt.Errorf("firewall: %s[%d]: %w", l.what, i, err)
				}
			}
			if l.what == "revisions" && (md.Namespace == "" || md.Namespace == s.Namespace) {
				var r struct {
					Data json.RawMessage `json:"data"`
				}
				if json.Unmarshal(raw, &r) == nil {
					data[md.Name] = r.Data
				}
			}
			s.add(l.into, md.Name, md.Namespace, md.UID, md.Labels, md.OwnerReferences, keep)
			if o := l.into[md.Name]; pod != nil && o != nil {
				o.Images, o.Pod = PodImages(&pod.Spec), pod
			}
		}
	}
	return s, nil
}

// ScopeFromObjects builds the scope from the typed objects a snapshot was encoded from (the controller's
// informer caches), so the firewall decodes nothing the snapshot builder already had. set carries the
// apiVersion and kind the snapshot gives it, and setJSON is the set exactly as the snapshot carries it, as
// claimJSON[i] is claims[i].
func ScopeFromObjects(set *appsv1.StatefulSet, setJSON json.RawMessage, pods []*corev1.Pod, revisions []*appsv1.ControllerRevision,
	claims []*corev1.PersistentVolumeClaim, claimJSON []json.RawMessage) (*Scope, error) {
	s, err := newScope(set, setJSON)
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		s.add(s.Pods, p.Name, p.Namespace, p.UID, p.Labels, p.OwnerReferences, nil)
		if o := s.Pods[p.Name]; o != nil && (p.Namespace == "" || p.Namespace == s.Namespace) {
			o.Images, o.Pod = PodImages(&p.Spec), p
		}
	}
	data := make(map[string][]byte, len(revisions))
	for _, r := range revisions {
		s.add(s.Revisions, r.Name, r.Namespace, r.UID, r.Labels, r.OwnerReferences, nil)
		if r.Namespace == "" || r.Namespace == s.Namespace {
			data[r.Name] = r.Data.Raw
		}
	}
	s.revisionData = data
	for i, c := range claims {
		s.add(s.Claims, c.Name, c.Namespace, c.UID, c.Labels, c.OwnerReferences, claimJSON[i])
	}
	return s, nil
}

// NewScope starts the scope of a set whose objects the caller adds with Add: for worlds that hold the
// objects already decoded in a form of their own (the replay's), so nothing is decoded twice. setJSON is
// the set as the snapshot carries it.
func NewScope(set *appsv1.StatefulSet, setJSON json.RawMessage) (*Scope, error) {
	return newScope(set, setJSON)
}

// Add records one object of the snapshot by its kind (Pod, ControllerRevision, PersistentVolumeClaim);
// raw is a claim exactly as the snapshot carries it (nil for other kinds).
func (s *Scope) Add(kind, name, ns string, uid types.UID, lbls map[string]string, refs []metav1.OwnerReference, raw json.RawMessage) error {
	into := s.objects(kind)
	if into == nil {
		return fmt.Errorf("firewall: a snapshot holds no %s", kind)
	}
	if kind != abi.KindPersistentVolumeClaim {
		raw = nil // only claims are compared with their snapshot bytes
	}
	s.add(into, name, ns, uid, lbls, refs, raw)
	return nil
}

// NewObject is an object as Add records it, for a host that keeps a scope's objects between syncs (Use).
func NewObject(kind, name, ns string, uid types.UID, lbls map[string]string, refs []metav1.OwnerReference, raw json.RawMessage) *Object {
	if kind != abi.KindPersistentVolumeClaim {
		raw = nil // only claims are compared with their snapshot bytes
	}
	return &Object{Name: name, Namespace: ns, UID: uid, Labels: lbls, OwnerReferences: refs, Raw: raw}
}

// Use makes objs the scope's objects of kind, as they are (the scope reads the map, never changes it): a
// host that keeps them between syncs changes only the entries that changed. Every object must be in the
// set's namespace (or have none) under its own name, as Add would have recorded it.
func (s *Scope) Use(kind string, objs map[string]*Object) error {
	switch kind {
	case abi.KindPod:
		s.Pods = objs
	case abi.KindControllerRevision:
		s.Revisions = objs
	case abi.KindPersistentVolumeClaim:
		s.Claims = objs
	default:
		return fmt.Errorf("firewall: a snapshot holds no %s", kind)
	}
	return nil
}

// Object is the snapshot's object of kind and name (Pod, ControllerRevision, PersistentVolumeClaim),
// nil when the snapshot has none: e.g. the uid a delete must find.
func (s *Scope) Object(kind, name string) *Object { return s.objects(kind)[name] }

// objects is the scope's objects of one kind; nil for a kind a snapshot does not hold.
func (s *Scope) objects(kind string) map[string]*Object {
	switch kind {
	case abi.KindPod:
		return s.Pods
	case abi.KindControllerRevision:
		return s.Revisions
	case abi.KindPersistentVolumeClaim:
		return s.Claims
	}
	return nil
}

func newScope(set *appsv1.StatefulSet, setJSON json.RawMessage) (*Scope, error) {
	if set.Name == "" || set.UID == "" {
		return nil, fmt.Errorf("firewall: statefulSet has no name or uid")
	}
	s := &Scope{
		APIVersion: set.APIVersion, Kind: set.Kind, Namespace: set.Namespace, Name: set.Name, UID: set.UID,
		Deleting: set.DeletionTimestamp != nil, Replicas: 1,
		Pods: map[string]*Object{}, Revisions: map[string]*Object{}, Claims: map[string]*Object{},
	}
	if s.APIVersion == "" {
		s.APIVersion = "apps/v1"
	}
	if s.Kind == "" {
		s.Kind = abi.KindStatefulSet
	}
	if s.Namespace == "" {
		s.Namespace = metav1.NamespaceDefault
	}
	if set.Spec.Replicas != nil {
		s.Replicas = int(*set.Spec.Replicas)
	}
	if set.Spec.Ordinals != nil {
		s.Start = int(set.Spec.Ordinals.Start)
	}
	// the extension reserve-ordinals' reach: the ordinals the reservation leaves (the extended module's
	// members); upstream's stay allowed (a module without the extension ignores the annotation)
	if slots, reserving := kube.Slots(int64(s.Start), int64(s.Replicas), set.Annotations); reserving {
		s.reserved = &slots
	}
	for _, t := range set.Spec.VolumeClaimTemplates {
		s.ClaimTemplates = append(s.ClaimTemplates, t.Name)
	}
	s.claimSizes = claimSizes(set.Annotations, setJSON)
	s.rollback = newRollbackScope(set)
	s.inPlace = newInPlaceScope(set)
	s.podTemplate, s.serviceName = &set.Spec.Template, set.Spec.ServiceName
	s.currentRevision, s.updateRevision, s.setJSON = set.Status.CurrentRevision, set.Status.UpdateRevision, setJSON
	if sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector); err == nil && !sel.Empty() {
		s.selector = sel
	}
	return s, nil
}

// add records one object of the snapshot; objects outside the set's namespace are left out (nothing in
// them may be written).
func (s *Scope) add(into map[string]*Object, name, ns string, uid types.UID, lbls map[string]string,
	refs []metav1.OwnerReference, raw json.RawMessage) {
	if ns == "" {
		ns = s.Namespace
	}
	if ns != s.Namespace {
		return
	}
	// as the module: the last of two objects with one name wins
	into[name] = &Object{Name: name, Namespace: ns, UID: uid, Labels: lbls, OwnerReferences: refs, Raw: raw}
}

// controls reports whether the snapshot shows o controlled by the set (controller reference of the
// set's kind with the set's uid).
func (s *Scope) controls(o *Object) bool {
	ref := controllerOf(o.OwnerReferences)
	return ref != nil && ref.UID == s.UID && ref.Kind == s.Kind
}

// adoptable reports whether the snapshot shows o as an orphan (no controller reference) whose labels
// the set's selector matches, while the set is not being deleted: what upstream's
// ControllerRefManager adopts.
func (s *Scope) adoptable(o *Object) bool {
	return !s.Deleting && s.selector != nil && controllerOf(o.OwnerReferences) == nil &&
		s.selector.Matches(labels.Set(o.Labels))
}

func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

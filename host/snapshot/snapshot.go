package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Objects are the raw inputs of one snapshot: the set and every object in its
// namespace the controller has (from informer caches, or from live List calls
// for `ordinal snapshot`). SelectObjects narrows them to what the sync needs.
type Objects struct {
	// Target is the set's kind (the zero Target: apps/v1).
	Target    Target
	Set       *appsv1.StatefulSet
	Pods      []*corev1.Pod
	Revisions []*appsv1.ControllerRevision
	Claims    []*corev1.PersistentVolumeClaim
}

// Snapshot is a built snapshot plus what the applier needs from it.
type Snapshot struct {
	JSON []byte
	// SetJSON is the set exactly as it went into the snapshot (the body for updateStatus).
	SetJSON json.RawMessage
	// Counts, for logs.
	Pods, Revisions, Claims int
	// Scope is what the action firewall knows of the snapshot, built from the same typed objects (nil:
	// the firewall decodes JSON).
	Scope *firewall.Scope

	head         []byte                       // JSON up to the end of the set's member: {"abi":1,"now":...,"statefulSet":{...}
	featuresJSON []byte                       // the features member's value, when it has one
	down         []int                        // the indexes of the pods that are not healthy (policy.Healthy)
	names        map[string][]string          // kind -> the objects' names, in snapshot order
	raws         map[string][]json.RawMessage // kind -> the objects as the snapshot carries them, in the same order
	// layout says where JSON's pods, revisions and claims are, with the digest of each the encode cache kept,
	// so that a session finds what changed without reading or hashing the whole snapshot (wasm.Layout).
	layout wasm.Layout
}

// Object is the snapshot's object of that kind and name as the snapshot carries it (policy.Run.Object).
func (s *Snapshot) Object(kind, name string) (json.RawMessage, bool) {
	for i, n := range s.names[kind] {
		if n == name {
			return s.raws[kind][i], true
		}
	}
	return nil, false
}

// Head is the snapshot's members other than its lists as policies are given them (policy.Run.Head): abi,
// now, the set and the features, a JSON object without its closing brace.
func (s *Snapshot) Head() []byte {
	h := s.head[:len(s.head):len(s.head)]
	if s.featuresJSON != nil {
		h = append(append(h, `,"features":`...), s.featuresJSON...)
	}
	return h
}

// PodStates are the snapshot's pods as policies are told of them (policy.Run.Pods): their names, and those
// that are down as the snapshot carries them. Each pod's health was found once per encoding of it.
func (s *Snapshot) PodStates() policy.Pods {
	ps := policy.Pods{Names: s.names["Pod"]}
	for _, i := range s.down {
		ps.Down = append(ps.Down, s.raws["Pod"][i])
	}
	return ps
}

// SelectObjects keeps, of everything in the set's namespace, the objects the
// module can act on or must know about, as upstream's sync sees them:
//
//   - pods: controlled by the set (controller ownerReference with the set's
//     UID), orphans matching the set's selector (adoption candidates), and any
//     pod named <set>-<n> whatever its owner (so the module sees name clashes);
//   - ControllerRevisions: controlled by the set, orphans matching the
//     selector, and any named <set>-<hash> (no further "-");
//   - claims: any named <template>-<set>-<n> for one of the set's
//     volumeClaimTemplates, and any with an ownerReference to the set.
//
// Pods and revisions owned by other controllers and unrelated claims are left
// out: the module would ignore them (abi/README.md §4 lets a host include them),
// and a namespace may hold thousands. Each list is sorted by name, so the
// snapshot is deterministic for a given cache state.
func SelectObjects(o Objects) (Objects, error) {
	sel, err := NewSelection(o.Set)
	if err != nil {
		return Objects{}, err
	}
	out := Objects{Target: o.Target, Set: o.Set}
	for _, p := range o.Pods {
		if sel.Pod(&p.ObjectMeta) {
			out.Pods = append(out.Pods, p)
		}
	}
	for _, r := range o.Revisions {
		if sel.Revision(&r.ObjectMeta) {
			out.Revisions = append(out.Revisions, r)
		}
	}
	for _, c := range o.Claims {
		if sel.Claim(&c.ObjectMeta) {
			out.Claims = append(out.Claims, c)
		}
	}
	sort.Slice(out.Pods, func(i, j int) bool { return out.Pods[i].Name < out.Pods[j].Name })
	sort.Slice(out.Revisions, func(i, j int) bool { return out.Revisions[i].Name < out.Revisions[j].Name })
	sort.Slice(out.Claims, func(i, j int) bool { return out.Claims[i].Name < out.Claims[j].Name })
	return out, nil
}

// Selection is SelectObjects' rule for one object at a time, by its metadata: a reader of many objects
// (a kubectl List) keeps only the set's, rather than holding every object of a namespace to select them.
type Selection struct {
	set           *appsv1.StatefulSet
	selector      labels.Selector
	claimPrefixes []string
}

// NewSelection is the selection of set's objects.
func NewSelection(set *appsv1.StatefulSet) (*Selection, error) {
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("invalid selector: %w", err)
	}
	s := &Selection{set: set, selector: selector}
	for _, t := range set.Spec.VolumeClaimTemplates {
		s.claimPrefixes = append(s.claimPrefixes, t.Name+"-"+set.Name+"-")
	}
	return s, nil
}

// Pod reports whether the pod of this metadata is in the set's snapshot.
func (s *Selection) Pod(m *metav1.ObjectMeta) bool {
	return m.Namespace == s.set.Namespace && (ownedOrAdoptable(m, s.set, s.selector) || IsOrdinalName(m.Name, s.set.Name+"-"))
}

// Revision reports whether the ControllerRevision of this metadata is in the set's snapshot.
func (s *Selection) Revision(m *metav1.ObjectMeta) bool {
	return m.Namespace == s.set.Namespace && (ownedOrAdoptable(m, s.set, s.selector) || isRevisionName(m.Name, s.set.Name+"-"))
}

// Claim reports whether the claim of this metadata is in the set's snapshot.
func (s *Selection) Claim(m *metav1.ObjectMeta) bool {
	if m.Namespace != s.set.Namespace {
		return false
	}
	keep := hasOwnerUID(m, s.set.UID)
	for _, pfx := range s.claimPrefixes {
		keep = keep || IsOrdinalName(m.Name, pfx)
	}
	return keep
}

func ownedOrAdoptable(m *metav1.ObjectMeta, set *appsv1.StatefulSet, selector labels.Selector) bool {
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		return ref.UID == set.UID
	}
	return !selector.Empty() && selector.Matches(labels.Set(m.Labels))
}

func hasOwnerUID(m *metav1.ObjectMeta, uid types.UID) bool {
	for _, r := range m.OwnerReferences {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// isRevisionName reports whether name is prefix followed by a non-empty suffix without "-".
func isRevisionName(name, prefix string) bool {
	return strings.HasPrefix(name, prefix) && len(name) > len(prefix) && !strings.Contains(name[len(prefix):], "-")
}

// IsOrdinalName reports whether name is prefix followed by an ordinal, as upstream parses one
// (internal/ordinal): "web-3" for prefix "web-", "data-web-3" for "data-web-".
func IsOrdinalName(name, prefix string) bool {
	parent, n := ordinal.Parse(name)
	return n >= 0 && parent+"-" == prefix
}

// Build serializes selected objects (SelectObjects' output) into an ABI
// v1 snapshot, without managedFields: kube-controller-manager's informers drop
// them, so upstream's controller neither reads nor sends them (an update of a
// pod carries none). Each object is encoded with encoding/json from its typed form,
// which is how the API server encodes it, after setting apiVersion and kind
// (informer and typed-client objects carry no TypeMeta). A ControllerRevision's
// data is a RawExtension and passes through byte for byte. The target's
// apiVersion and kind are stamped on the set.
func Build(o Objects, target Target, now time.Time, features map[string]bool) (*Snapshot, error) {
	return (*EncodeCache)(nil).Build(o, target, now, features)
}

// Build is Build with the cache: the controller keeps one per set.
func (cache *EncodeCache) Build(o Objects, target Target, now time.Time, features map[string]bool) (*Snapshot, error) {
	set, err := cache.encodeSet(o.Set, target, features)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{SetJSON: set.json, names: map[string][]string{}, raws: map[string][]json.RawMessage{}}
	// The snapshot is written as json.Marshal(abi.Snapshot) would write it (field order, omitempty),
	// without encoding_json re-scanning every object's bytes.
	w := &snapshotWriter{cache: cache, s: s, b: make([]byte, 0, cache.sizeHint())}
	w.head(now, set.json)
	if err := w.objects(o); err != nil {
		return nil, err
	}
	if err := w.features(features); err != nil {
		return nil, err
	}
	// The controller records each event once the write it reports is issued: ask for the index.
	w.b = append(w.b, `,"eventActions":true`...)
	s.JSON = append(w.b, '}')
	s.Pods, s.Revisions, s.Claims = len(o.Pods), len(o.Revisions), len(o.Claims)
	s.head = s.JSON[:len(s.head)]
	cache.done(len(s.JSON))
	if s.Scope, err = firewall.ScopeFromObjects(set.scope, set.json, o.Pods, o.Revisions, o.Claims, w.claims); err != nil {
		s.Scope = nil // the firewall decodes the JSON instead, and reports the problem
	}
	return s, nil
}

// encodedSet is a set as a snapshot carries it (its JSON, with the target's apiVersion and kind, no
// managedFields; a custom target's defaulted as apps/v1: customSetJSON) and the set the firewall judges
// against: the one the module sees.
type encodedSet struct {
	json  []byte
	scope *appsv1.StatefulSet
	// what it was encoded from: an informer's set never changes under one uid and resourceVersion
	uid    types.UID
	rv     string
	target Target
	gates  kube.Gates
}

// encodeSet encodes the set, or gives back the cache's encoding of the same set, target and gates (a custom
// target's defaulting and its decode were a sync's cost even when only a pod changed).
func (cache *EncodeCache) encodeSet(in *appsv1.StatefulSet, target Target, features map[string]bool) (*encodedSet, error) {
	gates := kube.GatesOf(features)
	if cache != nil && cache.set != nil && in.UID != "" && in.ResourceVersion != "" &&
		cache.set.uid == in.UID && cache.set.rv == in.ResourceVersion && cache.set.target == target && cache.set.gates == gates {
		return cache.set, nil
	}
	set := *in
	set.TypeMeta = metav1.TypeMeta{APIVersion: target.APIVersion(), Kind: target.Kind}
	set.ManagedFields = nil // upstream's informers drop them (see TrimManagedFields); so does every snapshot
	setJSON, err := json.Marshal(&set)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s: %w", target.Kind, set.Namespace, set.Name, err)
	}
	e := &encodedSet{json: setJSON, scope: &set, uid: in.UID, rv: in.ResourceVersion, target: target, gates: gates}
	if target.Custom {
		if e.json, err = customSetJSON(setJSON, gates); err != nil {
			return nil, err
		}
		var d appsv1.StatefulSet // the firewall judges against the set as the module saw it: defaulted
		if err := json.Unmarshal(e.json, &d); err != nil {
			return nil, fmt.Errorf("decoding %s %s/%s as defaulted: %w", target.Kind, set.Namespace, set.Name, err)
		}
		e.scope = &d
	}
	if cache != nil {
		cache.set = e
	}
	return e, nil
}

// snapshotWriter writes a snapshot's JSON, laying out its objects as it goes (Snapshot.layout).
type snapshotWriter struct {
	cache  *EncodeCache
	s      *Snapshot
	b      []byte
	claims []json.RawMessage // the claims' JSON, for the firewall's scope
}

func (w *snapshotWriter) head(now time.Time, setJSON []byte) {
	w.b = append(w.b, `{"abi":`...)
	w.b = strconv.AppendInt(w.b, abi.Version, 10)
	w.b = append(w.b, `,"now":`...)
	w.b = strconv.AppendQuote(w.b, now.UTC().Format(time.RFC3339Nano)) // digits, '-', ':', 'T', 'Z', '.': no escaping
	w.b = append(w.b, `,"statefulSet":`...)
	w.b = append(w.b, setJSON...)
	w.s.head = w.b
}

// objects writes the pods, revisions and claims lists, each object with its apiVersion and kind (informer and
// typed-client objects carry no TypeMeta) and without managedFields.
func (w *snapshotWriter) objects(o Objects) error {
	if err := w.list("pods", "Pod", len(o.Pods), func(i int) (metav1.Object, any) {
		c := *o.Pods[i]
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		c.ManagedFields = nil
		return o.Pods[i], &c
	}); err != nil {
		return err
	}
	if err := w.list("revisions", "ControllerRevision", len(o.Revisions), func(i int) (metav1.Object, any) {
		c := *o.Revisions[i]
		c.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"}
		c.ManagedFields = nil
		return o.Revisions[i], &c
	}); err != nil {
		return err
	}
	err := w.list("claims", "PersistentVolumeClaim", len(o.Claims), func(i int) (metav1.Object, any) {
		c := *o.Claims[i]
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
		c.ManagedFields = nil
		return o.Claims[i], &c
	})
	w.claims = w.s.raws["PersistentVolumeClaim"]
	return err
}

// list writes one list of n objects (none: no member), each encoded through the cache.
func (w *snapshotWriter) list(key, kind string, n int, item func(i int) (metav1.Object, any)) error {
	if n == 0 {
		return nil
	}
	s := w.s
	raws := make([]json.RawMessage, n)
	names := make([]string, n)
	encs, metas := make([]encoded, n), make([]metav1.Object, n)
	size := len(key) + 6 + n
	for i := range n { // encoded first, so the snapshot grows once (a 30 MB List's grew through 80 MB)
		meta, obj := item(i)
		enc, err := w.cache.encode(kind, meta, func() ([]byte, error) { return json.Marshal(obj) })
		if err != nil {
			return fmt.Errorf("encoding %s %s: %w", kind, meta.GetName(), err)
		}
		encs[i], metas[i], size = enc, meta, size+len(enc.json)
	}
	w.b = slices.Grow(w.b, size)
	s.layout.Objects = slices.Grow(s.layout.Objects, n)
	w.b = append(w.b, `,"`+key+`":[`...)
	for i := range n {
		meta, enc := metas[i], encs[i]
		if i > 0 {
			w.b = append(w.b, ',')
		}
		at := len(w.b)
		w.b = append(w.b, enc.json...)
		raws[i], names[i] = enc.json, meta.GetName()
		if enc.down {
			s.down = append(s.down, i)
		}
		s.layout.Objects = append(s.layout.Objects, wasm.LaidObject{List: key, From: at, To: len(w.b),
			UID: string(meta.GetUID()), RV: meta.GetResourceVersion(), Digest: enc.digest})
	}
	w.b = append(w.b, ']')
	s.raws[kind], s.names[kind] = raws, names
	return nil
}

func (w *snapshotWriter) features(features map[string]bool) error {
	if len(features) == 0 {
		return nil
	}
	f, err := json.Marshal(features)
	if err != nil {
		return err
	}
	w.b = append(append(w.b, `,"features":`...), f...)
	w.s.featuresJSON = f
	return nil
}

// InvalidSetError is a custom target's set that kube-apiserver would refuse as an apps/v1 StatefulSet:
// the controller does not act on it (the CRD's schema checks less than apps/v1's validation does).
type InvalidSetError struct{ Err error }

func (e *InvalidSetError) Error() string { return e.Err.Error() }
func (e *InvalidSetError) Unwrap() error { return e.Err }

// customSetJSON is a custom target's set as kube-apiserver would store the same manifest as an apps/v1
// StatefulSet: defaulted (kube.DefaultStatefulSet, so the revision hash of its template, and with it every
// revision name, is the apps/v1 one), and refused (*InvalidSetError) where apps/v1 validation refuses it.
func customSetJSON(setJSON []byte, gates kube.Gates) ([]byte, error) {
	set, err := jsonobj.DecodeObj(setJSON)
	if err != nil {
		return nil, err
	}
	kube.DefaultStatefulSet(set)
	if err := kube.ValidateStatefulSet(set, gates); err != nil {
		return nil, &InvalidSetError{Err: err}
	}
	return json.Marshal(set)
}

// EncodeCache keeps the JSON of one set's objects by kind, uid and resourceVersion across syncs: an
// informer's object never changes under one resourceVersion, so a sync encodes only what changed since
// the last one (encoding every pod was most of a 1000-pod sync's host CPU). Entries not used by a
// build are dropped after it. A nil cache encodes everything. Not safe for concurrent builds: the
// controller keeps one per set, and the work queue syncs a set on one worker at a time.
type EncodeCache struct {
	prev, next map[encodeKey]encoded
	size       int
	set        *encodedSet // the set of the last build
}

// encoded is an object's JSON and, when the cache keeps it, its digest (computed once per encoding); of a
// pod, whether it is down (not policy.Healthy: a policy's context "disrupted"), found once per encoding.
type encoded struct {
	json   []byte
	digest [sha256.Size]byte
	down   bool
}

type encodeKey struct {
	kind string
	uid  types.UID
	rv   string
}

func (c *EncodeCache) encode(kind string, meta metav1.Object, enc func() ([]byte, error)) (encoded, error) {
	pod, isPod := meta.(*corev1.Pod)
	if c == nil || meta.GetResourceVersion() == "" || meta.GetUID() == "" {
		b, err := enc()
		return encoded{json: b, down: isPod && !policy.Healthy(pod)}, err // no digest: the session hashes it
	}
	k := encodeKey{kind, meta.GetUID(), meta.GetResourceVersion()}
	if c.next == nil {
		c.next = make(map[encodeKey]encoded, len(c.prev))
	}
	if e, ok := c.prev[k]; ok {
		c.next[k] = e
		return e, nil
	}
	b, err := enc()
	if err != nil {
		return encoded{}, err
	}
	e := encoded{json: b, digest: sha256.Sum256(b), down: isPod && !policy.Healthy(pod)}
	c.next[k] = e
	return e, nil
}

func (c *EncodeCache) done(size int) {
	if c != nil {
		c.prev, c.next, c.size = c.next, nil, size
	}
}

func (c *EncodeCache) sizeHint() int {
	if c == nil {
		return 4096
	}
	return c.size + c.size/8
}

// Of selects a set's objects among candidates (SelectObjects) and builds its snapshot
// (Build): the chain every snapshot outside the controller's sync goes through, whether the
// candidates come from live calls (Live) or from informer caches (the webhook).
func Of(cands Objects, now time.Time, features map[string]bool) (*Snapshot, Objects, error) {
	sel, err := SelectObjects(cands)
	if err != nil {
		return nil, Objects{}, err
	}
	snap, err := Build(sel, sel.Target.OrApps(), now, features)
	return snap, sel, err
}

// Live is the snapshot of a set of kind t as the API server has it right now, from uncached calls
// (`ordinal snapshot`, the kubectl plugin).
func Live(ctx context.Context, client kubernetes.Interface, t Target, ns, name string, now time.Time, features map[string]bool) (*Snapshot, Objects, error) {
	objs, err := LiveObjects(ctx, client, t, ns, name)
	if err != nil {
		return nil, Objects{}, err
	}
	return Of(objs, now, features)
}

// LiveObjects GETs the set of kind t and Lists its namespace's pods, ControllerRevisions
// and claims from the API server (uncached).
func LiveObjects(ctx context.Context, client kubernetes.Interface, t Target, ns, name string) (Objects, error) {
	set, err := GetSet(ctx, client, t, ns, name)
	if err != nil {
		return Objects{}, err
	}
	o, err := NamespaceObjects(ctx, client, t, ns)
	if err != nil {
		return Objects{}, err
	}
	o.Set = set
	return o, nil
}

// NamespaceObjects Lists the pods, ControllerRevisions and claims of namespace ns from the API server
// (uncached): what a snapshot of a set of kind t there is built from, the set aside.
func NamespaceObjects(ctx context.Context, client kubernetes.Interface, t Target, ns string) (Objects, error) {
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return Objects{}, err
	}
	revs, err := client.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return Objects{}, err
	}
	claims, err := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return Objects{}, err
	}
	o := Objects{Target: t}
	for i := range pods.Items {
		o.Pods = append(o.Pods, &pods.Items[i])
	}
	for i := range revs.Items {
		o.Revisions = append(o.Revisions, &revs.Items[i])
	}
	for i := range claims.Items {
		o.Claims = append(o.Claims, &claims.Items[i])
	}
	return o, nil
}

// LaidOut is the session's reconciler for this snapshot, with its layout.
func (s *Snapshot) LaidOut(session *wasm.Session) wasm.LaidOut {
	return wasm.LaidOut{Session: session, Snapshot: s.JSON, Layout: &s.layout}
}

// FirewallScope is what the action firewall knows of the snapshot: built with it, or decoded from its JSON.
func (s *Snapshot) FirewallScope() (*firewall.Scope, error) {
	if s.Scope != nil {
		return s.Scope, nil
	}
	scope, err := firewall.ScopeFromSnapshot(s.JSON)
	if err != nil {
		return nil, fmt.Errorf("action firewall: %w", err)
	}
	return scope, nil
}

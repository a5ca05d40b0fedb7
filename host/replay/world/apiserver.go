package world

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Kinds the replayed world stores. The StatefulSet is kept apart: a world holds exactly one.
const (
	KindPod      = "Pod"
	KindRevision = "ControllerRevision"
	KindClaim    = "PersistentVolumeClaim"
	KindSet      = "StatefulSet"
)

// APIError is a rejected write, with the reason a real API server would give.
type APIError struct {
	Reason  string // AlreadyExists, NotFound, Conflict, Invalid, BadRequest
	Message string
}

func (e *APIError) Error() string { return e.Reason + ": " + e.Message }

// Status makes the error an apierrors.APIStatus, so the applier (host/plan) reads the in-memory API
// server's answers with the same rules as a real one's.
func (e *APIError) Status() metav1.Status {
	return metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReason(e.Reason), Code: statusCodes[e.Reason], Message: e.Message}
}

var statusCodes = map[string]int32{"AlreadyExists": 409, "Conflict": 409, "NotFound": 404, "Invalid": 422, "BadRequest": 400}

func NewAPIError(reason, format string, args ...any) *APIError {
	return &APIError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// APIAnswer is a refusal of host/kube's validation (an API server status) as the in-memory API server
// answers it: an *APIError of the same reason and message.
func APIAnswer(err error) error {
	var s apierrors.APIStatus
	if err == nil || !errors.As(err, &s) {
		return err
	}
	st := s.Status()
	return &APIError{Reason: string(st.Reason), Message: st.Message}
}

// SimUIDPrefix marks objects created during a replay (the reference harness uses the same form).
const SimUIDPrefix = "00000000-0000-4000-8000-"

// ids assigns uids and resourceVersions the way the reference harness's API server does: a counter
// per simulation, uids 00000000-0000-4000-8000-NNNNNNNNNNNN and resourceVersions 100001+. Determinism
// of the whole replay rests on this being a plain counter.
type ids struct {
	seq, rv int
	rvBase  int // 0 means 100000; a world loaded from a snapshot continues above its highest
	// uidBase: the delays model continues a loaded world's uids above its highest, as an API server never
	// gives two objects one uid (the tick model restarts at 1, as the harness it is compared with does)
	uidBase int
}

func (a *ids) uid() string {
	a.seq++
	return fmt.Sprintf("%s%012d", SimUIDPrefix, a.uidBase+a.seq)
}

func (a *ids) resourceVersion() string {
	a.rv++
	base := a.rvBase
	if base == 0 {
		base = 100000
	}
	return fmt.Sprint(base + a.rv)
}

// APIServer is an in-memory API server for one StatefulSet's namespace: it stores the set, its
// pods, ControllerRevisions and PVCs and applies writes with the semantics kube-apiserver has for
// them (metadata assignment, preconditions, the status subresource, graceful pod deletion).
type APIServer struct {
	// Gates are the feature gates its StatefulSet validation reads (the world's features).
	Gates kube.Gates
	// HarnessCollector: the garbage collector marks a pod for deletion as the reference harness's does, without
	// a new resourceVersion (the tick model); otherwise as kube-apiserver records the collector's delete, with one.
	HarnessCollector bool

	ns    string
	clock *Clock
	ids   ids
	set   Obj
	objs  map[string]map[string]Obj // kind -> name -> object (written only by put and remove)
	order map[string][]string       // kind -> its names in natural order (apiserver_names.go)
	// watches learn of every write (apiserver_watch.go)
	watches []*Watch

	// Hooks the kubelet and the engine use to learn about changes.
	onPodCreated func(name string)
	onPodDeleted func(name string) // a deletionTimestamp was set
	onClaimGrew  func(name string) // a patch changed a claim's storage request
	// onPodSpecChanged: an update changed a pod's container images, or a resize its resources (restart: the
	// images changed, so the kubelet restarts the containers)
	onPodSpecChanged func(name string, restart bool)
	notes            []WorldEvent // what happened outside the controller, for the timeline

	// ownersChanged: an object was removed, or the set changed, since the garbage collector last looked, so
	// any object's owners may be gone and it must look at all; suspects are the pods, revisions and claims
	// created, replaced or patched since (only their own owners can be gone: a write adds no orphan elsewhere).
	ownersChanged bool
	suspects      []suspect
	owners        ownerGraph // who owns whom, for the collector's look after a removal
}

// NewAPIServer returns an empty server for namespace ns.
func NewAPIServer(ns string, clock *Clock) *APIServer {
	return &APIServer{ns: ns, clock: clock, objs: map[string]map[string]Obj{
		KindPod: {}, KindRevision: {}, KindClaim: {},
	}, order: map[string][]string{}, ownersChanged: true}
}

func (s *APIServer) now() string { return s.clock.Now().UTC().Format(time.RFC3339) }

func (s *APIServer) Note(source, reason, kind, name, format string, args ...any) {
	s.notes = append(s.notes, WorldEvent{Source: source, Reason: reason, Kind: kind, Name: name, Message: fmt.Sprintf(format, args...)})
}

// TakeNotes returns and clears the notes gathered since the last call.
func (s *APIServer) TakeNotes() []WorldEvent {
	n := s.notes
	s.notes = nil
	return n
}

// Get returns the stored object (not a copy) or nil.
func (s *APIServer) Get(kind, name string) Obj {
	if kind == KindSet {
		if s.set != nil && jsonobj.GetStr(s.set, "metadata.name") == name {
			return s.set
		}
		return nil
	}
	return s.objs[kind][name]
}

// Names lists the stored objects of a kind in natural order (web-2 before web-10): a copy, which the caller
// may keep while it writes.
func (s *APIServer) Names(kind string) []string { return slices.Clone(s.NameIndex(kind)) }

// StatefulSet returns the stored set (not a copy), nil before it is created.
func (s *APIServer) StatefulSet() Obj { return s.set }

func (s *APIServer) stamp(o Obj) {
	md := jsonobj.Ensure(o, "metadata")
	md["uid"] = s.ids.uid()
	md["resourceVersion"] = s.ids.resourceVersion()
	md["creationTimestamp"] = s.now()
	if jsonobj.GetStr(md, "namespace") == "" {
		md["namespace"] = s.ns
	}
}

// bump gives the stored object o of kind a new resourceVersion: it was changed in place.
func (s *APIServer) bump(kind string, o Obj) {
	md := jsonobj.Ensure(o, "metadata")
	md["resourceVersion"] = s.ids.resourceVersion()
	if kind != KindSet {
		s.changed(kind, jsonobj.GetStr(md, "name"))
	}
}

// StripTypeMeta drops apiVersion/kind: list results carry none per item, and that is what the
// controller's informers hold.
func StripTypeMeta(o Obj) {
	delete(o, "apiVersion")
	delete(o, "kind")
}

// Create stores a new object. Pods and PVCs are defaulted and start Pending; the server assigns
// uid, resourceVersion and creationTimestamp (and generation 1 for pods and sets), as on a real
// cluster. A taken name is AlreadyExists.
func (s *APIServer) Create(kind string, obj Obj) error {
	o := jsonobj.CloneObj(obj)
	name := jsonobj.GetStr(o, "metadata.name")
	if name == "" {
		return NewAPIError("Invalid", "%s: metadata.name is required", kind)
	}
	if kind == KindSet {
		if s.set != nil {
			return NewAPIError("AlreadyExists", "statefulsets.apps %q already exists", name)
		}
		kube.DefaultStatefulSet(o)
		if err := APIAnswer(kube.ValidateStatefulSet(o, s.Gates)); err != nil {
			return err
		}
		s.stamp(o)
		jsonobj.Set(o, "metadata.generation", jsonobj.Num(1))
		s.set = o
		s.ownersChanged = true
		return nil
	}
	store, ok := s.objs[kind]
	if !ok {
		return NewAPIError("Invalid", "cannot create %s", kind)
	}
	if _, exists := store[name]; exists {
		return NewAPIError("AlreadyExists", "%s %q already exists", resourceName(kind), name)
	}
	if err := APIAnswer(kube.ValidateObjectMeta(qualifiedKind(kind), o)); err != nil {
		return err
	}
	StripTypeMeta(o)
	s.stamp(o)
	switch kind {
	case KindPod:
		jsonobj.Set(o, "metadata.generation", jsonobj.Num(1))
		kube.DefaultPod(o, s.ns)
		o["status"] = Obj{"phase": "Pending", "qosClass": kube.PodQOS(jsonobj.GetObj(o, "spec"))} // PrepareForCreate resets the status
	case KindClaim:
		kube.DefaultClaim(o, s.ns)
		o["status"] = Obj{"phase": "Pending"}
	}
	s.put(kind, name, o)
	s.suspect(kind, name)
	if kind == KindPod && s.onPodCreated != nil {
		s.onPodCreated(name)
	}
	return nil
}

// Update replaces an object. The status of pods, PVCs and sets is a subresource and is kept; a
// resourceVersion in the new object is a precondition (Conflict when stale); a spec change of the
// set bumps its generation.
func (s *APIServer) Update(kind string, obj Obj) error {
	name := jsonobj.GetStr(obj, "metadata.name")
	old := s.Get(kind, name)
	if old == nil {
		return NewAPIError("NotFound", "%s %q not found", resourceName(kind), name)
	}
	if rv := jsonobj.GetStr(obj, "metadata.resourceVersion"); rv != "" && rv != jsonobj.GetStr(old, "metadata.resourceVersion") {
		return staleConflict(kind, name)
	}
	o := jsonobj.CloneObj(obj)
	md := jsonobj.Ensure(o, "metadata")
	omd := jsonobj.GetObj(old, "metadata")
	// Immutable or server-owned metadata survives a PUT that omits it.
	for _, k := range []string{"uid", "creationTimestamp", "namespace", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		if v, ok := omd[k]; ok {
			md[k] = v
		} else {
			delete(md, k)
		}
	}
	switch kind {
	case KindSet:
		kube.DefaultStatefulSet(o)
		if err := APIAnswer(kube.ValidateStatefulSetUpdate(old, o, s.Gates)); err != nil {
			return err
		}
		o["status"] = jsonobj.Clone(old["status"])
		if !jsonobj.Equal(old["spec"], o["spec"]) {
			g, _ := jsonobj.GetInt(old, "metadata.generation")
			md["generation"] = jsonobj.Num(g + 1)
		}
		s.bump(KindSet, o)
		s.set = o
		s.ownersChanged = true
		return nil
	case KindPod, KindClaim:
		StripTypeMeta(o)
		o["status"] = jsonobj.Clone(old["status"])
		if kind == KindPod && !maps.Equal(containerImages(old), containerImages(o)) {
			defer s.podSpecChanged(name, true)
		}
	case KindRevision:
		StripTypeMeta(o)
	}
	s.bump(kind, o)
	s.put(kind, name, o)
	s.suspect(kind, name)
	return nil
}

// Resize is a PUT of a pod to its resize subresource: only the containers' resources and resize policies are
// taken from obj (kube-apiserver's dropNonResizeUpdates); a resourceVersion in obj is a precondition. A
// resize that changes the pod's QoS class is Invalid, as kube-apiserver's ValidatePodResize has it.
func (s *APIServer) Resize(obj Obj) error {
	name := jsonobj.GetStr(obj, "metadata.name")
	old := s.Get(KindPod, name)
	if old == nil {
		return NewAPIError("NotFound", "pods %q not found", name)
	}
	if rv := jsonobj.GetStr(obj, "metadata.resourceVersion"); rv != "" && rv != jsonobj.GetStr(old, "metadata.resourceVersion") {
		return staleConflict(KindPod, name)
	}
	o := jsonobj.CloneObj(old)
	changed, restart := false, false
	for _, list := range []string{"initContainers", "containers"} {
		want := map[string]any{}
		for _, c := range jsonobj.GetArr(obj, "spec."+list) {
			want[jsonobj.GetStr(c, "name")] = c
		}
		for _, c := range jsonobj.GetArr(o, "spec."+list) {
			co, _ := c.(Obj)
			w, ok := want[jsonobj.GetStr(co, "name")].(Obj)
			if co == nil || !ok {
				continue
			}
			restart = restart || restartsOnResize(co, w)
			for _, k := range []string{"resources", "resizePolicy"} {
				if !jsonobj.Equal(co[k], w[k]) {
					changed = true
					if v, ok := w[k]; ok {
						co[k] = jsonobj.Clone(v)
					} else {
						delete(co, k)
					}
				}
			}
		}
	}
	if err := APIAnswer(kube.ValidatePodResize(old, o)); err != nil {
		return err
	}
	s.bump(KindPod, o)
	s.put(KindPod, name, o)
	s.suspect(KindPod, name)
	if changed {
		s.podSpecChanged(name, restart)
	}
	return nil
}

// restartsOnResize: resizing container old to want's resources restarts it, as the kubelet does for a CPU or
// memory change whose resizePolicy (want's, the one the resize sets) is RestartContainer; under NotRequired,
// the default, the kubelet resizes it live.
func restartsOnResize(old, want Obj) bool {
	for _, r := range []string{"cpu", "memory"} {
		if jsonobj.Equal(jsonobj.Get(old, "resources.requests."+r), jsonobj.Get(want, "resources.requests."+r)) &&
			jsonobj.Equal(jsonobj.Get(old, "resources.limits."+r), jsonobj.Get(want, "resources.limits."+r)) {
			continue
		}
		for _, p := range jsonobj.GetArr(want, "resizePolicy") {
			if jsonobj.GetStr(p, "resourceName") == r && jsonobj.GetStr(p, "restartPolicy") == "RestartContainer" {
				return true
			}
		}
	}
	return false
}

func (s *APIServer) podSpecChanged(name string, restart bool) {
	if s.onPodSpecChanged != nil {
		s.onPodSpecChanged(name, restart)
	}
}

// containerImages are a pod's images, by list and container name.
func containerImages(p Obj) map[string]string {
	m := map[string]string{}
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range jsonobj.GetArr(p, "spec."+list) {
			m[list+"/"+jsonobj.GetStr(c, "name")] = jsonobj.GetStr(c, "image")
		}
	}
	return m
}

// UpdateStatus is a PUT of the set to its status subresource: only .status changes; a resourceVersion
// in obj is a precondition (Conflict when stale), as for Update.
func (s *APIServer) UpdateStatus(obj Obj) error {
	name := jsonobj.GetStr(obj, "metadata.name")
	if s.set == nil || jsonobj.GetStr(s.set, "metadata.name") != name {
		return NewAPIError("NotFound", "statefulsets.apps %q not found", name)
	}
	if rv := jsonobj.GetStr(obj, "metadata.resourceVersion"); rv != "" && rv != jsonobj.GetStr(s.set, "metadata.resourceVersion") {
		return staleConflict(KindSet, name)
	}
	// A new object, as every write makes, sharing the old one's spec: no write changes an object in place
	// (each clones what it changes), and a status write is most of a rollout's syncs.
	o := maps.Clone(s.set)
	if md, ok := o["metadata"]; ok {
		o["metadata"] = jsonobj.Clone(md) // bump writes its resourceVersion
	}
	o["status"] = jsonobj.Clone(obj["status"])
	s.bump(KindSet, o)
	s.set = o
	return nil
}

// Patch applies a strategic merge patch. A metadata.uid in the patch is a precondition.
func (s *APIServer) Patch(kind, name string, patch Obj) error {
	old := s.Get(kind, name)
	if old == nil || kind == KindSet {
		return NewAPIError("NotFound", "%s %q not found", resourceName(kind), name)
	}
	if uid := jsonobj.GetStr(patch, "metadata.uid"); uid != "" && uid != jsonobj.GetStr(old, "metadata.uid") {
		return uidConflict(uid, jsonobj.GetStr(old, "metadata.uid"))
	}
	o := strategicMerge(jsonobj.CloneObj(old), patch)
	if kind == KindClaim && claimResized(old, o) && s.onClaimGrew != nil {
		s.onClaimGrew(name)
	}
	s.bump(kind, o)
	s.put(kind, name, o)
	s.suspect(kind, name)
	return nil
}

// Delete removes an object. Pods are deleted gracefully: they get a deletionTimestamp and grace
// period and stay until the kubelet reports them gone; deleting a terminating pod changes nothing.
// A uid, when not empty, is a precondition (Conflict when the object has another).
func (s *APIServer) Delete(kind, name, uid string) error {
	old := s.Get(kind, name)
	if old == nil {
		return NewAPIError("NotFound", "%s %q not found", resourceName(kind), name)
	}
	if have := jsonobj.GetStr(old, "metadata.uid"); uid != "" && uid != have {
		return uidConflict(uid, have)
	}
	switch kind {
	case KindSet:
		s.set = nil
		s.ownersChanged = true
	case KindPod:
		if jsonobj.Get(old, "metadata.deletionTimestamp") != nil {
			return nil
		}
		s.markTerminating(old)
		s.bump(kind, old)
	default:
		s.remove(kind, name)
		s.ownersChanged = true
	}
	return nil
}

func (s *APIServer) markTerminating(pod Obj) {
	grace, ok := jsonobj.GetInt(pod, "spec.terminationGracePeriodSeconds")
	if !ok {
		grace = 30
	}
	md := jsonobj.Ensure(pod, "metadata")
	md["deletionTimestamp"] = s.now()
	md["deletionGracePeriodSeconds"] = jsonobj.Num(grace)
	if s.onPodDeleted != nil {
		s.onPodDeleted(jsonobj.GetStr(pod, "metadata.name"))
	}
}

// removePod is the kubelet confirming termination: the object disappears.
func (s *APIServer) removePod(name string) {
	s.remove(KindPod, name)
	s.ownersChanged = true
}

// MutatePod changes a pod's status as the kubelet would (a status write: resourceVersion bumps).
func (s *APIServer) MutatePod(name string, f func(p Obj)) bool {
	p := s.objs[KindPod][name]
	if p == nil {
		return false
	}
	f(p)
	s.bump(KindPod, p)
	return true
}

// staleConflict is kube-apiserver's answer to a write whose resourceVersion precondition is stale.
func staleConflict(kind, name string) error {
	return NewAPIError("Conflict", "Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", resourceName(kind), name)
}

// uidConflict is kube-apiserver's answer to a write whose uid precondition does not hold.
func uidConflict(want, have string) error {
	return NewAPIError("Conflict", "Precondition failed: UID in precondition: %s, UID in object meta: %s", want, have)
}

func resourceName(kind string) string {
	switch kind {
	case KindPod:
		return "pods"
	case KindClaim:
		return "persistentvolumeclaims"
	case KindRevision:
		return "controllerrevisions.apps"
	case KindSet:
		return "statefulsets.apps"
	}
	return kind
}

// qualifiedKind is how the API server names a kind in its messages: Kind.group, the core group bare.
func qualifiedKind(kind string) string {
	if kind == KindRevision || kind == KindSet {
		return kind + ".apps"
	}
	return kind
}

// Namespace is the namespace the server holds.
func (s *APIServer) Namespace() string { return s.ns }

// NoteCount is how many notes (what happened outside the controller) are gathered since TakeNotes.
func (s *APIServer) NoteCount() int { return len(s.notes) }

// Preload stores the set (KindSet; name unused) or an object as the world held it before the replay
// began: as given, without a write's semantics (no metadata assigned, no hooks), the watches told.
func (s *APIServer) Preload(kind, name string, o Obj) {
	if kind == KindSet {
		s.set = o
		return
	}
	s.put(kind, name, o)
}

// ContinueUIDs makes the uids the server hands out continue above the highest of the replay's own form
// the world holds, so that none is handed out again.
func (s *APIServer) ContinueUIDs() { s.ids.uidBase = s.maxSimUID() }

// ContinueResourceVersions makes the resourceVersions continue above the highest the world holds.
func (s *APIServer) ContinueResourceVersions() { s.ids.rvBase = s.maxResourceVersion() }

// RestartIDs starts uids and resourceVersions from 1 again (the reference harness's fresh simulation).
func (s *APIServer) RestartIDs() { s.ids = ids{} }

// maxSimUID is the highest uid of the replay's own form (SimUIDPrefix + a number) that the world holds.
func (s *APIServer) maxSimUID() int {
	return s.maxOver(func(o Obj) string {
		if u, ok := strings.CutPrefix(jsonobj.GetStr(o, "metadata.uid"), SimUIDPrefix); ok {
			return u
		}
		return ""
	})
}

func (s *APIServer) maxResourceVersion() int {
	return s.maxOver(func(o Obj) string { return jsonobj.GetStr(o, "metadata.resourceVersion") })
}

// maxOver is the highest decimal number field reads from the world's objects. Decimal: a uid's number is
// zero-padded ("000000001027"), which fmt.Sscan reads as octal (or not at all, "000000000999"), so a world
// loaded from a snapshot handed out uids its own objects had.
func (s *APIServer) maxOver(field func(Obj) string) int {
	best := 0
	check := func(o Obj) {
		if n, err := strconv.Atoi(field(o)); err == nil && n > best {
			best = n
		}
	}
	if s.set != nil {
		check(s.set)
	}
	for _, m := range s.objs {
		for _, o := range m {
			check(o)
		}
	}
	return best
}

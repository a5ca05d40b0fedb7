package statefulset

import (
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// objectMeta holds the metadata fields the controller reads.
type objectMeta struct {
	Name, Namespace, UID string
	ResourceVersion      string // what a reference to the unchanged object names (object_cache.go)
	Generation           int64
	Created              time.Time
	Deleting             bool
	DeletionTimestamp    time.Time
	Labels               map[string]string
	Annotations          map[string]string
	OwnerRefs            []ownerRef
}

type ownerRef struct {
	APIVersion, Kind, Name, UID string
	Controller                  bool
}

// controllerRef returns the owner reference marked as controller, if any.
func (m *objectMeta) controllerRef() *ownerRef {
	for i := range m.OwnerRefs {
		if m.OwnerRefs[i].Controller {
			return &m.OwnerRefs[i]
		}
	}
	return nil
}

// lazyObject is an object of the snapshot kept as its JSON text until the sync needs its tree (to
// change it or send it): a sync reads a few fields of every pod but writes a handful of objects, and
// building the tree of every pod was most of a reconcile's time and memory.
type lazyObject struct {
	src   jsonv.Text // "" for an object the controller builds
	tree  jsonv.Value
	built bool
}

// obj returns the object's tree, built on first use; callers may change it in place.
func (o *lazyObject) obj() *jsonv.Value {
	if !o.built {
		if o.src != "" {
			o.tree = o.src.Value()
		}
		o.built = true
	}
	return &o.tree
}

func (o *lazyObject) setObj(v jsonv.Value) { o.tree, o.built = v, true }

// podVolume is what storageMatches reads of a pod volume.
type podVolume struct {
	Name      string
	PVC       bool // persistentVolumeClaim is an object
	ClaimName string
}

// pod is a Pod of the snapshot, or a pod the controller is about to create (not created: Phase "").
type pod struct {
	lazyObject
	Meta       objectMeta
	vols       []podVolume // spec.volumes as decoded (the tree, once built, is the truth)
	Phase      string
	Ready      bool      // the Ready condition is True
	ReadySince time.Time // lastTransitionTime of the Ready condition (zero if absent)
	Parent     string
	Ordinal    int64
	rev        string // the controller-revision-hash label (read for every pod several times a sync)
	inPlaceRev string // annotation ordinal.dev/in-place-update (extended module only; in_place_update.go)
	synthetic  bool   // built by the controller for an empty replica slot
	// memo: its claim names and the checks that read only it and the set's identity (pod_memo.go), shared by
	// the copies each sync makes of a held pod; nil for a pod the controller made
	memo *podMemo
}

// claim is a PersistentVolumeClaim of the snapshot.
type claim struct {
	lazyObject
	Meta objectMeta
}

// revision is a ControllerRevision of the snapshot (or one the controller creates).
type revision struct {
	lazyObject
	Meta     objectMeta
	DataRaw  []byte // exactly the bytes of "data" as the API object carries them (nil for null)
	Revision int64
	created  bool // created in this sync (not from the snapshot)
	// memo: what syncs find of a revision the instance holds from its data (template.go), shared by the copies
	// each sync makes of a held revision, and by the revisions of the set's template an instance proposes while
	// the template stays (setPatch); nil for one whose data the controller changed (adoption.go)
	memo *revisionMemo
}

// revisionMemo is what syncs find of a revision's data (DataRaw, which no holder of the memo changes): found
// once per revision an instance holds, not once per sync. Under TinyGo's leaking collector what a call
// allocates is what gets an instance recycled; parsing and re-encoding the same data every sync of a set whose
// update revision is yet to be created was most of what such a sync allocated (template.go).
type revisionMemo struct {
	own      bool // template is the revision's own (revisionTemplate), found
	template jsonv.Value
	// semantic: the data as setMatchesLatestExistingRevision re-serialises it when the template is the revision's
	// own (the set's plays no part), found (semanticFound), or failed to (semanticErr) (semanticallyEqual)
	semanticFound, semanticErr bool
	semantic                   []byte
	// data: DataRaw parsed (parsed), the data of the object createRevision sends (revisionObject); read only
	parsed bool
	data   jsonv.Value
	// hash: hashRevision of DataRaw with collision count hashCount (hashed: found)
	hashed    bool
	hashCount int32
	hash      string
	// labels: newRevision's labels under hash labelsHash (revisionLabels); read only
	labelsHash string
	labels     map[string]string
}

type intOrString struct {
	IsString bool
	Int      int64
	Str      string
}

type selectorRequirement struct {
	Key, Operator string
	Values        []string
}

type labelSelector struct {
	Nil         bool
	MatchLabels map[string]string
	MatchExprs  []selectorRequirement
}

type setStatus struct {
	ObservedGeneration int64
	Replicas           int32
	ReadyReplicas      int32
	CurrentReplicas    int32
	UpdatedReplicas    int32
	AvailableReplicas  int32
	CurrentRevision    string
	UpdateRevision     string
	CollisionCount     int32
	HasCollisionCount  bool
	Conditions         []condition
}

type condition struct {
	Type, Status, Reason, Message string
	LastTransitionTime            string // as encoded ("" means null)
}

// statefulSet is the StatefulSet of the snapshot.
type statefulSet struct {
	// APIVersion names the owner (kind StatefulSet) in the ownerReferences the module writes:
	// apps/v1, or a custom resource's with apps/v1's spec and status (the host's CRD mode).
	APIVersion           string
	Meta                 objectMeta
	Replicas             int32
	Selector             labelSelector
	Template             jsonv.Value
	ServiceName          string
	PodManagementPolicy  string
	StrategyType         string
	HasRollingUpdate     bool
	Partition            int32
	MaxUnavailable       *intOrString
	RevisionHistoryLimit int32
	MinReadySeconds      int32
	Start                int32
	WhenDeleted          string
	WhenScaled           string
	ClaimTemplates       []jsonv.Value
	ClaimTemplateNames   []string
	Status               setStatus
	// templateText: spec.template as the snapshot's text ("": unknown), which Template is the tree of; it points
	// into the input, so nothing may keep it past the sync
	templateText string
}

// snapshot is a decoded, validated ABI v1 snapshot.
type snapshot struct {
	Now       time.Time
	Set       *statefulSet
	Pods      []*pod
	Revisions []*revision
	Claims    []*claim
	Features  Features
	// EventActions: the host asked for events[].action (abi/README.md, Events).
	EventActions bool
	// WriteFailures: writes of an earlier plan for this snapshot the API server refused (write_failures.go).
	WriteFailures []writeFailure
	// delta: what a delta snapshot changes in the objects the instance holds, applied once the call is done
	// (object_delta.go); nil for a snapshot sent whole.
	delta *objectDelta
	// maps: the instance's lookup maps for the sync to empty and fill (nil: the sync makes its own)
	maps *syncMaps
}

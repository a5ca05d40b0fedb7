package statefulset

import (
	"strconv"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/guest/jsonv"
	"github.com/tidwall/gjson"
)

// PlanError is the plan-level error of ABI v1.
type PlanError struct {
	Code    string
	Message string
	Path    string
}

func (e *PlanError) Error() string { return e.Code + ": " + e.Message }

// Error codes.
const (
	CodeInvalidJSON        = "InvalidJSON"
	CodeInvalidSnapshot    = "InvalidSnapshot"
	CodeUnsupportedABI     = "UnsupportedABI"
	CodeUnknownFeatureGate = "UnknownFeatureGate"
	CodeSyncFailed         = "SyncFailed"
)

// Well-known label keys and values.
const (
	labelPodName        = "statefulset.kubernetes.io/pod-name"
	labelPodIndex       = "apps.kubernetes.io/pod-index"
	labelRevision       = "controller-revision-hash"
	labelRevisionHash   = "controller.kubernetes.io/hash"
	policyRetain        = "Retain"
	policyDelete        = "Delete"
	strategyRolling     = "RollingUpdate"
	strategyOnDelete    = "OnDelete"
	strategyRecreate    = "Recreate"
	managementParallel  = "Parallel"
	phasePending        = "Pending"
	phaseRunning        = "Running"
	phaseFailed         = "Failed"
	phaseSucceeded      = "Succeeded"
	appsV1              = "apps/v1"
	kindStatefulSet     = "StatefulSet"
	kindPod             = "Pod"
	kindPVC             = "PersistentVolumeClaim"
	kindRevision        = "ControllerRevision"
	defaultNamespace    = "default"
	maxRevisionNameBase = 223
)

// objectMeta holds the metadata fields the controller reads.
type objectMeta struct {
	Name, Namespace, UID string
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

// pod is a Pod of the snapshot, or a pod the controller is about to create (not created: Phase "").
type pod struct {
	Meta       objectMeta
	Raw        jsonv.Value
	Phase      string
	Ready      bool      // the Ready condition is True
	ReadySince time.Time // lastTransitionTime of the Ready condition (zero if absent)
	Parent     string
	Ordinal    int
	synthetic  bool // built by the controller for an empty replica slot
}

// claim is a PersistentVolumeClaim of the snapshot.
type claim struct {
	Meta objectMeta
	Raw  jsonv.Value
}

// revision is a ControllerRevision of the snapshot (or one the controller creates).
type revision struct {
	Meta     objectMeta
	Raw      jsonv.Value
	DataRaw  []byte // exactly the bytes of "data" as the API object carries them (nil for null)
	Revision int64
	created  bool // created in this sync (not from the snapshot)
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
	Meta                 objectMeta
	Raw                  jsonv.Value
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
}

// snapshot is a decoded, validated ABI v1 snapshot.
type snapshot struct {
	Now       time.Time
	Set       *statefulSet
	Pods      []*pod
	Revisions []*revision
	Claims    []*claim
	Features  Features
}

// decoder reads typed fields out of the value tree, remembering the first error with its path.
type decoder struct {
	err *PlanError
}

func (d *decoder) fail(path, msg string) {
	if d.err == nil {
		d.err = &PlanError{Code: CodeInvalidSnapshot, Path: path, Message: msg}
	}
}

func typeErr(want string, got jsonv.Value) string {
	return "expected " + want + ", got " + got.K.String()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func (d *decoder) object(v jsonv.Value, path string) jsonv.Value {
	if v.K == jsonv.Null {
		return jsonv.Value{K: jsonv.Object}
	}
	if v.K != jsonv.Object {
		d.fail(path, typeErr("object", v))
		return jsonv.Value{K: jsonv.Object}
	}
	return v
}

func (d *decoder) array(v jsonv.Value, path string) []jsonv.Value {
	if v.K == jsonv.Null {
		return nil
	}
	if v.K != jsonv.Array {
		d.fail(path, typeErr("array", v))
		return nil
	}
	return v.A
}

func (d *decoder) str(v jsonv.Value, path string) string {
	switch v.K {
	case jsonv.Null:
		return ""
	case jsonv.String:
		return v.S
	}
	d.fail(path, typeErr("string", v))
	return ""
}

func (d *decoder) boolean(v jsonv.Value, path string) bool {
	switch v.K {
	case jsonv.Null:
		return false
	case jsonv.Bool:
		return v.B
	}
	d.fail(path, typeErr("boolean", v))
	return false
}

// integer decodes an integer that must fit in bits (32 or 64) bits, as Go's decoder requires.
func (d *decoder) integer(v jsonv.Value, path string, bits int) (int64, bool) {
	switch v.K {
	case jsonv.Null:
		return 0, false
	case jsonv.Number:
		n, err := strconv.ParseInt(v.S, 10, bits)
		if err != nil {
			if strings.ContainsAny(v.S, ".eE") {
				d.fail(path, "expected integer, got non-integer number "+v.S)
			} else {
				d.fail(path, "integer "+v.S+" out of range for int"+strconv.Itoa(bits))
			}
			return 0, false
		}
		return n, true
	}
	d.fail(path, typeErr("integer", v))
	return 0, false
}

func (d *decoder) timestamp(v jsonv.Value, path string) (time.Time, bool) {
	switch v.K {
	case jsonv.Null:
		return time.Time{}, false
	case jsonv.String:
		if v.S == "" {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339, v.S)
		if err != nil {
			d.fail(path, "invalid RFC 3339 timestamp "+strconv.Quote(v.S))
			return time.Time{}, false
		}
		return t, true
	}
	d.fail(path, typeErr("string (RFC 3339 timestamp)", v))
	return time.Time{}, false
}

func (d *decoder) stringMap(v jsonv.Value, path string) map[string]string {
	if v.K == jsonv.Null {
		return nil
	}
	if v.K != jsonv.Object {
		d.fail(path, typeErr("object", v))
		return nil
	}
	m := make(map[string]string, len(v.O))
	for _, mem := range v.O {
		if mem.Val.K == jsonv.Null {
			m[mem.Key] = ""
			continue
		}
		if mem.Val.K != jsonv.String {
			d.fail(join(path, mem.Key), typeErr("string", mem.Val))
			continue
		}
		m[mem.Key] = mem.Val.S
	}
	return m
}

func (d *decoder) meta(v jsonv.Value, path string) objectMeta {
	v = d.object(v, path)
	var m objectMeta
	m.Name = d.str(v.G("name"), join(path, "name"))
	m.Namespace = d.str(v.G("namespace"), join(path, "namespace"))
	m.UID = d.str(v.G("uid"), join(path, "uid"))
	m.Generation, _ = d.integer(v.G("generation"), join(path, "generation"), 64)
	m.Created, _ = d.timestamp(v.G("creationTimestamp"), join(path, "creationTimestamp"))
	m.DeletionTimestamp, m.Deleting = d.timestamp(v.G("deletionTimestamp"), join(path, "deletionTimestamp"))
	m.Labels = d.stringMap(v.G("labels"), join(path, "labels"))
	m.Annotations = d.stringMap(v.G("annotations"), join(path, "annotations"))
	refsPath := join(path, "ownerReferences")
	for i, r := range d.array(v.G("ownerReferences"), refsPath) {
		p := index(refsPath, i)
		r = d.object(r, p)
		m.OwnerRefs = append(m.OwnerRefs, ownerRef{
			APIVersion: d.str(r.G("apiVersion"), join(p, "apiVersion")),
			Kind:       d.str(r.G("kind"), join(p, "kind")),
			Name:       d.str(r.G("name"), join(p, "name")),
			UID:        d.str(r.G("uid"), join(p, "uid")),
			Controller: d.boolean(r.G("controller"), join(p, "controller")),
		})
		d.boolean(r.G("blockOwnerDeletion"), join(p, "blockOwnerDeletion"))
	}
	return m
}

// decodeSnapshot validates the snapshot tree and extracts what the controller reads.
// input is the original JSON (used to keep ControllerRevision data bytes verbatim).
func decodeSnapshot(root jsonv.Value, input []byte) (*snapshot, *PlanError) {
	if root.K != jsonv.Object {
		return nil, &PlanError{Code: CodeInvalidSnapshot, Message: "snapshot must be a JSON object, got " + root.K.String()}
	}
	abi, ok := root.Get("abi")
	if !ok || abi.K == jsonv.Null {
		return nil, &PlanError{Code: CodeUnsupportedABI, Path: "abi", Message: "snapshot has no \"abi\"; this module speaks ABI 1"}
	}
	if abi.K != jsonv.Number {
		return nil, &PlanError{Code: CodeUnsupportedABI, Path: "abi", Message: "\"abi\" must be the integer 1, " + typeErr("integer", abi)}
	}
	if abi.S != "1" {
		return nil, &PlanError{Code: CodeUnsupportedABI, Path: "abi", Message: "unsupported ABI version " + abi.S + "; this module speaks ABI 1"}
	}
	d := &decoder{}
	snap := &snapshot{Features: DefaultFeatures()}

	// features
	if fv, ok := root.Get("features"); ok && fv.K != jsonv.Null {
		if fv.K != jsonv.Object {
			return nil, &PlanError{Code: CodeInvalidSnapshot, Path: "features", Message: typeErr("object", fv)}
		}
		for _, m := range fv.O {
			p := "features." + m.Key
			if m.Val.K != jsonv.Bool {
				if !snap.Features.set(m.Key, false) {
					return nil, &PlanError{Code: CodeUnknownFeatureGate, Path: p, Message: "unknown feature gate " + strconv.Quote(m.Key)}
				}
				return nil, &PlanError{Code: CodeInvalidSnapshot, Path: p, Message: typeErr("boolean", m.Val)}
			}
			if !snap.Features.set(m.Key, m.Val.B) {
				return nil, &PlanError{Code: CodeUnknownFeatureGate, Path: p, Message: "unknown feature gate " + strconv.Quote(m.Key)}
			}
		}
	}

	// now
	nv, ok := root.Get("now")
	if !ok || nv.K == jsonv.Null || (nv.K == jsonv.String && nv.S == "") {
		return nil, &PlanError{Code: CodeInvalidSnapshot, Path: "now", Message: "snapshot has no \"now\" (RFC 3339 time of the sync)"}
	}
	if nv.K != jsonv.String {
		return nil, &PlanError{Code: CodeInvalidSnapshot, Path: "now", Message: typeErr("string (RFC 3339 time)", nv)}
	}
	now, err := time.Parse(time.RFC3339Nano, nv.S)
	if err != nil {
		return nil, &PlanError{Code: CodeInvalidSnapshot, Path: "now", Message: "invalid RFC 3339 time " + strconv.Quote(nv.S)}
	}
	snap.Now = now

	sv, ok := root.Get("statefulSet")
	if !ok || sv.K == jsonv.Null {
		return nil, &PlanError{Code: CodeInvalidSnapshot, Path: "statefulSet", Message: "snapshot has no statefulSet"}
	}
	if sv.K != jsonv.Object {
		return nil, &PlanError{Code: CodeInvalidSnapshot, Path: "statefulSet", Message: typeErr("object", sv)}
	}
	snap.Set = d.statefulSet(sv, "statefulSet")
	if d.err != nil {
		return nil, d.err
	}
	ns := snap.Set.Meta.Namespace

	for i, pv := range d.array(root.G("pods"), "pods") {
		p := d.pod(pv, index("pods", i))
		if d.err != nil {
			return nil, d.err
		}
		if p.Meta.Namespace == "" {
			p.Meta.Namespace = ns
		}
		snap.Pods = append(snap.Pods, p)
	}
	var rawRevs []gjson.Result
	revVals := d.array(root.G("revisions"), "revisions")
	if len(revVals) > 0 {
		rawRevs = rawRevisionData(input)
	}
	for i, rv := range revVals {
		r := d.revision(rv, index("revisions", i))
		if d.err != nil {
			return nil, d.err
		}
		if r.Meta.Namespace == "" {
			r.Meta.Namespace = ns
		}
		if i < len(rawRevs) && rawRevs[i].Exists() && rawRevs[i].Raw != "null" {
			r.DataRaw = []byte(rawRevs[i].Raw)
		} else if dv := rv.G("data"); dv.K != jsonv.Null {
			r.DataRaw = jsonv.Encode(dv)
		}
		snap.Revisions = append(snap.Revisions, r)
	}
	for i, cv := range d.array(root.G("claims"), "claims") {
		p := index("claims", i)
		cv = d.object(cv, p)
		c := &claim{Meta: d.meta(cv.G("metadata"), join(p, "metadata")), Raw: cv}
		if d.err != nil {
			return nil, d.err
		}
		if c.Meta.Namespace == "" {
			c.Meta.Namespace = ns
		}
		snap.Claims = append(snap.Claims, c)
	}
	if d.err != nil {
		return nil, d.err
	}
	return snap, nil
}

// rawRevisionData returns, per revision, the verbatim source of its "data" member: the
// API machinery keeps RawExtension bytes exactly as received, and revision equality compares them.
func rawRevisionData(input []byte) []gjson.Result {
	var out []gjson.Result
	top := gjson.ParseBytes(input)
	var revs gjson.Result
	top.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "revisions" {
			revs = v // last one wins, like the decoder
		}
		return true
	})
	revs.ForEach(func(_, item gjson.Result) bool {
		var data gjson.Result
		item.ForEach(func(k, v gjson.Result) bool {
			if k.Str == "data" {
				data = v
			}
			return true
		})
		out = append(out, data)
		return true
	})
	return out
}

func (d *decoder) pod(v jsonv.Value, path string) *pod {
	v = d.object(v, path)
	p := &pod{Raw: v, Meta: d.meta(v.G("metadata"), join(path, "metadata"))}
	st := d.object(v.G("status"), join(path, "status"))
	p.Phase = d.str(st.G("phase"), join(path, "status.phase"))
	condPath := join(path, "status.conditions")
	found := false
	for i, c := range d.array(st.G("conditions"), condPath) {
		cp := index(condPath, i)
		c = d.object(c, cp)
		typ := d.str(c.G("type"), join(cp, "type"))
		status := d.str(c.G("status"), join(cp, "status"))
		ltt, _ := d.timestamp(c.G("lastTransitionTime"), join(cp, "lastTransitionTime"))
		if typ == "Ready" && !found {
			found = true
			p.Ready = status == "True"
			p.ReadySince = ltt
		}
	}
	spec := d.object(v.G("spec"), join(path, "spec"))
	volPath := join(path, "spec.volumes")
	for i, vol := range d.array(spec.G("volumes"), volPath) {
		vp := index(volPath, i)
		vol = d.object(vol, vp)
		d.str(vol.G("name"), join(vp, "name"))
		pvc := d.object(vol.G("persistentVolumeClaim"), join(vp, "persistentVolumeClaim"))
		d.str(pvc.G("claimName"), join(vp, "persistentVolumeClaim.claimName"))
	}
	p.Parent, p.Ordinal = parentAndOrdinal(p.Meta.Name)
	return p
}

func (d *decoder) revision(v jsonv.Value, path string) *revision {
	v = d.object(v, path)
	r := &revision{Raw: v, Meta: d.meta(v.G("metadata"), join(path, "metadata"))}
	r.Revision, _ = d.integer(v.G("revision"), join(path, "revision"), 64)
	return r
}

func (d *decoder) statefulSet(v jsonv.Value, path string) *statefulSet {
	s := &statefulSet{Raw: v}
	s.Meta = d.meta(v.G("metadata"), join(path, "metadata"))
	if d.err != nil {
		return s
	}
	if s.Meta.Name == "" {
		d.fail(join(path, "metadata.name"), "the StatefulSet has no name")
	}
	if s.Meta.Namespace == "" {
		s.Meta.Namespace = defaultNamespace
	}
	sp := join(path, "spec")
	spec := d.object(v.G("spec"), sp)
	if n, ok := d.integer(spec.G("replicas"), join(sp, "replicas"), 32); ok {
		s.Replicas = int32(n)
	} else if d.err == nil {
		d.fail(join(sp, "replicas"), "spec.replicas is required (snapshots carry API-server-defaulted objects)")
	}
	if s.Replicas < 0 {
		d.fail(join(sp, "replicas"), "spec.replicas must not be negative")
	}
	s.Selector = d.selector(spec.G("selector"), join(sp, "selector"))
	tp := join(sp, "template")
	s.Template = d.object(spec.G("template"), tp)
	tm := d.object(s.Template.G("metadata"), join(tp, "metadata"))
	d.stringMap(tm.G("labels"), join(tp, "metadata.labels"))
	d.stringMap(tm.G("annotations"), join(tp, "metadata.annotations"))
	for i, f := range d.array(tm.G("finalizers"), join(tp, "metadata.finalizers")) {
		d.str(f, index(join(tp, "metadata.finalizers"), i))
	}
	d.object(s.Template.G("spec"), join(tp, "spec"))
	s.ServiceName = d.str(spec.G("serviceName"), join(sp, "serviceName"))
	s.PodManagementPolicy = d.str(spec.G("podManagementPolicy"), join(sp, "podManagementPolicy"))
	up := join(sp, "updateStrategy")
	us := d.object(spec.G("updateStrategy"), up)
	s.StrategyType = d.str(us.G("type"), join(up, "type"))
	if ru, ok := us.Get("rollingUpdate"); ok && ru.K != jsonv.Null {
		rp := join(up, "rollingUpdate")
		ru = d.object(ru, rp)
		s.HasRollingUpdate = true
		if n, ok := d.integer(ru.G("partition"), join(rp, "partition"), 32); ok {
			s.Partition = int32(n)
		}
		if mu, ok := ru.Get("maxUnavailable"); ok && mu.K != jsonv.Null {
			switch mu.K {
			case jsonv.String:
				s.MaxUnavailable = &intOrString{IsString: true, Str: mu.S}
			case jsonv.Number:
				n, _ := d.integer(mu, join(rp, "maxUnavailable"), 32)
				s.MaxUnavailable = &intOrString{Int: n}
			default:
				d.fail(join(rp, "maxUnavailable"), typeErr("integer or string", mu))
			}
		}
	}
	if n, ok := d.integer(spec.G("revisionHistoryLimit"), join(sp, "revisionHistoryLimit"), 32); ok {
		s.RevisionHistoryLimit = int32(n)
	} else if d.err == nil {
		d.fail(join(sp, "revisionHistoryLimit"), "spec.revisionHistoryLimit is required (snapshots carry API-server-defaulted objects)")
	}
	if n, ok := d.integer(spec.G("minReadySeconds"), join(sp, "minReadySeconds"), 32); ok {
		s.MinReadySeconds = int32(n)
	}
	if ov, ok := spec.Get("ordinals"); ok && ov.K != jsonv.Null {
		ov = d.object(ov, join(sp, "ordinals"))
		if n, ok := d.integer(ov.G("start"), join(sp, "ordinals.start"), 32); ok {
			s.Start = int32(n)
		}
	}
	s.WhenDeleted, s.WhenScaled = policyRetain, policyRetain
	if pv, ok := spec.Get("persistentVolumeClaimRetentionPolicy"); ok && pv.K != jsonv.Null {
		pp := join(sp, "persistentVolumeClaimRetentionPolicy")
		pv = d.object(pv, pp)
		s.WhenDeleted = d.str(pv.G("whenDeleted"), join(pp, "whenDeleted"))
		s.WhenScaled = d.str(pv.G("whenScaled"), join(pp, "whenScaled"))
	}
	vp := join(sp, "volumeClaimTemplates")
	for i, t := range d.array(spec.G("volumeClaimTemplates"), vp) {
		p := index(vp, i)
		t = d.object(t, p)
		m := d.object(t.G("metadata"), join(p, "metadata"))
		s.ClaimTemplates = append(s.ClaimTemplates, t)
		s.ClaimTemplateNames = append(s.ClaimTemplateNames, d.str(m.G("name"), join(p, "metadata.name")))
		d.stringMap(m.G("labels"), join(p, "metadata.labels"))
	}
	stp := join(path, "status")
	st := d.object(v.G("status"), stp)
	s.Status.ObservedGeneration, _ = d.integer(st.G("observedGeneration"), join(stp, "observedGeneration"), 64)
	i32 := func(key string) int32 {
		n, _ := d.integer(st.G(key), join(stp, key), 32)
		return int32(n)
	}
	s.Status.Replicas = i32("replicas")
	s.Status.ReadyReplicas = i32("readyReplicas")
	s.Status.CurrentReplicas = i32("currentReplicas")
	s.Status.UpdatedReplicas = i32("updatedReplicas")
	s.Status.AvailableReplicas = i32("availableReplicas")
	s.Status.CurrentRevision = d.str(st.G("currentRevision"), join(stp, "currentRevision"))
	s.Status.UpdateRevision = d.str(st.G("updateRevision"), join(stp, "updateRevision"))
	if n, ok := d.integer(st.G("collisionCount"), join(stp, "collisionCount"), 32); ok {
		s.Status.CollisionCount = int32(n)
		s.Status.HasCollisionCount = true
	}
	cp := join(stp, "conditions")
	for i, c := range d.array(st.G("conditions"), cp) {
		p := index(cp, i)
		c = d.object(c, p)
		cond := condition{
			Type:    d.str(c.G("type"), join(p, "type")),
			Status:  d.str(c.G("status"), join(p, "status")),
			Reason:  d.str(c.G("reason"), join(p, "reason")),
			Message: d.str(c.G("message"), join(p, "message")),
		}
		if t, ok := d.timestamp(c.G("lastTransitionTime"), join(p, "lastTransitionTime")); ok {
			cond.LastTransitionTime = formatTime(t)
		}
		s.Status.Conditions = append(s.Status.Conditions, cond)
	}
	return s
}

func (d *decoder) selector(v jsonv.Value, path string) labelSelector {
	if v.K == jsonv.Null {
		return labelSelector{Nil: true}
	}
	v = d.object(v, path)
	sel := labelSelector{MatchLabels: d.stringMap(v.G("matchLabels"), join(path, "matchLabels"))}
	ep := join(path, "matchExpressions")
	for i, e := range d.array(v.G("matchExpressions"), ep) {
		p := index(ep, i)
		e = d.object(e, p)
		r := selectorRequirement{
			Key:      d.str(e.G("key"), join(p, "key")),
			Operator: d.str(e.G("operator"), join(p, "operator")),
		}
		for j, val := range d.array(e.G("values"), join(p, "values")) {
			r.Values = append(r.Values, d.str(val, index(join(p, "values"), j)))
		}
		sel.MatchExprs = append(sel.MatchExprs, r)
	}
	return sel
}

// formatTime formats t the way metav1.Time marshals (RFC 3339, seconds, UTC).
func formatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

package statefulset

import (
	"strconv"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/guest/jsonv"
	"github.com/tidwall/gjson"
)

// MaxReplicas is the largest spec.replicas the module accepts (one slot per replica is kept
// during a pass, as upstream does).
const MaxReplicas = 1 << 22

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
	Ordinal    int64
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
	err  *PlanError
	fast bool // skip building error paths (decodeSnapshot re-runs with paths on error)
}

func (d *decoder) join(path, key string) string {
	if d.fast {
		return ""
	}
	return join(path, key)
}

func (d *decoder) index(path string, i int) string {
	if d.fast {
		return ""
	}
	return index(path, i)
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

func (d *decoder) str(v jsonv.Value, base, key string) string {
	switch v.K {
	case jsonv.Null:
		return ""
	case jsonv.String:
		return v.S
	}
	d.fail(d.join(base, key), typeErr("string", v))
	return ""
}

func (d *decoder) boolean(v jsonv.Value, base, key string) bool {
	switch v.K {
	case jsonv.Null:
		return false
	case jsonv.Bool:
		return v.B
	}
	d.fail(d.join(base, key), typeErr("boolean", v))
	return false
}

// integer decodes an integer that must fit in bits (32 or 64) bits, as Go's decoder requires.
func (d *decoder) integer(v jsonv.Value, base, key string, bits int) (int64, bool) {
	switch v.K {
	case jsonv.Null:
		return 0, false
	case jsonv.Number:
		n, err := strconv.ParseInt(v.S, 10, bits)
		if err != nil {
			if strings.ContainsAny(v.S, ".eE") {
				d.fail(d.join(base, key), "expected integer, got non-integer number "+v.S)
			} else {
				d.fail(d.join(base, key), "integer "+v.S+" out of range for int"+strconv.Itoa(bits))
			}
			return 0, false
		}
		return n, true
	}
	d.fail(d.join(base, key), typeErr("integer", v))
	return 0, false
}

func (d *decoder) timestamp(v jsonv.Value, base, key string) (time.Time, bool) {
	switch v.K {
	case jsonv.Null:
		return time.Time{}, false
	case jsonv.String:
		if v.S == "" {
			return time.Time{}, false
		}
		t, err := parseTime(v.S)
		if err != nil {
			d.fail(d.join(base, key), "invalid RFC 3339 timestamp "+strconv.Quote(v.S))
			return time.Time{}, false
		}
		return t, true
	}
	d.fail(d.join(base, key), typeErr("string (RFC 3339 timestamp)", v))
	return time.Time{}, false
}

func (d *decoder) stringMap(v jsonv.Value, base, key string) map[string]string {
	if v.K == jsonv.Null {
		return nil
	}
	if v.K != jsonv.Object {
		d.fail(d.join(base, key), typeErr("object", v))
		return nil
	}
	m := make(map[string]string, len(v.O))
	for _, mem := range v.O {
		if mem.Val.K == jsonv.Null {
			m[mem.Key] = ""
			continue
		}
		if mem.Val.K != jsonv.String {
			d.fail(d.join(d.join(base, key), mem.Key), typeErr("string", mem.Val))
			continue
		}
		m[mem.Key] = mem.Val.S
	}
	return m
}

// parseTime parses RFC 3339 like metav1.Time (fast path for the common "2006-01-02T15:04:05Z").
func parseTime(s string) (time.Time, error) {
	if len(s) == 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == 'Z' {
		n := func(a, b int) int {
			v := 0
			for i := a; i < b; i++ {
				c := s[i]
				if c < '0' || c > '9' {
					return -1
				}
				v = v*10 + int(c-'0')
			}
			return v
		}
		y, mo, d, h, mi, se := n(0, 4), n(5, 7), n(8, 10), n(11, 13), n(14, 16), n(17, 19)
		if y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h >= 0 && h < 24 && mi >= 0 && mi < 60 && se >= 0 && se < 60 {
			t := time.Date(y, time.Month(mo), d, h, mi, se, 0, time.UTC)
			if t.Day() == d {
				return t, nil
			}
		}
	}
	return time.Parse(time.RFC3339, s)
}

func (d *decoder) meta(v jsonv.Value, path string, full bool) objectMeta {
	v = d.object(v, path)
	var m objectMeta
	m.Name = d.str(v.G("name"), path, "name")
	m.Namespace = d.str(v.G("namespace"), path, "namespace")
	m.UID = d.str(v.G("uid"), path, "uid")
	if full {
		m.Generation, _ = d.integer(v.G("generation"), path, "generation", 64)
		m.Created, _ = d.timestamp(v.G("creationTimestamp"), path, "creationTimestamp")
		m.Annotations = d.stringMap(v.G("annotations"), path, "annotations")
	}
	m.DeletionTimestamp, m.Deleting = d.timestamp(v.G("deletionTimestamp"), path, "deletionTimestamp")
	m.Labels = d.stringMap(v.G("labels"), path, "labels")
	refsPath := d.join(path, "ownerReferences")
	for i, r := range d.array(v.G("ownerReferences"), refsPath) {
		p := d.index(refsPath, i)
		r = d.object(r, p)
		m.OwnerRefs = append(m.OwnerRefs, ownerRef{
			APIVersion: d.str(r.G("apiVersion"), p, "apiVersion"),
			Kind:       d.str(r.G("kind"), p, "kind"),
			Name:       d.str(r.G("name"), p, "name"),
			UID:        d.str(r.G("uid"), p, "uid"),
			Controller: d.boolean(r.G("controller"), p, "controller"),
		})
		d.boolean(r.G("blockOwnerDeletion"), p, "blockOwnerDeletion")
	}
	return m
}

// decodeSnapshot validates the snapshot tree and extracts what the controller reads.
// input is the original JSON (used to keep ControllerRevision data bytes verbatim).
func decodeSnapshot(root jsonv.Value, input []byte) (*snapshot, *PlanError) {
	snap, err := decodeSnapshotWith(root, input, true)
	if err != nil && err.Code == CodeInvalidSnapshot {
		// decode again, building paths, to report where
		if _, perr := decodeSnapshotWith(root, input, false); perr != nil {
			return nil, perr
		}
	}
	return snap, err
}

func decodeSnapshotWith(root jsonv.Value, input []byte, fast bool) (*snapshot, *PlanError) {
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
	if f, err := strconv.ParseFloat(abi.S, 64); err != nil || f != 1 {
		return nil, &PlanError{Code: CodeUnsupportedABI, Path: "abi", Message: "unsupported ABI version " + abi.S + "; this module speaks ABI 1"}
	}
	d := &decoder{fast: fast}
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

	// An API server holds one object per namespace/name; a snapshot with two is not a state
	// the controller can observe.
	seen := map[string]string{}
	unique := func(kind, ns, name, path string) bool {
		k := kind + "/" + ns + "/" + name
		if prev, dup := seen[k]; dup {
			d.fail(d.join(path, "metadata.name"), "duplicate "+kind+" "+ns+"/"+name+" (also at "+prev+")")
			return false
		}
		seen[k] = path
		return true
	}
	for i, pv := range d.array(root.G("pods"), "pods") {
		p := d.pod(pv, d.index("pods", i))
		if d.err != nil {
			return nil, d.err
		}
		if p.Meta.Namespace == "" {
			p.Meta.Namespace = ns
		}
		if !unique("pod", p.Meta.Namespace, p.Meta.Name, d.index("pods", i)) {
			return nil, d.err
		}
		snap.Pods = append(snap.Pods, p)
	}
	var rawRevs []gjson.Result
	revVals := d.array(root.G("revisions"), "revisions")
	if len(revVals) > 0 {
		rawRevs = rawRevisionData(input)
	}
	for i, rv := range revVals {
		r := d.revision(rv, d.index("revisions", i))
		if d.err != nil {
			return nil, d.err
		}
		if r.Meta.Namespace == "" {
			r.Meta.Namespace = ns
		}
		if !unique("revision", r.Meta.Namespace, r.Meta.Name, d.index("revisions", i)) {
			return nil, d.err
		}
		if i < len(rawRevs) && rawRevs[i].Exists() && rawRevs[i].Raw != "null" {
			r.DataRaw = []byte(rawRevs[i].Raw)
		} else if dv := rv.G("data"); dv.K != jsonv.Null {
			r.DataRaw = jsonv.Encode(dv)
		}
		snap.Revisions = append(snap.Revisions, r)
	}
	for i, cv := range d.array(root.G("claims"), "claims") {
		p := d.index("claims", i)
		cv = d.object(cv, p)
		c := &claim{Meta: d.meta(cv.G("metadata"), d.join(p, "metadata"), false), Raw: cv}
		if d.err != nil {
			return nil, d.err
		}
		if c.Meta.Namespace == "" {
			c.Meta.Namespace = ns
		}
		if !unique("claim", c.Meta.Namespace, c.Meta.Name, p) {
			return nil, d.err
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
	revs := gjson.GetBytes(input, "revisions") // a copy of just the revisions array
	revs.ForEach(func(_, item gjson.Result) bool {
		var data gjson.Result
		item.ForEach(func(k, v gjson.Result) bool {
			if k.Str == "data" {
				data = v // the last one wins, like the decoder
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
	p := &pod{Raw: v, Meta: d.meta(v.G("metadata"), d.join(path, "metadata"), false)}
	st := d.object(v.G("status"), d.join(path, "status"))
	p.Phase = d.str(st.G("phase"), path, "status.phase")
	condPath := d.join(path, "status.conditions")
	found := false
	for i, c := range d.array(st.G("conditions"), condPath) {
		cp := d.index(condPath, i)
		c = d.object(c, cp)
		typ := d.str(c.G("type"), cp, "type")
		status := d.str(c.G("status"), cp, "status")
		ltt, _ := d.timestamp(c.G("lastTransitionTime"), cp, "lastTransitionTime")
		if typ == "Ready" && !found {
			found = true
			p.Ready = status == "True"
			p.ReadySince = ltt
		}
	}
	spec := d.object(v.G("spec"), d.join(path, "spec"))
	volPath := d.join(path, "spec.volumes")
	for i, vol := range d.array(spec.G("volumes"), volPath) {
		vp := d.index(volPath, i)
		vol = d.object(vol, vp)
		d.str(vol.G("name"), vp, "name")
		pvc := d.object(vol.G("persistentVolumeClaim"), d.join(vp, "persistentVolumeClaim"))
		d.str(pvc.G("claimName"), vp, "persistentVolumeClaim.claimName")
	}
	p.Parent, p.Ordinal = parentAndOrdinal(p.Meta.Name)
	return p
}

func (d *decoder) revision(v jsonv.Value, path string) *revision {
	v = d.object(v, path)
	r := &revision{Raw: v, Meta: d.meta(v.G("metadata"), d.join(path, "metadata"), true)}
	r.Revision, _ = d.integer(v.G("revision"), path, "revision", 64)
	return r
}

func (d *decoder) statefulSet(v jsonv.Value, path string) *statefulSet {
	s := &statefulSet{Raw: v}
	s.Meta = d.meta(v.G("metadata"), d.join(path, "metadata"), true)
	if d.err != nil {
		return s
	}
	if s.Meta.Name == "" {
		d.fail(d.join(path, "metadata.name"), "the StatefulSet has no name")
	}
	if s.Meta.Namespace == "" {
		s.Meta.Namespace = defaultNamespace
	}
	sp := d.join(path, "spec")
	spec := d.object(v.G("spec"), sp)
	if n, ok := d.integer(spec.G("replicas"), sp, "replicas", 32); ok {
		s.Replicas = int32(n)
	} else if d.err == nil {
		d.fail(d.join(sp, "replicas"), "spec.replicas is required (snapshots carry API-server-defaulted objects)")
	}
	if s.Replicas < 0 {
		d.fail(d.join(sp, "replicas"), "spec.replicas must not be negative")
	}
	if s.Replicas > MaxReplicas {
		// upstream allocates a slot per replica; beyond this the module would exhaust its memory
		d.fail(d.join(sp, "replicas"), "spec.replicas "+strconv.Itoa(int(s.Replicas))+" exceeds this module's limit of "+strconv.Itoa(MaxReplicas))
	}
	s.Selector = d.selector(spec.G("selector"), d.join(sp, "selector"))
	tp := d.join(sp, "template")
	s.Template = d.object(spec.G("template"), tp)
	tm := d.object(s.Template.G("metadata"), d.join(tp, "metadata"))
	d.stringMap(tm.G("labels"), tp, "metadata.labels")
	d.stringMap(tm.G("annotations"), tp, "metadata.annotations")
	for i, f := range d.array(tm.G("finalizers"), d.join(tp, "metadata.finalizers")) {
		d.str(f, d.index(d.join(tp, "metadata.finalizers"), i), "")
	}
	d.object(s.Template.G("spec"), d.join(tp, "spec"))
	s.ServiceName = d.str(spec.G("serviceName"), sp, "serviceName")
	s.PodManagementPolicy = d.str(spec.G("podManagementPolicy"), sp, "podManagementPolicy")
	up := d.join(sp, "updateStrategy")
	us := d.object(spec.G("updateStrategy"), up)
	s.StrategyType = d.str(us.G("type"), up, "type")
	if ru, ok := us.Get("rollingUpdate"); ok && ru.K != jsonv.Null {
		rp := d.join(up, "rollingUpdate")
		ru = d.object(ru, rp)
		s.HasRollingUpdate = true
		if n, ok := d.integer(ru.G("partition"), rp, "partition", 32); ok {
			s.Partition = int32(n)
		}
		if mu, ok := ru.Get("maxUnavailable"); ok && mu.K != jsonv.Null {
			switch mu.K {
			case jsonv.String:
				s.MaxUnavailable = &intOrString{IsString: true, Str: mu.S}
			case jsonv.Number:
				n, _ := d.integer(mu, rp, "maxUnavailable", 32)
				s.MaxUnavailable = &intOrString{Int: n}
			default:
				d.fail(d.join(rp, "maxUnavailable"), typeErr("integer or string", mu))
			}
		}
	}
	if n, ok := d.integer(spec.G("revisionHistoryLimit"), sp, "revisionHistoryLimit", 32); ok {
		s.RevisionHistoryLimit = int32(n)
	} else if d.err == nil {
		d.fail(d.join(sp, "revisionHistoryLimit"), "spec.revisionHistoryLimit is required (snapshots carry API-server-defaulted objects)")
	}
	if n, ok := d.integer(spec.G("minReadySeconds"), sp, "minReadySeconds", 32); ok {
		s.MinReadySeconds = int32(n)
	}
	if ov, ok := spec.Get("ordinals"); ok && ov.K != jsonv.Null {
		ov = d.object(ov, d.join(sp, "ordinals"))
		if n, ok := d.integer(ov.G("start"), sp, "ordinals.start", 32); ok {
			s.Start = int32(n)
		}
	}
	s.WhenDeleted, s.WhenScaled = policyRetain, policyRetain
	if pv, ok := spec.Get("persistentVolumeClaimRetentionPolicy"); ok && pv.K != jsonv.Null {
		pp := d.join(sp, "persistentVolumeClaimRetentionPolicy")
		pv = d.object(pv, pp)
		s.WhenDeleted = d.str(pv.G("whenDeleted"), pp, "whenDeleted")
		s.WhenScaled = d.str(pv.G("whenScaled"), pp, "whenScaled")
	}
	vp := d.join(sp, "volumeClaimTemplates")
	for i, t := range d.array(spec.G("volumeClaimTemplates"), vp) {
		p := d.index(vp, i)
		t = d.object(t, p)
		m := d.object(t.G("metadata"), d.join(p, "metadata"))
		s.ClaimTemplates = append(s.ClaimTemplates, t)
		s.ClaimTemplateNames = append(s.ClaimTemplateNames, d.str(m.G("name"), p, "metadata.name"))
		d.stringMap(m.G("labels"), p, "metadata.labels")
	}
	stp := d.join(path, "status")
	st := d.object(v.G("status"), stp)
	s.Status.ObservedGeneration, _ = d.integer(st.G("observedGeneration"), stp, "observedGeneration", 64)
	i32 := func(key string) int32 {
		n, _ := d.integer(st.G(key), stp, key, 32)
		return int32(n)
	}
	s.Status.Replicas = i32("replicas")
	s.Status.ReadyReplicas = i32("readyReplicas")
	s.Status.CurrentReplicas = i32("currentReplicas")
	s.Status.UpdatedReplicas = i32("updatedReplicas")
	s.Status.AvailableReplicas = i32("availableReplicas")
	s.Status.CurrentRevision = d.str(st.G("currentRevision"), stp, "currentRevision")
	s.Status.UpdateRevision = d.str(st.G("updateRevision"), stp, "updateRevision")
	if n, ok := d.integer(st.G("collisionCount"), stp, "collisionCount", 32); ok {
		s.Status.CollisionCount = int32(n)
		s.Status.HasCollisionCount = true
	}
	cp := d.join(stp, "conditions")
	for i, c := range d.array(st.G("conditions"), cp) {
		p := d.index(cp, i)
		c = d.object(c, p)
		cond := condition{
			Type:    d.str(c.G("type"), p, "type"),
			Status:  d.str(c.G("status"), p, "status"),
			Reason:  d.str(c.G("reason"), p, "reason"),
			Message: d.str(c.G("message"), p, "message"),
		}
		if t, ok := d.timestamp(c.G("lastTransitionTime"), p, "lastTransitionTime"); ok {
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
	sel := labelSelector{MatchLabels: d.stringMap(v.G("matchLabels"), path, "matchLabels")}
	ep := d.join(path, "matchExpressions")
	for i, e := range d.array(v.G("matchExpressions"), ep) {
		p := d.index(ep, i)
		e = d.object(e, p)
		r := selectorRequirement{
			Key:      d.str(e.G("key"), p, "key"),
			Operator: d.str(e.G("operator"), p, "operator"),
		}
		for j, val := range d.array(e.G("values"), d.join(p, "values")) {
			r.Values = append(r.Values, d.str(val, d.index(d.join(p, "values"), j), ""))
		}
		sel.MatchExprs = append(sel.MatchExprs, r)
	}
	return sel
}

// formatTime formats t the way metav1.Time marshals (RFC 3339, seconds, UTC).
func formatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

package statefulset

import (
	"strconv"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
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
	CodeStaleReference     = "StaleReference" // a reference to an object the instance does not hold (object_cache.go)
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

// objectKey is how an API server names an object of a snapshot: one per kind, namespace and name.
type objectKey struct{ kind, namespace, name string }

// objectKeys maps objectKeys to strings, in maps of strings by kind, namespace and name. One map keyed by
// objectKey was a tenth of a whole 1000-pod snapshot's decode in the module: TinyGo hashes a struct key by
// reflection, boxing the key and each of its strings, on every lookup. The maps of a namespace are emptied,
// not dropped, so an instance that keeps them fills them again without growing them.
type objectKeys struct {
	kinds [3]map[string]map[string]string // by kindIndex, then namespace, then name
	n     int                             // the entries
}

// kindIndex is where objectKeys keeps a kind's names; the kinds are the decoder's own words.
func kindIndex(kind string) int {
	switch kind {
	case "pod":
		return 0
	case "revision":
		return 1
	case "claim":
		return 2
	}
	panic("objectKeys: no kind " + kind) // a caller's bug: recovered into a SyncFailed plan
}

func (m *objectKeys) get(k objectKey) (string, bool) {
	v, ok := m.kinds[kindIndex(k.kind)][k.namespace][k.name]
	return v, ok
}

// has reports whether k maps to v.
func (m *objectKeys) has(k objectKey, v string) bool {
	got, ok := m.get(k)
	return ok && got == v
}

func (m *objectKeys) set(k objectKey, v string) {
	byNS := &m.kinds[kindIndex(k.kind)]
	if *byNS == nil {
		*byNS = map[string]map[string]string{}
	}
	names := (*byNS)[k.namespace]
	if names == nil {
		names = map[string]string{}
		(*byNS)[k.namespace] = names
	}
	if _, ok := names[k.name]; !ok {
		m.n++
	}
	names[k.name] = v
}

func (m *objectKeys) delete(k objectKey) {
	names := m.kinds[kindIndex(k.kind)][k.namespace]
	if _, ok := names[k.name]; ok {
		delete(names, k.name)
		m.n--
	}
}

// len is the number of entries.
func (m *objectKeys) len() int { return m.n }

// clear empties every map.
func (m *objectKeys) clear() {
	for _, byNS := range m.kinds {
		for _, names := range byNS {
			clear(names)
		}
	}
	m.n = 0
}

// decodeSnapshot validates the snapshot and extracts what the controller reads. Pods, claims and
// revisions stay text (lazyObject); the set and the small members become trees.
func decodeSnapshot(root jsonv.Text) (*snapshot, *PlanError) {
	return decodeSnapshotCached(root, nil, nil, nil, nil, nil)
}

// decodeSnapshotCached decodes a snapshot whose objects may be references to prev's (nil: none may be);
// the snapshot's next is the cache of its objects for the next call (nil when prev is).
// set (nil: none) is the set the instance decoded last, which the snapshot's set replaces.
func decodeSnapshotCached(root jsonv.Text, prev, next *objectMaps, seen *objectKeys, slab *objectSlab, set *setMemo) (*snapshot, *PlanError) {
	snap, err := decodeSnapshotWith(root, true, prev, next, seen, slab, set)
	if err != nil && (err.Code == CodeInvalidSnapshot || err.Code == CodeStaleReference) {
		// decode again, building paths, to report where
		if _, perr := decodeSnapshotWith(root, false, prev, nil, seen, nil, nil); perr != nil {
			return nil, perr
		}
	}
	return snap, err
}

// textValue is the tree of t, null when t is absent.
func textValue(t jsonv.Text) jsonv.Value {
	if t == "" {
		return jsonv.Value{}
	}
	return t.Value()
}

// textKind is t's JSON type, null when t is absent.
func textKind(t jsonv.Text) jsonv.Kind {
	if t == "" {
		return jsonv.Null
	}
	return t.Kind()
}

// members returns the last occurrence of each of keys in the object t (as Go's decoder keeps).
func members(t jsonv.Text, keys ...string) []jsonv.Text {
	out := make([]jsonv.Text, len(keys))
	t.Members(func(k string, v jsonv.Text) {
		for i, want := range keys {
			if k == want {
				out[i] = v
			}
		}
	})
	return out
}

// objectText is d.object for text: null is an empty object, another type an error.
func (d *decoder) objectText(t jsonv.Text, path string) jsonv.Text {
	switch textKind(t) {
	case jsonv.Object:
		return t
	case jsonv.Null:
	default:
		d.fail(path, typeErr("object", jsonv.Value{K: t.Kind()}))
	}
	return "{}"
}

// arrayText is d.array for text: the elements of an array (null: none), calling fn for each.
func (d *decoder) arrayText(t jsonv.Text, path string, fn func(i int, v jsonv.Text)) {
	switch textKind(t) {
	case jsonv.Array:
		t.Items(fn)
	case jsonv.Null:
	default:
		d.fail(path, typeErr("array", jsonv.Value{K: t.Kind()}))
	}
}

// itemsText is arrayText without a callback, for the decoders a snapshot runs per object (under TinyGo, what
// a closure captures lives on the heap): the array to walk with jsonv's FirstItem and Item, "" (no
// elements) for null.
func (d *decoder) itemsText(t jsonv.Text, path string) jsonv.Text {
	switch textKind(t) {
	case jsonv.Array:
		return t
	case jsonv.Null:
	default:
		d.fail(path, typeErr("array", jsonv.Value{K: t.Kind()}))
	}
	return ""
}

// decodeSnapshotWith decodes the snapshot: references resolve in prev (nil: there are none to resolve), next
// (nil: not kept) collects its objects for the instance's next call, seen (nil: a new one) is scratch.
func decodeSnapshotWith(root jsonv.Text, fast bool, prev, next *objectMaps, seen *objectKeys, slab *objectSlab, set *setMemo) (*snapshot, *PlanError) {
	if root.Kind() != jsonv.Object {
		return nil, &PlanError{Code: CodeInvalidSnapshot, Message: "snapshot must be a JSON object, got " + root.Kind().String()}
	}
	m := members(root, "abi", "features", "now", "statefulSet", "pods", "revisions", "claims", "eventActions", "writeFailures", "delta")
	abiT, featuresT, nowT, setT, podsT, revsT, claimsT, eventActionsT := m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7]
	writeFailuresT, deltaT := m[8], m[9]
	if err := checkABI(abiT); err != nil {
		return nil, err
	}
	d := &decoder{fast: fast, prev: prev, next: next}
	if next != nil {
		d.slab = slab
	}
	if prev == nil {
		d.prev = &objectMaps{} // nothing to resolve a reference against
	}
	d.prev.decodes++
	d.decodes = d.prev.decodes
	snap := &snapshot{Features: DefaultFeatures()}
	if err := decodeFeatures(featuresT, &snap.Features); err != nil {
		return nil, err
	}
	switch ev := textValue(eventActionsT); ev.K {
	case jsonv.Null:
	case jsonv.Bool:
		snap.EventActions = ev.B
	default:
		return nil, &PlanError{Code: CodeInvalidSnapshot, Path: "eventActions", Message: typeErr("boolean", ev)}
	}
	if snap.WriteFailures = d.writeFailures(writeFailuresT); d.err != nil {
		return nil, d.err
	}
	now, err := decodeNow(nowT)
	if err != nil {
		return nil, err
	}
	snap.Now = now
	if snap.Set = d.setOf(setT, set); d.err != nil {
		return nil, d.err
	}
	ns := snap.Set.Meta.Namespace

	// An API server holds one object per namespace/name; a snapshot with two is not a state
	// the controller can observe.
	if seen == nil {
		seen = &objectKeys{}
	} else {
		seen.clear()
	}
	if textKind(deltaT) != jsonv.Null { // only what changed since the previous call (object_delta.go)
		if d.delta(deltaT, podsT, revsT, claimsT, ns, snap, seen); d.err != nil {
			return nil, d.err
		}
		return snap, nil
	}
	if d.next != nil {
		// emptied here, not for every call: a delta keeps the held maps and uses none of these (emptying the
		// maps of a whole snapshot's 2000 objects was a tenth of a held 1000-pod sync)
		d.next.emptied(d.prev)
		d.next.namespace = strings.Clone(ns) // kept: the input buffer is the next call's
		ns = d.next.namespace                // and what the objects without a namespace are given (the instance's indexes keep it)
	}
	if d.objects(podsT, revsT, claimsT, ns, snap, seen); d.err != nil {
		return nil, d.err
	}
	return snap, nil
}

// checkABI refuses a snapshot of another ABI than 1, or of none.
func checkABI(abiT jsonv.Text) *PlanError {
	abi := textValue(abiT)
	if abiT == "" || abi.K == jsonv.Null {
		return &PlanError{Code: CodeUnsupportedABI, Path: "abi", Message: "snapshot has no \"abi\"; this module speaks ABI 1"}
	}
	if abi.K != jsonv.Number {
		return &PlanError{Code: CodeUnsupportedABI, Path: "abi", Message: "\"abi\" must be the integer 1, " + typeErr("integer", abi)}
	}
	if f, err := strconv.ParseFloat(abi.S, 64); err != nil || f != 1 {
		return &PlanError{Code: CodeUnsupportedABI, Path: "abi", Message: "unsupported ABI version " + abi.S + "; this module speaks ABI 1"}
	}
	return nil
}

// decodeFeatures sets the feature gates the snapshot names (absent or null: the defaults); an unknown gate is
// refused before a value of the wrong type.
func decodeFeatures(featuresT jsonv.Text, f *Features) *PlanError {
	fv := textValue(featuresT)
	if fv.K == jsonv.Null {
		return nil
	}
	if fv.K != jsonv.Object {
		return &PlanError{Code: CodeInvalidSnapshot, Path: "features", Message: typeErr("object", fv)}
	}
	for _, m := range fv.O {
		p := "features." + m.Key
		if m.Val.K != jsonv.Bool {
			if !f.set(m.Key, false) {
				return &PlanError{Code: CodeUnknownFeatureGate, Path: p, Message: "unknown feature gate " + strconv.Quote(m.Key)}
			}
			return &PlanError{Code: CodeInvalidSnapshot, Path: p, Message: typeErr("boolean", m.Val)}
		}
		if !f.set(m.Key, m.Val.B) {
			return &PlanError{Code: CodeUnknownFeatureGate, Path: p, Message: "unknown feature gate " + strconv.Quote(m.Key)}
		}
	}
	return nil
}

// decodeNow is the sync's time, an RFC 3339 string the snapshot must have.
func decodeNow(nowT jsonv.Text) (time.Time, *PlanError) {
	nv := textValue(nowT)
	if nv.K == jsonv.Null || (nv.K == jsonv.String && nv.S == "") {
		return time.Time{}, &PlanError{Code: CodeInvalidSnapshot, Path: "now", Message: "snapshot has no \"now\" (RFC 3339 time of the sync)"}
	}
	if nv.K != jsonv.String {
		return time.Time{}, &PlanError{Code: CodeInvalidSnapshot, Path: "now", Message: typeErr("string (RFC 3339 time)", nv)}
	}
	now, err := time.Parse(time.RFC3339Nano, nv.S)
	if err != nil {
		return time.Time{}, &PlanError{Code: CodeInvalidSnapshot, Path: "now", Message: "invalid RFC 3339 time " + strconv.Quote(nv.S)}
	}
	return now, nil
}

// objects decodes a whole snapshot's pods, revisions and claims into snap, each given the set's namespace ns
// where it has none, and each namespace/name once (seen); the first failure is d.err.
func (d *decoder) objects(podsT, revsT, claimsT jsonv.Text, ns string, snap *snapshot, seen *objectKeys) {
	pods := d.itemsText(podsT, "pods")
	for i, at := 0, pods.FirstItem(); d.err == nil; i++ {
		rest, more := pods.ItemRest(at)
		if !more {
			break
		}
		p, size := d.podAt(rest, d.index("pods", i))
		if d.err != nil {
			break
		}
		at = pods.ItemAfter(at + size)
		if p.Meta.Namespace == "" {
			p.Meta.Namespace = ns
		}
		if d.unique(seen, "pod", p.Meta.Namespace, p.Meta.Name, p.Meta.UID, d.index("pods", i)) {
			snap.Pods = append(snap.Pods, p)
		}
	}
	if d.err != nil {
		return
	}
	d.arrayText(revsT, "revisions", func(i int, rt jsonv.Text) {
		if d.err != nil {
			return
		}
		r := d.revisionAt(rt, d.index("revisions", i))
		if d.err != nil {
			return
		}
		if r.Meta.Namespace == "" {
			r.Meta.Namespace = ns
		}
		if d.unique(seen, "revision", r.Meta.Namespace, r.Meta.Name, r.Meta.UID, d.index("revisions", i)) {
			snap.Revisions = append(snap.Revisions, r)
		}
	})
	if d.err != nil {
		return
	}
	claims := d.itemsText(claimsT, "claims")
	for i, at := 0, claims.FirstItem(); d.err == nil; i++ {
		rest, more := claims.ItemRest(at)
		if !more {
			break
		}
		p := d.index("claims", i)
		c, size := d.claimAt(rest, p)
		if d.err != nil {
			break
		}
		at = claims.ItemAfter(at + size)
		if c.Meta.Namespace == "" {
			c.Meta.Namespace = ns
		}
		if d.unique(seen, "claim", c.Meta.Namespace, c.Meta.Name, c.Meta.UID, p) {
			snap.Claims = append(snap.Claims, c)
		}
	}
}

// unique records the object kind ns/name at path (and, for an instance that keeps a whole snapshot's names,
// its uid); false, and d.err, when the snapshot has it twice.
func (d *decoder) unique(seen *objectKeys, kind, ns, name, uid, path string) bool {
	k := objectKey{kind, ns, name}
	if prev, dup := seen.get(k); dup {
		d.fail(d.join(path, "metadata.name"), "duplicate "+kind+" "+ns+"/"+name+" (also at "+prev+")")
		return false
	}
	seen.set(k, path)
	if d.next != nil && d.next.complete {
		if k.namespace == d.next.namespace { // the set's, defaulted: the kept copy
			k.namespace = d.next.namespace
		}
		d.next.names.set(k, uid)
	}
	return true
}

// setMemo is the set an instance decoded last and the text it decoded it from (in memory of its own: what is
// decoded of a set points into its text, and the exports write the next call's input over this one's).
type setMemo struct {
	text string
	set  *statefulSet
	// apiVersion, kind, spec: the members of text that set was decoded from beside its metadata and status
	apiVersion, kind, spec string
}

// setKeys are the members of a set's text the decode reads.
var setKeys = []string{"apiVersion", "kind", "metadata", "spec", "status"}

// setOf decodes the snapshot's set, or takes the one memo holds when its text is the same: a set's spec and
// most of its syncs' status are the same from one sync to the next, and making its tree again on every sync
// was a third of what a held sync allocated under TinyGo's leaking collector. No sync changes its set (the
// status it writes is a new one), so the syncs share it.
func (d *decoder) setOf(setT jsonv.Text, memo *setMemo) *statefulSet {
	if memo != nil && memo.set != nil && memo.text == string(setT) {
		return memo.set
	}
	var prev *statefulSet
	var prevMemo setMemo
	if memo != nil {
		prev, prevMemo = memo.set, *memo
		*memo = setMemo{text: strings.Clone(string(setT))}
		setT = jsonv.Text(memo.text)
	}
	if prev != nil && textKind(setT) == jsonv.Object {
		// a sync that wrote the status changed the set's metadata (resourceVersion) and status alone: its spec
		// (the template, the claim templates: most of its tree) is the one memo decoded
		var m [5]jsonv.Text
		setT.MembersInto(setKeys, m[:])
		if string(m[0]) == prevMemo.apiVersion && string(m[1]) == prevMemo.kind && string(m[3]) == prevMemo.spec {
			s := *prev
			s.Meta = d.setMeta(m[2], "statefulSet")
			d.setNamed(s.Meta, "statefulSet") // as statefulSet checks it, after the apiVersion and kind memo passed
			s.Status = d.setStatus(m[4], d.join("statefulSet", "status"))
			if d.err == nil {
				memo.set, memo.apiVersion, memo.kind, memo.spec = &s, string(m[0]), string(m[1]), string(m[3])
			}
			return &s
		}
	}
	sv := textValue(setT)
	if sv.K == jsonv.Null {
		d.err = &PlanError{Code: CodeInvalidSnapshot, Path: "statefulSet", Message: "snapshot has no statefulSet"}
		return nil
	}
	if sv.K != jsonv.Object {
		d.err = &PlanError{Code: CodeInvalidSnapshot, Path: "statefulSet", Message: typeErr("object", sv)}
		return nil
	}
	var m [5]jsonv.Text
	setT.MembersInto(setKeys, m[:])
	s := d.statefulSet(sv, m[2], m[4], "statefulSet")
	if textKind(m[3]) == jsonv.Object { // the template's text, by which an instance keeps its revision patch
		s.templateText = string(members(m[3], "template")[0])
	}
	if memo != nil && d.err == nil {
		memo.set, memo.apiVersion, memo.kind, memo.spec = s, string(m[0]), string(m[1]), string(m[3])
	}
	return s
}

func (d *decoder) statefulSet(v jsonv.Value, meta, status jsonv.Text, path string) *statefulSet {
	s := &statefulSet{APIVersion: appsV1}
	s.Meta = d.setMeta(meta, path)
	if d.err != nil {
		return s
	}
	if av := d.str(v.G("apiVersion"), path, "apiVersion"); av != "" {
		// a group's kind: "group/version" (a core "v1" object cannot be a StatefulSet)
		if i := strings.IndexByte(av, '/'); i <= 0 || i == len(av)-1 || strings.Count(av, "/") != 1 {
			d.fail(d.join(path, "apiVersion"), "apiVersion "+strconv.Quote(av)+" is not group/version")
		}
		// upstream's controllerKind is apps/v1 whatever version the set was read at
		if !strings.HasPrefix(av, "apps/") {
			s.APIVersion = av
		}
	}
	if k := d.str(v.G("kind"), path, "kind"); k != "" && k != kindStatefulSet {
		d.fail(d.join(path, "kind"), "kind "+strconv.Quote(k)+" is not StatefulSet")
	}
	d.setNamed(s.Meta, path)
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
	s.Status = d.setStatus(status, d.join(path, "status"))
	return s
}

// setMeta is the set's metadata (namespace defaulted).
func (d *decoder) setMeta(meta jsonv.Text, path string) objectMeta {
	m := d.metaT(meta, d.join(path, "metadata"), true)
	if m.Namespace == "" {
		m.Namespace = defaultNamespace
	}
	return m
}

// setNamed refuses a set without a name.
func (d *decoder) setNamed(m objectMeta, path string) {
	if m.Name == "" {
		d.fail(d.join(path, "metadata.name"), "the StatefulSet has no name")
	}
}

// setStatus is the set's status, read from its text: the tree of a status was most of what decoding a set
// whose spec memo holds allocated (setOf).
func (d *decoder) setStatus(t jsonv.Text, stp string) (status setStatus) {
	var f [10]jsonv.Text
	d.objectText(t, stp).MembersInto(statusKeys, f[:])
	status.ObservedGeneration, _ = d.integerT(f[0], stp, statusKeys[0], 64)
	i32 := func(i int) int32 {
		n, _ := d.integerT(f[i], stp, statusKeys[i], 32)
		return int32(n)
	}
	status.Replicas = i32(1)
	status.ReadyReplicas = i32(2)
	status.CurrentReplicas = i32(3)
	status.UpdatedReplicas = i32(4)
	status.AvailableReplicas = i32(5)
	status.CurrentRevision = d.strT(f[6], stp, statusKeys[6])
	status.UpdateRevision = d.strT(f[7], stp, statusKeys[7])
	if n, ok := d.integerT(f[8], stp, statusKeys[8], 32); ok {
		status.CollisionCount = int32(n)
		status.HasCollisionCount = true
	}
	cp := d.join(stp, "conditions")
	d.arrayText(f[9], cp, func(i int, c jsonv.Text) {
		p := d.index(cp, i)
		var cf [5]jsonv.Text
		d.objectText(c, p).MembersInto(setConditionKeys, cf[:])
		cond := condition{
			Type:    d.strT(cf[0], p, setConditionKeys[0]),
			Status:  d.strT(cf[1], p, setConditionKeys[1]),
			Reason:  d.strT(cf[2], p, setConditionKeys[2]),
			Message: d.strT(cf[3], p, setConditionKeys[3]),
		}
		if t, ok := d.timestampT(cf[4], p, setConditionKeys[4]); ok {
			cond.LastTransitionTime = formatTime(t)
		}
		status.Conditions = append(status.Conditions, cond)
	})
	return status
}

var (
	statusKeys = []string{"observedGeneration", "replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
		"availableReplicas", "currentRevision", "updateRevision", "collisionCount", "conditions"}
	setConditionKeys = []string{"type", "status", "reason", "message", "lastTransitionTime"}
)

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

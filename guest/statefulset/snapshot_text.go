package statefulset

import (
	"strconv"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// Decoding straight from the snapshot's text (jsonv.Text), with the same checks and messages as the
// tree decoders in snapshot.go: no tree, and strings that point into the input. A field that is
// absent is "".

func kindOf(t jsonv.Text) jsonv.Value {
	if t == "" {
		return jsonv.Value{}
	}
	return jsonv.Value{K: t.Kind()}
}

func (d *decoder) strT(t jsonv.Text, base, key string) string {
	switch textKind(t) {
	case jsonv.Null:
		return ""
	case jsonv.String:
		return t.Str()
	}
	d.fail(d.join(base, key), typeErr("string", kindOf(t)))
	return ""
}

func (d *decoder) boolT(t jsonv.Text, base, key string) bool {
	switch textKind(t) {
	case jsonv.Null:
		return false
	case jsonv.Bool:
		return t[0] == 't'
	}
	d.fail(d.join(base, key), typeErr("boolean", kindOf(t)))
	return false
}

func (d *decoder) integerT(t jsonv.Text, base, key string, bits int) (int64, bool) {
	switch textKind(t) {
	case jsonv.Null:
		return 0, false
	case jsonv.Number:
		s := string(t)
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			if strings.ContainsAny(s, ".eE") {
				d.fail(d.join(base, key), "expected integer, got non-integer number "+s)
			} else {
				d.fail(d.join(base, key), "integer "+s+" out of range for int"+strconv.Itoa(bits))
			}
			return 0, false
		}
		return n, true
	}
	d.fail(d.join(base, key), typeErr("integer", kindOf(t)))
	return 0, false
}

func (d *decoder) timestampT(t jsonv.Text, base, key string) (time.Time, bool) {
	switch textKind(t) {
	case jsonv.Null:
		return time.Time{}, false
	case jsonv.String:
		s := t.Str()
		if s == "" {
			return time.Time{}, false
		}
		tm, err := parseTime(s)
		if err != nil {
			d.fail(d.join(base, key), "invalid RFC 3339 timestamp "+strconv.Quote(s))
			return time.Time{}, false
		}
		return tm, true
	}
	d.fail(d.join(base, key), typeErr("string (RFC 3339 timestamp)", kindOf(t)))
	return time.Time{}, false
}

func (d *decoder) stringMapT(t jsonv.Text, base, key string) map[string]string {
	return d.stringsT(t, base, key, true)
}

// stringsT checks that t is an object of strings (null is read as ""), as the API server holds labels and
// annotations, and with keep returns it as a map.
func (d *decoder) stringsT(t jsonv.Text, base, key string, keep bool) map[string]string {
	switch textKind(t) {
	case jsonv.Null:
		return nil
	case jsonv.Object:
	default:
		d.fail(d.join(base, key), typeErr("object", kindOf(t)))
		return nil
	}
	var m map[string]string
	if keep {
		m = make(map[string]string, 8)
	}
	for i := t.FirstMember(); ; {
		k, v, next, ok := t.Member(i)
		if !ok {
			return m
		}
		i = next
		switch v.Kind() {
		case jsonv.Null:
			if keep {
				m[k] = ""
			}
		case jsonv.String:
			if keep {
				m[k] = v.Str()
			}
		default:
			d.fail(d.join(d.join(base, key), k), typeErr("string", kindOf(v)))
		}
	}
}

// metaKeys are the metadata fields metaT reads, in the order of metaT's indexes.
var metaKeys = []string{"name", "namespace", "uid", "generation", "creationTimestamp", "annotations", "deletionTimestamp", "labels", "ownerReferences", "resourceVersion"}

var refKeys = []string{"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}

// metaT decodes the metadata the controller reads; full adds generation, creation time and annotations.
func (d *decoder) metaT(t jsonv.Text, path string, full bool) objectMeta {
	t = d.objectText(t, path)
	var f [10]jsonv.Text
	t.MembersInto(metaKeys, f[:])
	return d.metaFields(&f, path, full)
}

// metaFields decodes the members of metadata metaT reads (by metaKeys).
func (d *decoder) metaFields(f *[10]jsonv.Text, path string, full bool) objectMeta {
	var m objectMeta
	m.Name = d.strT(f[0], path, "name")
	m.Namespace = d.strT(f[1], path, "namespace")
	m.UID = d.strT(f[2], path, "uid")
	if textKind(f[9]) == jsonv.String { // read only for references to the object: anything else is none
		m.ResourceVersion = f[9].Str()
	}
	if full {
		m.Generation, _ = d.integerT(f[3], path, "generation", 64)
		m.Created, _ = d.timestampT(f[4], path, "creationTimestamp")
		m.Annotations = d.stringMapT(f[5], path, "annotations")
	} else {
		// not read, but checked: a pod's annotations go back whole in the module's update of it (the
		// extension in-place-update's), which the host's firewall could not decode with a number in them, and
		// the module failed where the snapshot is what is wrong
		d.stringsT(f[5], path, "annotations", false)
	}
	m.DeletionTimestamp, m.Deleting = d.timestampT(f[6], path, "deletionTimestamp")
	m.Labels = d.stringMapT(f[7], path, "labels")
	refsPath := d.join(path, "ownerReferences")
	refs := d.itemsText(f[8], refsPath)
	for i, at := 0, refs.FirstItem(); ; i++ {
		r, next, ok := refs.Item(at)
		if !ok {
			break
		}
		at = next
		p := d.index(refsPath, i)
		r = d.objectText(r, p)
		var g [6]jsonv.Text
		r.MembersInto(refKeys, g[:])
		m.OwnerRefs = append(m.OwnerRefs, ownerRef{
			APIVersion: d.strT(g[0], p, "apiVersion"),
			Kind:       d.strT(g[1], p, "kind"),
			Name:       d.strT(g[2], p, "name"),
			UID:        d.strT(g[3], p, "uid"),
			Controller: d.boolT(g[4], p, "controller"),
		})
		d.boolT(g[5], p, "blockOwnerDeletion")
	}
	return m
}

var (
	podKeys       = []string{"metadata", "status", "spec"} // a claim's first: claimInto
	podStatusKeys = []string{"phase", "conditions"}
	conditionKeys = []string{"type", "status", "lastTransitionTime"}
	volumeKeys    = []string{"name", "persistentVolumeClaim"}
	claimNameKeys = []string{"claimName"}
)

// pod decodes what the controller reads of a pod: metadata, status.phase, the Ready condition and
// spec.volumes; the rest stays text until the sync needs the tree.
func (d *decoder) pod(t jsonv.Text, path string) *pod {
	p := new(pod)
	d.podInto(p, t, path)
	return p
}

// podInto decodes the pod rest starts with (the rest of its list after it too: podAt) into *p and returns
// where it ends in rest.
func (d *decoder) podInto(p *pod, rest jsonv.Text, path string) int {
	var m podFields
	end := m.read(d.objectText(rest, path))
	if textKind(rest) != jsonv.Object {
		end = rest.ValueEnd() // not an object (an error): read as {}
	}
	mp := d.join(path, "metadata")
	d.objectText(m.meta, mp) // what metaT checks of the metadata itself
	*p = pod{lazyObject: lazyObject{src: rest[:end]}, Meta: d.metaFields(&m.metaF, mp, false), memo: new(podMemo)}
	d.objectText(m.status, d.join(path, "status"))
	st := &m.statusF
	p.Phase = d.strT(st[0], path, "status.phase")
	condPath := d.join(path, "status.conditions")
	found := false
	conds := d.itemsText(st[1], condPath)
	for i, at := 0, conds.FirstItem(); ; i++ {
		c, next, ok := conds.Item(at)
		if !ok {
			break
		}
		at = next
		cp := d.index(condPath, i)
		var f [3]jsonv.Text
		d.objectText(c, cp).MembersInto(conditionKeys, f[:])
		typ := d.strT(f[0], cp, "type")
		status := d.strT(f[1], cp, "status")
		ltt, _ := d.timestampT(f[2], cp, "lastTransitionTime")
		if typ == "Ready" && !found {
			found = true
			p.Ready = status == "True"
			p.ReadySince = ltt
		}
	}
	d.objectText(m.spec, d.join(path, "spec"))
	spec := &m.specF
	volPath := d.join(path, "spec.volumes")
	vols := d.itemsText(spec[0], volPath)
	for i, at := 0, vols.FirstItem(); ; i++ {
		vol, next, ok := vols.Item(at)
		if !ok {
			break
		}
		at = next
		vp := d.index(volPath, i)
		var f [2]jsonv.Text
		d.objectText(vol, vp).MembersInto(volumeKeys, f[:])
		pv := podVolume{Name: d.strT(f[0], vp, "name"), PVC: textKind(f[1]) == jsonv.Object}
		var c [1]jsonv.Text
		d.objectText(f[1], d.join(vp, "persistentVolumeClaim")).MembersInto(claimNameKeys, c[:])
		pv.ClaimName = d.strT(c[0], vp, "persistentVolumeClaim.claimName")
		p.vols = append(p.vols, pv)
	}
	p.Parent, p.Ordinal = parentAndOrdinal(p.Meta.Name)
	p.rev = p.Meta.Labels[labelRevision]
	if extendedBuild {
		p.inPlaceRev = inPlaceRecord(m.meta)
	}
	return end
}

// podFields are the members of a pod that pod decoding reads (the last of each, as Go's decoder keeps), and
// theirs, found in one scan of the pod: reading metadata, status and spec after a scan that skipped them
// was most of a whole snapshot's decode in the module.
type podFields struct {
	meta, status, spec jsonv.Text
	metaF              [10]jsonv.Text // by metaKeys
	statusF            [2]jsonv.Text  // by podStatusKeys
	specF              [1]jsonv.Text  // by volumeListKey
}

// read finds the fields in the pod t (t may go on past it) and returns where the pod ends in t.
func (f *podFields) read(t jsonv.Text) int {
	i := t.FirstMember()
	for {
		k, at, ok := t.MemberAt(i)
		if !ok {
			return i + 1
		}
		v := t[at:]
		var n int
		switch k {
		case "metadata":
			f.metaF = [10]jsonv.Text{}
			n = membersOrSkip(v, metaKeys, f.metaF[:])
			f.meta = v[:n]
		case "status":
			f.statusF = [2]jsonv.Text{}
			n = membersOrSkip(v, podStatusKeys, f.statusF[:])
			f.status = v[:n]
		case "spec":
			f.specF = [1]jsonv.Text{}
			n = membersOrSkip(v, volumeListKey, f.specF[:])
			f.spec = v[:n]
		default:
			n = v.ValueEnd()
		}
		i = t.MemberAfter(at + n)
	}
}

// membersOrSkip reads keys of the object v starts with into out (nothing when it is no object) and returns
// where the value ends in v.
func membersOrSkip(v jsonv.Text, keys []string, out []jsonv.Text) int {
	if v[0] != '{' {
		return v.ValueEnd()
	}
	return v.MembersInto(keys, out)
}

var annotationsKey = []string{"annotations"}

// inPlaceRecord is the pod annotation extension in-place-update reads (the rest of a pod's annotations
// stay undecoded): metadata was checked to be an object by metaT.
func inPlaceRecord(meta jsonv.Text) string {
	if textKind(meta) != jsonv.Object {
		return ""
	}
	var f [1]jsonv.Text
	meta.MembersInto(annotationsKey, f[:])
	out := ""
	if textKind(f[0]) == jsonv.Object {
		f[0].Members(func(k string, v jsonv.Text) {
			if k == annotationInPlaceUpdate && v.Kind() == jsonv.String {
				out = v.Str()
			}
		})
	}
	return out
}

var volumeListKey = []string{"volumes"}

var revisionKeys = []string{"metadata", "revision", "data"}

// revision decodes a ControllerRevision; data keeps its exact bytes: the API machinery keeps
// RawExtension bytes as received, and revision equality compares them.
func (d *decoder) revision(t jsonv.Text, path string) *revision {
	t = d.objectText(t, path)
	var m [3]jsonv.Text
	t.MembersInto(revisionKeys, m[:])
	r := &revision{lazyObject: lazyObject{src: t}, Meta: d.metaT(m[0], d.join(path, "metadata"), true), memo: new(revisionMemo)}
	r.Revision, _ = d.integerT(m[1], path, "revision", 64)
	if textKind(m[2]) != jsonv.Null {
		r.DataRaw = []byte(m[2])
	}
	return r
}

package statefulset

import (
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// normalizeObject approximates the round trip of API JSON through the typed Go object. API
// JSON is already what the typed objects serialise to, except for fields whose encoding changed:
// since v1.34 ObjectMeta.creationTimestamp is omitzero, so an old "creationTimestamp": null
// disappears.
func normalizeObject(v jsonv.Value) jsonv.Value {
	switch v.K {
	case jsonv.Object:
		out := jsonv.Value{K: jsonv.Object, O: make([]jsonv.Member, 0, len(v.O))}
		for _, m := range v.O {
			if m.Val.K == jsonv.Null && m.Key == "creationTimestamp" {
				continue
			}
			out.O = append(out.O, jsonv.Member{Key: m.Key, Val: normalizeObject(m.Val)})
		}
		return out
	case jsonv.Array:
		out := jsonv.Value{K: jsonv.Array, A: make([]jsonv.Value, len(v.A))}
		for i := range v.A {
			out.A[i] = normalizeObject(v.A[i])
		}
		return out
	}
	return v
}

// normalizeTemplate is the pod template as the typed StatefulSet serialises it.
func normalizeTemplate(t jsonv.Value) jsonv.Value {
	n := normalizeObject(t)
	if n.K != jsonv.Object {
		n = jsonv.EmptyObj()
	}
	if !n.Has("metadata") {
		n.Set("metadata", jsonv.EmptyObj())
	}
	// Struct fields the typed PodSpec always serialises (no omitempty, or a struct value).
	if spec := n.G("spec"); spec.K == jsonv.Object {
		changed := false
		if !spec.Has("containers") {
			spec.Set("containers", jsonv.NullV())
			changed = true
		}
		for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
			cs := spec.G(list)
			if cs.K != jsonv.Array {
				continue
			}
			for i := range cs.A {
				c := &cs.A[i]
				if c.K != jsonv.Object {
					continue
				}
				if !c.Has("name") {
					c.Set("name", jsonv.Str(""))
					changed = true
				}
				if !c.Has("resources") {
					c.Set("resources", jsonv.EmptyObj())
					changed = true
				}
				for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
					pr := c.G(probe)
					if g := pr.G("grpc"); g.K == jsonv.Object && !g.Has("service") {
						g.Set("service", jsonv.NullV()) // *string without omitempty
						pr.Set("grpc", g)
						c.Set(probe, pr)
						changed = true
					}
				}
			}
		}
		if changed {
			n.Set("spec", spec)
		}
	}
	return n
}

// applyRevisionTemplate is the template ApplyRevision(set, rev) gives the set: the revision's
// data is a strategic merge patch whose spec.template normally replaces the template.
func applyRevisionTemplate(setTemplate jsonv.Value, dataRaw []byte) (jsonv.Value, error) {
	t, _, err := revisionTemplateOf(setTemplate, dataRaw)
	return t, err
}

// revisionTemplateOf is applyRevisionTemplate, and whether the template it gives is the revision's own: the
// set's template plays no part (the revision replaces it, the usual case), so a held revision can keep it.
func revisionTemplateOf(setTemplate jsonv.Value, dataRaw []byte) (t jsonv.Value, own bool, err error) {
	if len(dataRaw) == 0 {
		return setTemplate, false, nil
	}
	data, err := jsonv.Parse(dataRaw)
	if err != nil || data.K != jsonv.Object {
		// strategicpatch: the patch is not a JSON object (mergepatch.ErrBadJSONDoc)
		return jsonv.Value{}, false, simpleError("invalid JSON document")
	}
	spec, ok := data.Get("spec")
	if !ok {
		return setTemplate, false, nil
	}
	if spec.K == jsonv.Null {
		return jsonv.EmptyObj(), true, nil
	}
	if spec.K != jsonv.Object {
		return jsonv.Value{}, false, simpleError("json: cannot unmarshal " + unmarshalKind(spec) + " into Go struct field StatefulSet.spec of type v1.StatefulSetSpec")
	}
	tmpl, ok := spec.Get("template")
	if !ok {
		return setTemplate, false, nil
	}
	if tmpl.K == jsonv.Null {
		return jsonv.EmptyObj(), true, nil
	}
	if tmpl.K != jsonv.Object {
		return jsonv.Value{}, false, simpleError("json: cannot unmarshal " + unmarshalKind(tmpl) + " into Go struct field StatefulSetSpec.spec.template of type v1.PodTemplateSpec")
	}
	if tmpl.G("$patch").Str() == "replace" {
		out := tmpl.Clone()
		out.Delete("$patch")
		return out, true, nil
	}
	return mergePatch(setTemplate, tmpl), false, nil
}

// mergePatch merges patch into base (objects recursively, null deletes, anything else replaces).
func mergePatch(base, patch jsonv.Value) jsonv.Value {
	if patch.K != jsonv.Object || base.K != jsonv.Object {
		return patch.Clone()
	}
	out := base.Clone()
	for _, m := range patch.O {
		if m.Key == "$patch" {
			continue
		}
		if m.Val.K == jsonv.Null {
			out.Delete(m.Key)
			continue
		}
		out.Set(m.Key, mergePatch(out.G(m.Key), m.Val))
	}
	return out
}

// semanticallyEqual is setMatchesLatestExistingRevision: restoring latest onto the set, applying
// API defaults and re-serialising gives exactly the proposed revision's data.
// The latest revision's side is kept in its memo when its template is its own (revisionTemplate): a set whose
// template changed compares the same latest revision on every sync until the new one exists.
func (s *syncer) semanticallyEqual(proposed, latest *revision) bool {
	m := latest.memo
	if m == nil || !m.semanticFound {
		t, err := s.revisionTemplate(latest) // applyRevisionTemplate, normalized
		var data []byte
		if err == nil {
			data, err = revisionPatch(defaultPodTemplate(t)) // defaultPodTemplate clones what it changes
		}
		if m == nil || !m.own {
			return err == nil && string(data) == string(proposed.DataRaw)
		}
		m.semanticFound, m.semanticErr, m.semantic = true, err != nil, data
	}
	return !m.semanticErr && string(m.semantic) == string(proposed.DataRaw)
}

// revisionTemplate is the template of the set restored to revision r (currentSet/updateSet).
// A held revision keeps the template when it is its own (revisionTemplateOf): parsing its data and cloning
// the template every sync was most of what a held sync allocated, and under TinyGo's leaking collector what a
// call allocates is what gets an instance recycled. The template is shared: its users read or clone it.
func (s *syncer) revisionTemplate(r *revision) (jsonv.Value, error) {
	if m := r.memo; m != nil && m.own {
		return m.template, nil
	}
	t, own, err := revisionTemplateOf(s.set.Template, r.DataRaw)
	if err != nil {
		return jsonv.Value{}, err
	}
	t = normalizeTemplate(t)
	if m := r.memo; m != nil && own {
		m.own, m.template = true, t
	}
	return t, nil
}

// revisionData is the revision's data parsed (jsonv.Parse of DataRaw), kept in its memo: the caller only reads it.
func revisionData(r *revision) jsonv.Value {
	m := r.memo
	if m != nil && m.parsed {
		return m.data
	}
	data, _ := jsonv.Parse(r.DataRaw)
	if m != nil {
		m.parsed, m.data = true, data
	}
	return data
}

// revisionHash is hashRevision(data, collisionCount) for a revision whose data is data and memo m (nil: none),
// kept in the memo: newRevision and createRevision hash the proposed revision's data on every sync.
func revisionHash(data []byte, m *revisionMemo, collisionCount int32) string {
	if m == nil {
		return hashRevision(data, collisionCount)
	}
	if !m.hashed || m.hashCount != collisionCount {
		m.hashed, m.hashCount, m.hash = true, collisionCount, hashRevision(data, collisionCount)
	}
	return m.hash
}

// unmarshalKind names a JSON value the way encoding/json's UnmarshalTypeError does.
func unmarshalKind(v jsonv.Value) string {
	switch v.K {
	case jsonv.Bool:
		return "bool"
	case jsonv.Number:
		return "number"
	case jsonv.String:
		return "string"
	case jsonv.Array:
		return "array"
	}
	return "object"
}

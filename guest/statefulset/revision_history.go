package statefulset

import (
	"bytes"
	"strings"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// revisionPatch is getPatch: the canonical JSON (as Go marshals a map) of
// {"spec":{"template":<template with "$patch":"replace">}}, where the template is what the typed
// API object serialises to.
func revisionPatch(template jsonv.Value) ([]byte, error) {
	t := normalizeTemplate(template)
	t.Set("$patch", jsonv.Str("replace"))
	obj := jsonv.Obj(jsonv.M("spec", jsonv.Obj(jsonv.M("template", t))))
	b, ok := jsonv.Canonical(obj)
	if !ok {
		return nil, simpleError("json: unsupported number in pod template")
	}
	return b, nil
}

// setPatch is revisionPatch of the set's template (getPatch(set)), and the memo of the revisions proposed with
// it (nil: none kept). An instance keeps the last one by the template's text: the syncs of a rollout send the
// same template, and normalizing and encoding it again on every sync was a fifth of what a held sync allocated
// under TinyGo's leaking collector. The memo is found from the patch alone (revisionMemo), so it goes with it.
func (s *syncer) setPatch() ([]byte, *revisionMemo, error) {
	m, text := s.maps, s.set.templateText
	if text != "" && m.patchText == text {
		return m.patch, m.patchMemo, nil
	}
	data, err := revisionPatch(s.set.Template)
	if err == nil && text != "" && s.snap.maps != nil {
		// the text is the input's, which the next call overwrites
		m.patchText, m.patch, m.patchMemo = strings.Clone(text), data, new(revisionMemo)
		return data, m.patchMemo, nil
	}
	return data, nil, err
}

// newRevision builds the ControllerRevision for the set's template (history.NewControllerRevision +
// the set's annotations).
func (s *syncer) newRevision(number int64, collisionCount int32) (*revision, error) {
	template := s.set.Template
	data, memo, err := s.setPatch()
	if err != nil {
		return nil, err
	}
	hash := revisionHash(data, memo, collisionCount)
	r := &revision{DataRaw: data, Revision: number, created: true, memo: memo}
	r.Meta.Name = revisionName(s.set.Meta.Name, hash)
	r.Meta.Namespace = s.set.Meta.Namespace
	r.Meta.Labels = revisionLabels(template, hash, memo)
	return r, nil
}

// revisionLabels are the labels of the template's revision under hash: the template's and the hash's. memo
// (of the template's patch, which holds its labels) keeps them, as no holder of a revision changes its labels:
// made again on every sync they were a tenth of what a rollout's sync allocated in the module.
func revisionLabels(template jsonv.Value, hash string, memo *revisionMemo) map[string]string {
	if memo != nil && memo.labels != nil && memo.labelsHash == hash {
		return memo.labels
	}
	labels := map[string]string{}
	for k, v := range templateLabels(template) {
		labels[k] = v
	}
	labels[labelRevisionHash] = hash
	if memo != nil {
		memo.labels, memo.labelsHash = labels, hash
	}
	return labels
}

// revisionObject is the object sent to create a revision (no namespace: it is in the path).
func (s *syncer) revisionObject(r *revision) jsonv.Value {
	data := revisionData(r)
	meta := jsonv.Obj(jsonv.M("name", jsonv.Str(r.Meta.Name)), jsonv.M("labels", jsonv.FromStringMap(r.Meta.Labels)))
	if len(s.set.Meta.Annotations) > 0 {
		meta.Set("annotations", jsonv.FromStringMap(s.set.Meta.Annotations))
	}
	meta.Set("ownerReferences", jsonv.Arr(s.setControllerRef()))
	return jsonv.Obj(
		jsonv.M("kind", jsonv.Str(kindRevision)),
		jsonv.M("apiVersion", jsonv.Str(appsV1)),
		jsonv.M("metadata", meta),
		jsonv.M("data", data),
		jsonv.M("revision", jsonv.Int(r.Revision)),
	)
}

func templateLabels(t jsonv.Value) map[string]string {
	return t.Path("metadata", "labels").StringMap()
}

func equalRevision(a, b *revision) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.DataRaw, b.DataRaw)
}

// getRevisions mirrors getStatefulSetRevisions: find or create the update revision (reusing the
// newest equal one, rolling back to an older equal one, or creating one, handling name
// collisions), and find the current revision.
func (s *syncer) getRevisions(revisions []*revision) (current, update *revision, collisionCount int32, err error) {
	count := len(revisions)
	collisionCount = s.set.Status.CollisionCount
	next := int64(1)
	if count > 0 {
		next = revisions[count-1].Revision + 1
	}
	update, err = s.newRevision(next, collisionCount)
	if err != nil {
		return nil, nil, collisionCount, err
	}
	var equal []*revision
	for _, r := range revisions {
		if equalRevision(r, update) {
			equal = append(equal, r)
		}
	}
	switch {
	case len(equal) > 0 && equalRevision(revisions[count-1], equal[len(equal)-1]):
		update = revisions[count-1]
	case len(equal) > 0:
		update, err = s.updateRevisionNumber(equal[len(equal)-1], update.Revision)
		if err != nil {
			return nil, nil, collisionCount, err
		}
	case count > 0 && s.features.SemanticRevisionComparison && s.semanticallyEqual(update, revisions[count-1]):
		update = revisions[count-1]
	default:
		update, err = s.createRevision(update, &collisionCount)
		if err != nil {
			return nil, nil, collisionCount, err
		}
	}
	for _, r := range revisions {
		if r.Meta.Name == s.set.Status.CurrentRevision {
			current = r
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisionCount, nil
}

// updateRevisionNumber renumbers an existing revision (rollback): realHistory.UpdateControllerRevision.
// The update carries the whole object as stored. Upstream retries a Conflict, but from the empty object
// client-go returns with the error (clone = updated), whose lister copy is not found: the second attempt
// has no name, and client-go refuses it before sending anything. The reference harness's fake client sends
// it instead (hack/conformance/README.md, "Write failures").
func (s *syncer) updateRevisionNumber(r *revision, number int64) (*revision, error) {
	if r.Revision == number {
		return r, nil
	}
	clone := *r
	clone.Revision = number
	obj := withTypeMeta(*r.obj(), appsV1, kindRevision, r.Meta.Namespace)
	obj.Set("revision", jsonv.Int(number))
	a := action{Verb: verbUpdate, Kind: kindRevision, Namespace: r.Meta.Namespace, Name: r.Meta.Name, Object: &obj}
	if err := s.issue(a, nil); isConflict(err) {
		return nil, simpleError("resource name may not be empty")
	} else if err != nil {
		return nil, err
	}
	return &clone, nil
}

// createRevision is realHistory.CreateControllerRevision: create under the hashed name; when
// the name is taken, reuse the existing revision if its data is identical, else bump the
// collision count and try the next name.
func (s *syncer) createRevision(r *revision, collisionCount *int32) (*revision, error) {
	ns := s.set.Meta.Namespace
	for {
		hash := revisionHash(r.DataRaw, r.memo, *collisionCount)
		clone := *r
		clone.Meta.Name = revisionName(s.set.Meta.Name, hash)
		labels := map[string]string{}
		for k, v := range r.Meta.Labels {
			labels[k] = v
		}
		// the hash label keeps the first hash, as upstream (the clone's labels are not updated)
		clone.Meta.Labels = labels
		obj := s.revisionObject(&clone)
		k := key(ns, clone.Meta.Name)
		var predicted error
		if _, taken := s.revByKey[k]; taken {
			predicted = errAlreadyExists(resRevisions, clone.Meta.Name)
		}
		err := s.issue(action{Verb: verbCreate, Kind: kindRevision, Namespace: ns, Name: clone.Meta.Name, Object: &obj}, predicted)
		if isAlreadyExists(err) {
			// upstream GETs the revision to compare it, from this module's API server: the snapshot
			existing, ok := s.revByKey[k]
			if !ok {
				return nil, errNotFound(resRevisions, clone.Meta.Name)
			}
			if bytes.Equal(existing.DataRaw, clone.DataRaw) {
				return existing, nil
			}
			*collisionCount++
			continue
		}
		if err != nil {
			return nil, err
		}
		created := clone
		s.revByKey[key(ns, clone.Meta.Name)] = &created
		return &created, nil
	}
}

// truncateHistory deletes the oldest non-live revisions beyond revisionHistoryLimit. Live: the
// current and update revisions and every revision a pod is labelled with. It stops at the first delete
// that fails and returns its error.
func (s *syncer) truncateHistory(pods []*pod, revisions []*revision, current, update *revision) error {
	limit := int(s.set.RevisionHistoryLimit)
	others := 0 // the revisions neither current nor update: the most the history can hold
	for _, r := range revisions {
		if (current == nil || r.Meta.Name != current.Meta.Name) && (update == nil || r.Meta.Name != update.Meta.Name) {
			others++
		}
	}
	if limit < 0 || others <= limit {
		return nil // within the limit even if no pod kept a revision live: no pod need be read
	}
	live := map[string]bool{}
	if current != nil {
		live[current.Meta.Name] = true
	}
	if update != nil {
		live[update.Meta.Name] = true
	}
	for _, p := range pods {
		live[p.revisionLabel()] = true
	}
	var history []*revision
	for _, r := range revisions {
		if !live[r.Meta.Name] {
			history = append(history, r)
		}
	}
	if len(history) <= limit {
		return nil
	}
	for _, r := range history[:len(history)-limit] {
		if err := s.issue(action{Verb: verbDelete, Kind: kindRevision, Namespace: r.Meta.Namespace, Name: r.Meta.Name}, nil); err != nil {
			return err
		}
	}
	return nil
}

// withTypeMeta returns a copy of an object as the client sends it: apiVersion and kind set,
// metadata.namespace filled in, and fields the typed object would not carry dropped.
func withTypeMeta(raw jsonv.Value, apiVersion, kind, namespace string) jsonv.Value {
	obj := normalizeObject(raw)
	obj.Set("kind", jsonv.Str(kind))
	obj.Set("apiVersion", jsonv.Str(apiVersion))
	meta := obj.G("metadata")
	if meta.K != jsonv.Object {
		meta = jsonv.EmptyObj()
	}
	if meta.G("namespace").Str() == "" && namespace != "" {
		meta.Set("namespace", jsonv.Str(namespace))
	}
	obj.Set("metadata", meta)
	return obj
}

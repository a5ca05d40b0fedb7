package statefulset

import (
	"strconv"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// identityMatches: the pod has a valid ordinal, the set as parent, the canonical name, the set's
// namespace and the pod-name label.
func (s *syncer) identityMatches(p *pod) bool {
	if f := s.factsOf(p); f != nil {
		return f.identity
	}
	return s.identityMatchesNow(p)
}

func (s *syncer) identityMatchesNow(p *pod) bool {
	return p.Ordinal >= 0 &&
		p.Parent == s.set.Meta.Name &&
		ordinal.IsName(p.Meta.Name, s.set.Meta.Name, p.Ordinal) &&
		p.Meta.Namespace == s.set.Meta.Namespace &&
		p.Meta.Labels[labelPodName] == p.Meta.Name
}

// newPod is newVersionedStatefulSetPod's pod: GetPodFromTemplate + initIdentity + updateStorage +
// the revision label. template is the template of the chosen revision.
func (s *syncer) newPod(template jsonv.Value, ordinal int64, revisionName string) *pod {
	name := podName(s.set.Meta.Name, ordinal)
	tmeta := template.G("metadata")
	labels := map[string]string{}
	for k, v := range tmeta.G("labels").StringMap() {
		labels[k] = v
	}
	labels[labelPodName] = name
	labels[labelPodIndex] = strconv.FormatInt(ordinal, 10)
	labels[labelRevision] = revisionName
	annotations := tmeta.G("annotations").StringMap()

	meta := jsonv.Obj(
		jsonv.M("name", jsonv.Str(name)),
		jsonv.M("generateName", jsonv.Str(s.set.Meta.Name+"-")),
		jsonv.M("namespace", jsonv.Str(s.set.Meta.Namespace)),
		jsonv.M("labels", jsonv.FromStringMap(labels)),
	)
	if len(annotations) > 0 {
		meta.Set("annotations", jsonv.FromStringMap(annotations))
	}
	meta.Set("ownerReferences", jsonv.Arr(s.setControllerRef()))
	if f := tmeta.G("finalizers"); f.K == jsonv.Array && len(f.A) > 0 {
		meta.Set("finalizers", f.Clone())
	}
	spec := template.G("spec").Clone()
	if spec.K != jsonv.Object {
		spec = jsonv.EmptyObj()
	}
	spec.Set("hostname", jsonv.Str(name))
	if s.set.ServiceName != "" {
		spec.Set("subdomain", jsonv.Str(s.set.ServiceName))
	} else {
		spec.Delete("subdomain")
	}
	raw := jsonv.Obj(
		jsonv.M("kind", jsonv.Str(kindPod)),
		jsonv.M("apiVersion", jsonv.Str("v1")),
		jsonv.M("metadata", meta),
		jsonv.M("spec", spec),
		jsonv.M("status", jsonv.EmptyObj()),
	)
	p := &pod{lazyObject: lazyObject{tree: raw, built: true}, Parent: s.set.Meta.Name, Ordinal: ordinal, rev: revisionName, synthetic: true}
	p.Meta.Name = name
	p.Meta.Namespace = s.set.Meta.Namespace
	p.Meta.Labels = labels
	s.updateStorage(p)
	return p
}

// setPodLabel sets a label on the pod (model and object).
func setPodLabel(p *pod, k, v string) {
	if p.Meta.Labels == nil {
		p.Meta.Labels = map[string]string{}
	}
	p.Meta.Labels[k] = v
	if k == labelRevision {
		p.rev = v
	}
	meta := p.obj().G("metadata")
	if meta.K != jsonv.Object {
		meta = jsonv.EmptyObj()
	}
	labels := meta.G("labels")
	if labels.K != jsonv.Object {
		labels = jsonv.EmptyObj()
	}
	labels.Set(k, jsonv.Str(v))
	meta.Set("labels", labels)
	p.obj().Set("metadata", meta)
}

// updateIdentity repairs name, namespace and the identity labels (not hostname/subdomain).
func (s *syncer) updateIdentity(p *pod) {
	name := podName(s.set.Meta.Name, p.Ordinal)
	p.Meta.Name = name
	p.Meta.Namespace = s.set.Meta.Namespace
	meta := p.obj().G("metadata")
	if meta.K != jsonv.Object {
		meta = jsonv.EmptyObj()
	}
	meta.Set("name", jsonv.Str(name))
	meta.Set("namespace", jsonv.Str(s.set.Meta.Namespace))
	p.obj().Set("metadata", meta)
	setPodLabel(p, labelPodName, name)
	setPodLabel(p, labelPodIndex, strconv.FormatInt(p.Ordinal, 10))
}

// copyPod returns a deep copy (DeepCopy before mutating a lister object).
func copyPod(p *pod) *pod {
	c := *p
	c.setObj(normalizeObject(*p.obj()))
	c.Meta.Labels = make(map[string]string, len(p.Meta.Labels))
	for k, v := range p.Meta.Labels {
		c.Meta.Labels[k] = v
	}
	return &c
}

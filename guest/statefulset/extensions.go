package statefulset

import (
	"strconv"

	"github.com/ordinal-dev/ordinal/guest/jsonv"
)

// Extensions beyond upstream, compiled into the extended module only (extendedBuild): each is off unless
// the set opts in with an annotation on the set (so apps/v1 and the CRD kind both carry it), and the
// faithful module has none. A set without the annotations gets upstream's plan from either module.

// extension is one entry of describe's "extensions": what a host shows and documents.
type extension struct {
	name, annotation, upstreamIssue string
}

// extensions lists the extended module's extensions, in describe order.
var extensions = [...]extension{
	{"pause", annotationPaused, "kubernetes/kubernetes#49890"},
}

// annotationPaused: "true" pauses the set (extension pause).
const annotationPaused = "ordinal.dev/paused"

// paused says whether the set opted into the pause extension: no pod is created, deleted, updated,
// adopted or released and no claim touched; revisions and the status stay current (as upstream does
// for a set being deleted).
func (s *syncer) paused() bool {
	return extendedBuild && s.set.Meta.Annotations[annotationPaused] == "true"
}

// pauseEvent records, while a paused set has work pending, what the pause holds back.
func (s *syncer) pauseEvent(st *setStatus) {
	r := s.set.Replicas
	if st.Replicas == r && st.UpdatedReplicas == r {
		return // nothing held back: no event every sync
	}
	s.event(eventNormal, "Paused", "StatefulSet "+s.set.Meta.Name+" is paused ("+annotationPaused+`: "true"`+
		"): no pod is created, deleted or updated; "+strconv.Itoa(int(st.Replicas))+" of "+strconv.Itoa(int(r))+
		" replicas exist, "+strconv.Itoa(int(st.UpdatedReplicas))+" at update revision "+st.UpdateRevision)
}

// appendExtensions appends describe's "extensions" member (the extended module only).
func appendExtensions(b []byte) []byte {
	if !extendedBuild {
		return b
	}
	b = append(b, `,"extensions":[`...)
	for i, e := range extensions {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsonv.AppendString(b, e.name)
		b = append(b, `,"annotation":`...)
		b = jsonv.AppendString(b, e.annotation)
		b = append(b, `,"upstreamIssue":`...)
		b = jsonv.AppendString(b, e.upstreamIssue)
		b = append(b, '}')
	}
	return append(b, ']')
}

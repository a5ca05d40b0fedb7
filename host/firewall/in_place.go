package firewall

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/inplace"
)

// Extension in-place-update (abi.AnnotationPodUpdatePolicy): on a set that opted in, a pod update may
// change container and init-container images, each only to the image the set's template gives that
// container, and a resize (abi.VerbResize, the pods/resize subresource) may give a pod's containers only
// the resources (and resize policy) of the set's template. Without the annotation no plan changes an image
// (upstream's pod updates repair identity and storage only) and no plan resizes. The images a pod has are
// the snapshot's (Object.Images), so a module cannot slip another image into any pod of any set.

// inPlaceScope is what the rules read of the set.
type inPlaceScope struct {
	on         bool                        // the set opted in
	containers map[string]corev1.Container // the template's containers by containerKey
}

func newInPlaceScope(set *appsv1.StatefulSet) inPlaceScope {
	switch set.Annotations[abi.AnnotationPodUpdatePolicy] {
	case abi.PodUpdateInPlaceIfPossible, abi.PodUpdateInPlaceOnly:
	default:
		return inPlaceScope{}
	}
	s := inPlaceScope{on: true, containers: map[string]corev1.Container{}}
	spec := &set.Spec.Template.Spec
	for _, c := range spec.InitContainers {
		s.containers[containerKey("initContainers", c.Name)] = c
	}
	for _, c := range spec.Containers {
		s.containers[containerKey("containers", c.Name)] = c
	}
	return s
}

func containerKey(list, name string) string { return list + "/" + name }

// PodImages are a pod's images by list and container name, as Object.Images records them.
func PodImages(spec *corev1.PodSpec) map[string]string {
	m := make(map[string]string, len(spec.Containers)+len(spec.InitContainers))
	for _, c := range spec.InitContainers {
		m[containerKey("initContainers", c.Name)] = c.Image
	}
	for _, c := range spec.Containers {
		m[containerKey("containers", c.Name)] = c.Image
	}
	return m
}

// checkPodImages judges the images of a pod update (its spec) against the snapshot's pod (target).
func (s *Scope) checkPodImages(target *Object, spec *corev1.PodSpec) (Rule, string) {
	if target.Images == nil {
		return "", "" // a host that records no images (NewObject without them) judges none
	}
	for key, image := range PodImages(spec) {
		old, ok := target.Images[key]
		if !ok {
			continue // a container the pod has not: the API server refuses any change of the containers' list
		}
		if image == old {
			continue
		}
		if !s.inPlace.on {
			return RuleObject, fmt.Sprintf("%s: the image changes (%q to %q): only extension in-place-update (%s) changes an image",
				key, old, image, abi.AnnotationPodUpdatePolicy)
		}
		if want := s.inPlace.containers[key].Image; image != want {
			return RuleObject, fmt.Sprintf("%s: image %q is not the set's template's %q", key, image, want)
		}
	}
	return "", ""
}

// checkResize judges a resize: of a pod the set controls, on a set that opted in, giving every container the
// resources and resize policy the set's template gives it (the API server takes only those from the object).
func (st *planState) checkResize(a *abi.Action, target *Object) (Rule, string) {
	s := st.s
	if !s.inPlace.on {
		return RuleKindVerb, "only extension in-place-update (" + abi.AnnotationPodUpdatePolicy + ") resizes a pod"
	}
	p, rule, reason := st.checkPodReplace(a, target)
	if rule != "" {
		return rule, reason
	}
	for list, cs := range map[string][]corev1.Container{"initContainers": p.Spec.InitContainers, "containers": p.Spec.Containers} {
		for _, c := range cs {
			key := containerKey(list, c.Name)
			want, ok := s.inPlace.containers[key]
			if !ok {
				return RuleObject, fmt.Sprintf("%s: the set's template has no such container", key)
			}
			if !equality.Semantic.DeepEqual(c.Resources, want.Resources) || !equality.Semantic.DeepEqual(c.ResizePolicy, want.ResizePolicy) {
				return RuleObject, fmt.Sprintf("%s: a resize gives a container the resources of the set's template, nothing else", key)
			}
		}
	}
	return "", ""
}

// resizeThenUpdate: the resize at i is part of an in-place update (abi/POLICY.md 2.1), right before the update
// that moves the same pod's revision label, unless the plan predicts it fails (then it ends the pod's move). A
// resize alone restarts the containers whose resizePolicy is RestartContainer, and policies, which hold
// in-place updates, would not see it. The update is read as the API server will read it, whole (wirePod,
// the decode its own rule then judges): one that does not decode is refused there and moves no label.
func (st *planState) resizeThenUpdate(plan *abi.Plan, i int) (Rule, string) {
	a := &plan.Actions[i]
	if a.Error != "" {
		return "", ""
	}
	if i+1 < len(plan.Actions) {
		next := &plan.Actions[i+1]
		if next.Verb == abi.VerbUpdate && next.Kind == abi.KindPod && next.Name == a.Name {
			if p, err := st.wirePod(next); err == nil &&
				inplace.IsUpdate(next.Verb, next.Kind, p.Labels[abi.LabelRevision], p.Annotations[abi.AnnotationInPlaceUpdate], st.s.Pods[a.Name].Labels[abi.LabelRevision]) {
				return "", ""
			}
		}
	}
	return RuleObject, "a resize is sent only right before the in-place update of its pod (the update moving its " + abi.LabelRevision + " label)"
}

package kube

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/inplaceready"
)

// InPlace reads a typed pod as a module with extension in-place-update reads it: ok when the pod's
// in-place record (abi.AnnotationInPlaceUpdate) names the revision its label says it is at
// (inplaceready.Applies); v is then inplaceready.Judge's verdict, the module's own rule (the guest reads its
// JSON into the same inplaceready.Pod). Only a host whose set runs a module with the extension may read a pod
// so (module.HasExtension): the faithful module reads such a pod as upstream does.
func InPlace(p *corev1.Pod) (v inplaceready.Verdict, ok bool) {
	if !inplaceready.Applies(p.Labels[appsv1.ControllerRevisionHashLabelKey], p.Annotations[abi.AnnotationInPlaceUpdate]) {
		return inplaceready.Verdict{}, false
	}
	return inplaceready.Judge(InPlacePod(p)), true
}

// InPlacePod is what inplaceready.Judge reads of a typed pod: its containers and sidecars (init containers with
// restartPolicy Always), their statuses, whether a resize is pending or in progress, and the generation of
// the pod and of its status.
func InPlacePod(p *corev1.Pod) inplaceready.Pod {
	var ip inplaceready.Pod
	for _, c := range p.Spec.Containers {
		ip.Containers = append(ip.Containers, inplaceready.Container{Name: c.Name, Image: c.Image, Resources: inPlaceResources(c.Resources)})
	}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			ip.Containers = append(ip.Containers, inplaceready.Container{Name: c.Name, Image: c.Image, Resources: inPlaceResources(c.Resources)})
		}
	}
	for _, list := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for _, st := range list {
			s := inplaceready.Status{Name: st.Name, Image: st.Image, ImageID: st.ImageID}
			if r := st.State.Running; r != nil {
				s.StartedAt = r.StartedAt.Time
			}
			if st.Resources != nil {
				rs := inPlaceResources(*st.Resources)
				s.Resources = &rs
			}
			ip.Statuses = append(ip.Statuses, s)
		}
	}
	for _, c := range p.Status.Conditions {
		if (c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress) && c.Status == corev1.ConditionTrue {
			ip.Resizing = true
		}
	}
	ip.Generation, ip.ObservedGeneration = p.Generation, p.Status.ObservedGeneration
	return ip
}

func inPlaceResources(r corev1.ResourceRequirements) inplaceready.Resources {
	q := func(l corev1.ResourceList, name corev1.ResourceName) string {
		if v, ok := l[name]; ok {
			return v.String()
		}
		return ""
	}
	return inplaceready.Resources{RequestCPU: q(r.Requests, corev1.ResourceCPU), RequestMemory: q(r.Requests, corev1.ResourceMemory),
		LimitCPU: q(r.Limits, corev1.ResourceCPU), LimitMemory: q(r.Limits, corev1.ResourceMemory)}
}

// OtherTagWait: verdict v waits for a container whose status names the spec's repository by another tag
// (inplaceready.OtherTag) that none of the revisions (their data, as a ControllerRevision holds it) gives
// that container: the runtime may report the spec's image by another of its tags, which the pod's status
// cannot tell from a container not restarted yet (docs/in-place-updates.md, "An image reported by another
// tag"); a tag of an earlier revision's image is the ordinary wait for the restart.
func OtherTagWait(v inplaceready.Verdict, revisions [][]byte) bool {
	if !v.Pending || v.Waiting != inplaceready.WaitImage || !inplaceready.OtherTag(v.Has, v.Want) {
		return false
	}
	for _, data := range revisions {
		var d struct {
			Spec struct {
				Template struct {
					Spec struct {
						Containers, InitContainers []struct{ Name, Image string }
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if json.Unmarshal(data, &d) != nil {
			continue
		}
		for _, c := range append(d.Spec.Template.Spec.Containers, d.Spec.Template.Spec.InitContainers...) {
			if c.Name == v.Container && inplaceready.SameImage(v.Has, c.Image) {
				return false
			}
		}
	}
	return true
}

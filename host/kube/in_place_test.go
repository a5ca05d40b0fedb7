package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/internal/inplaceready"
)

// The host reads a pinned image's imageID as the module does (guest TestInPlacePodPinnedByDigest): a runtime
// reports the image by one of its tags, the imageID has the digest the spec pins.
func TestInPlacePodPinnedByDigest(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	p := &corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx@" + digest}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "docker.io/library/nginx:1.27",
			ImageID: "docker.io/library/nginx@" + digest, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
	if v := inplaceready.Judge(InPlacePod(p)); v.Pending {
		t.Errorf("%+v, want it running its pinned image", v)
	}
}

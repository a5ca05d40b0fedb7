package kubetest

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Set is the tests' StatefulSet: web in ns (uid set-uid), selecting app=web, with the claim template data.
func Set() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "set-uid", ResourceVersion: "10"},
		Spec: appsv1.StatefulSetSpec{
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}},
		},
	}
}

// ControllerRef is an apps/v1 controller owner reference to the object kind/name with uid.
func ControllerRef(kind, name string, uid types.UID) []metav1.OwnerReference {
	t := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &t}}
}

// Pod is a pod name in ns with labels and owner references, its uid "uid-NAME".
func Pod(name, ns string, labels map[string]string, refs []metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: refs, UID: types.UID("uid-" + name)}}
}

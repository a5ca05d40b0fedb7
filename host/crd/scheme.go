package crd

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// AddToScheme registers apps/v1's Go types, *appsv1.StatefulSet and *appsv1.StatefulSetList, as the kinds
// StatefulSet and StatefulSetList of ordinal.dev/v1 (with the meta/v1 options and Status under that group
// version), so that a typed REST client lists and watches the CRD into the same types as apps/v1
// StatefulSets. status.selector, which apps/v1's status lacks, is not decoded.
//
// Use a scheme of its own for this group version: in a scheme that also registers apps/v1 (client-go's
// scheme.Scheme), the Go type maps to two kinds.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(GroupVersion.WithKind(Kind), &appsv1.StatefulSet{})
	s.AddKnownTypeWithName(GroupVersion.WithKind(Kind+"List"), &appsv1.StatefulSetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

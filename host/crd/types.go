package crd

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Go types the CRD's schema is generated from (controller-gen, `make crd`). Only the generator reads
// them: clients decode the kind into apps/v1's own types (AddToScheme).

// StatefulSet is apps/v1's StatefulSet in the API group ordinal.dev, reconciled by `ordinal controller`
// and by no controller of kube-controller-manager. Its spec is apps/v1's; its status is apps/v1's plus
// status.selector (the scale subresource's label selector).
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=statefulsets,singular=statefulset,scope=Namespaced,shortName=osts,categories=all
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`,description="Desired pods (spec.replicas)"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`,description="Pods Ready (status.readyReplicas)"
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.currentReplicas`,description="Pods at the current revision (status.currentReplicas)"
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=`.status.updatedReplicas`,description="Pods at the update revision (status.updatedReplicas)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Container",type=string,JSONPath=`.spec.template.spec.containers[0].name`,priority=1,description="The pod template's first container (a CRD's column shows one value, not kubectl's list)"
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.template.spec.containers[0].image`,priority=1,description="The first container's image"
type StatefulSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// apps/v1's StatefulSetSpec. Its immutable fields, as upstream's ValidateStatefulSetUpdate has them (an
	// unset serviceName is "", an unset podManagementPolicy OrderedReady: apps/v1's defaults):
	// +kubebuilder:validation:XValidation:rule="self.selector == oldSelf.selector",message="field is immutable",fieldPath=".selector"
	// +kubebuilder:validation:XValidation:rule="(has(self.serviceName) ? self.serviceName : '') == (has(oldSelf.serviceName) ? oldSelf.serviceName : '')",message="field is immutable",fieldPath=".serviceName"
	// +kubebuilder:validation:XValidation:rule="(has(self.podManagementPolicy) ? self.podManagementPolicy : 'OrderedReady') == (has(oldSelf.podManagementPolicy) ? oldSelf.podManagementPolicy : 'OrderedReady')",message="field is immutable",fieldPath=".podManagementPolicy"
	// +kubebuilder:validation:XValidation:rule="(has(self.volumeClaimTemplates) ? self.volumeClaimTemplates : []) == (has(oldSelf.volumeClaimTemplates) ? oldSelf.volumeClaimTemplates : [])",message="field is immutable",fieldPath=".volumeClaimTemplates"
	Spec   appsv1.StatefulSetSpec `json:"spec,omitempty"`
	Status StatefulSetStatus      `json:"status,omitempty"`
}

// StatefulSetStatus is apps/v1's StatefulSetStatus plus Selector.
//
// It repeats apps/v1's fields (same names, types, JSON and markers; a test keeps them equal) instead of
// inlining appsv1.StatefulSetStatus for one difference: each condition's type is required
// (StatefulSetCondition). A field of the same name beside the inlined struct does not shadow it for
// controller-gen, which merges both into an allOf that is not a structural schema.
//
// Its validation is apps/v1's (ValidateStatefulSetStatusUpdate, pkg/apis/apps/validation): every count and
// the collision count at least 0, no count above replicas, available not above ready, and the collision
// count never decremented; so a status write kube-apiserver refuses for an apps/v1 set (a negative count a
// sync computed from a stale cache, say) is refused for an ordinal.dev set too, and retried, not stored.
//
// +kubebuilder:validation:XValidation:rule="!has(self.readyReplicas) || self.readyReplicas <= (has(self.replicas) ? self.replicas : 0)",message="cannot be greater than status.replicas",fieldPath=".readyReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.currentReplicas) || self.currentReplicas <= (has(self.replicas) ? self.replicas : 0)",message="cannot be greater than status.replicas",fieldPath=".currentReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.updatedReplicas) || self.updatedReplicas <= (has(self.replicas) ? self.replicas : 0)",message="cannot be greater than status.replicas",fieldPath=".updatedReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.availableReplicas) || self.availableReplicas <= (has(self.replicas) ? self.replicas : 0)",message="cannot be greater than status.replicas",fieldPath=".availableReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.availableReplicas) || self.availableReplicas <= (has(self.readyReplicas) ? self.readyReplicas : 0)",message="cannot be greater than status.readyReplicas",fieldPath=".availableReplicas"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.collisionCount) || (has(self.collisionCount) && self.collisionCount >= oldSelf.collisionCount)",message="cannot be decremented",fieldPath=".collisionCount"
type StatefulSetStatus struct {
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas"`
	// +kubebuilder:validation:Minimum=0
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// +kubebuilder:validation:Minimum=0
	CurrentReplicas int32 `json:"currentReplicas,omitempty"`
	// +kubebuilder:validation:Minimum=0
	UpdatedReplicas int32  `json:"updatedReplicas,omitempty"`
	CurrentRevision string `json:"currentRevision,omitempty"`
	UpdateRevision  string `json:"updateRevision,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	CollisionCount *int32 `json:"collisionCount,omitempty"`
	// +optional
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	Conditions []StatefulSetCondition `json:"conditions,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	AvailableReplicas int32 `json:"availableReplicas"`

	// Selector is spec.selector in string form (metav1.FormatLabelSelector), which the CRD's scale
	// subresource needs as its labelSelectorPath for `kubectl scale` and HorizontalPodAutoscalers: apps/v1's
	// built-in scale subresource computes it from spec.selector, a CRD's cannot. The controller writes it.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// StatefulSetList is a list of ordinal.dev StatefulSets.
//
// +kubebuilder:object:root=true
type StatefulSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StatefulSet `json:"items"`
}

// StatefulSetCondition is apps/v1's StatefulSetCondition with type required: the conditions are a list map
// keyed by type (+listType=map, +listMapKey=type, for server-side apply), and the API server refuses a CRD
// whose list-map key is neither required nor defaulted; apps/v1 marks it optional (a test keeps the
// fields equal to apps/v1's).
type StatefulSetCondition struct {
	// +required
	Type appsv1.StatefulSetConditionType `json:"type"`
	// +optional
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

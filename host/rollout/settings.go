package rollout

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ordinal-dev/ordinal/host/kube"
)

// Settings are the spec fields of a set that decide how its rollouts go, as the controller reads them
// (an unset field at its default): `kubectl ordinal status` and a preview show them, typed in -o json and
// as one line (String) in text.
type Settings struct {
	Replicas            int32  `json:"replicas"`
	PodManagementPolicy string `json:"podManagementPolicy"`
	UpdateStrategy      string `json:"updateStrategy"`
	// RollingUpdate is the RollingUpdate strategy's settings (nil under OnDelete).
	RollingUpdate   *RollingUpdateSettings `json:"rollingUpdate,omitempty"`
	MinReadySeconds int32                  `json:"minReadySeconds"`
	OrdinalsStart   int32                  `json:"ordinalsStart"`
	// ClaimRetention is spec.persistentVolumeClaimRetentionPolicy.
	ClaimRetention ClaimRetention `json:"persistentVolumeClaimRetentionPolicy"`
	// ReservedOrdinals is extension reserve-ordinals' annotation, when the set's module has the extension
	// (set by a preview, which knows the module).
	ReservedOrdinals string `json:"reservedOrdinals,omitempty"`
}

// RollingUpdateSettings are spec.updateStrategy.rollingUpdate's, as the controller reads them.
type RollingUpdateSettings struct {
	// Unset: the set has no rollingUpdate, and the fields below are the controller's defaults.
	Unset     bool  `json:"unset,omitempty"`
	Partition int32 `json:"partition"`
	// MaxUnavailable as written (2, or "25%"; 1 when unset), and the pods it comes to as the controller
	// rounds it (kube.MaxUnavailable): 1 when the MaxUnavailableStatefulSet gate is off (Ignored).
	MaxUnavailable        intstr.IntOrString `json:"maxUnavailable"`
	MaxUnavailablePods    int                `json:"maxUnavailablePods"`
	MaxUnavailableIgnored bool               `json:"maxUnavailableIgnored,omitempty"`
}

// ClaimRetention is what happens to the pods' PVCs when the set is deleted or scaled down.
type ClaimRetention struct {
	WhenDeleted string `json:"whenDeleted"`
	WhenScaled  string `json:"whenScaled"`
}

// SettingsOf reads the set's settings; features are the snapshot's overrides of the gates' defaults.
func SettingsOf(set *appsv1.StatefulSet, features map[string]bool) Settings {
	s := Settings{Replicas: replicas(set), PodManagementPolicy: string(set.Spec.PodManagementPolicy),
		UpdateStrategy: string(set.Spec.UpdateStrategy.Type), MinReadySeconds: set.Spec.MinReadySeconds, OrdinalsStart: start(set),
		ClaimRetention: ClaimRetention{WhenDeleted: string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType),
			WhenScaled: string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType)}}
	if s.PodManagementPolicy == "" {
		s.PodManagementPolicy = string(appsv1.OrderedReadyPodManagement)
	}
	if s.UpdateStrategy == "" {
		s.UpdateStrategy = string(appsv1.RollingUpdateStatefulSetStrategyType)
	}
	if p := set.Spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		if p.WhenDeleted != "" {
			s.ClaimRetention.WhenDeleted = string(p.WhenDeleted)
		}
		if p.WhenScaled != "" {
			s.ClaimRetention.WhenScaled = string(p.WhenScaled)
		}
	}
	if s.UpdateStrategy == string(appsv1.RollingUpdateStatefulSetStrategyType) {
		ru := set.Spec.UpdateStrategy.RollingUpdate
		r := &RollingUpdateSettings{Unset: ru == nil, Partition: partition(set), MaxUnavailable: intstr.FromInt32(1)}
		if ru != nil && ru.MaxUnavailable != nil {
			r.MaxUnavailable = *ru.MaxUnavailable
		}
		on, set := features["MaxUnavailableStatefulSet"]
		r.MaxUnavailableIgnored = set && !on
		r.MaxUnavailablePods = 1
		if !r.MaxUnavailableIgnored {
			r.MaxUnavailablePods = kube.MaxUnavailable(&r.MaxUnavailable, s.Replicas)
		}
		s.RollingUpdate = r
	}
	return s
}

// String is the settings in one line: "5 replicas, OrderedReady, RollingUpdate (partition 0, maxUnavailable 2),
// PVC retention whenDeleted=Retain whenScaled=Retain".
func (s Settings) String() string { return strings.Join(s.Items(), ", ") }

// Items are the settings in words, one a setting (a preview wraps its line between them).
func (s Settings) Items() []string {
	items := []string{fmt.Sprintf("%d replica%s", s.Replicas, plural(int(s.Replicas))), s.PodManagementPolicy, s.UpdateStrategy}
	if r := s.RollingUpdate; r != nil {
		unset := "" // "(no rollingUpdate: partition 0, ...)" read as if the set had no rolling update at all
		if r.Unset {
			unset = ", the defaults"
		}
		mu := r.MaxUnavailable.String()
		switch {
		case r.MaxUnavailableIgnored:
			mu += " (ignored: the MaxUnavailableStatefulSet gate is off)"
		case r.MaxUnavailable.Type == intstr.String: // a percentage: the pods it comes to
			mu += fmt.Sprintf(" = %d pods", r.MaxUnavailablePods)
		}
		items[2] += fmt.Sprintf(" (partition %d, maxUnavailable %s%s)", r.Partition, mu, unset)
	}
	if s.MinReadySeconds > 0 {
		items = append(items, fmt.Sprintf("minReadySeconds %d", s.MinReadySeconds))
	}
	if s.OrdinalsStart != 0 {
		items = append(items, fmt.Sprintf("ordinals from %d", s.OrdinalsStart))
	}
	items = append(items, fmt.Sprintf("PVC retention whenDeleted=%s whenScaled=%s", s.ClaimRetention.WhenDeleted, s.ClaimRetention.WhenScaled))
	if s.ReservedOrdinals != "" {
		items = append(items, "reserving ordinals "+s.ReservedOrdinals)
	}
	return items
}

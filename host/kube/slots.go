package kube

import (
	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Slots is the ordinals of a set (spec.ordinals.start, spec.replicas, metadata.annotations) by replica
// slot, as the extended module places its pods: upstream's start, start+1, ..., or those a valid
// reserve-ordinals annotation leaves, when reserving is true. An invalid value changes nothing (the
// module then writes no pod). The module's own reading is the same function (internal/ordinal).
func Slots(start, replicas int64, annotations map[string]string) (s ordinal.Slots, reserving bool) {
	if v, ok := annotations[abi.AnnotationReserveOrdinals]; ok {
		if s, err := ordinal.ReservedSlots(start, replicas, v); err == nil && s.Reserved() {
			return s, true
		}
	}
	return ordinal.NewSlots(start, replicas, nil), false
}

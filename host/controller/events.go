package controller

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// EventComponent is the source component of the events the controller records,
// upstream's.
const EventComponent = "statefulset-controller"

// recordEvent records an event a module or a policy chose on the set, its message cut to
// hostplan.MaxEventMessage (they are the module's words, of any length).
func (c *Controller) recordEvent(set *appsv1.StatefulSet, ev abi.Event) {
	c.recorder.Event(set, ev.Type, ev.Reason, hostplan.Truncate(ev.Message, hostplan.MaxEventMessage))
}

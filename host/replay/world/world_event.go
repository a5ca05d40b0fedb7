package world

// WorldEvent is something that happened outside the controller between two syncs: a user's edit, the
// garbage collector, the kubelet. Programs read its fields (the webhook counts deleted claims by them);
// people read String().
type WorldEvent struct {
	Source  string `json:"source"`           // "user", "note", "gc" or "kubelet"
	Reason  string `json:"reason,omitempty"` // Reason* below, or a pod phase (Failed, Succeeded)
	Kind    string `json:"kind,omitempty"`   // the object's kind, when it is about one object
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

// Reasons of world events.
const (
	ReasonDeleted       = "Deleted"       // gc removed the object
	ReasonDeleting      = "Deleting"      // gc set the object's deletionTimestamp
	ReasonRunning       = "Running"       // the kubelet started the pod, not Ready
	ReasonReady         = "Ready"         // the pod became Ready
	ReasonLostReadiness = "LostReadiness" // the pod stopped being Ready
	ReasonRestarted     = "Restarted"     // the pod's containers restarted in place (new images)
	ReasonResized       = "Resized"       // the pod's containers run new resources, in place
	ReasonRemoved       = "Removed"       // the kubelet finished a pod's termination
	ReasonExpanded      = "Expanded"      // the volume resizer grew a claim to its request
	// a pod of the world as loaded names its update's image by another tag (kube.OtherTagWait): the replay
	// restarts it, the cluster may not count it
	ReasonImageByAnotherTag = "ImageReportedByAnotherTag"
)

// String is the event as the timeline prints it: "kubelet: pod web-0 Ready".
func (e WorldEvent) String() string { return e.Source + ": " + e.Message }

// EventStrings is events as the timeline prints them.
func EventStrings(evs []WorldEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

package statefulset

// event is one Kubernetes event recorded for the StatefulSet.
type event struct {
	Type, Reason, Message string
	gid                   int
	// action is the index in the plan's actions of the write this event reports, -1 when none: upstream
	// records it right after that write returns (abi/README.md, Events).
	action int
}

const (
	eventNormal  = "Normal"
	eventWarning = "Warning"
)

// titleVerb is cases.Title(language.English) of the controller's verbs.
func titleVerb(verb string) string {
	switch verb {
	case "create":
		return "Create"
	case "update":
		return "Update"
	case "delete":
		return "Delete"
	}
	if verb == "" {
		return verb
	}
	b := []byte(verb)
	if b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	return string(b)
}

// podEvent records upstream's recordPodEvent.
func (s *syncer) podEvent(verb, podName string, err error) {
	s.podEventOf(s.lastWrite(verb, kindPod, podName), verb, podName, err)
}

// claimRefusedEvent is the pod event of a claim owner-reference update the API server refused
// (UpdatePodClaimForRetentionPolicy's error, "could not update claim ..."): it reports that write, the last.
func (s *syncer) claimRefusedEvent(verb, podName string, err error) {
	s.podEventOf(len(s.plan.Actions)-1, verb, podName, err)
}

func (s *syncer) podEventOf(w int, verb, podName string, err error) {
	t := titleVerb(verb)
	if err == nil {
		s.eventOf(w, eventNormal, "Successful"+t, t+" Pod "+podName+" in StatefulSet "+s.set.Meta.Name+" successful")
		return
	}
	s.eventOf(w, eventWarning, "Failed"+t, t+" Pod "+podName+" in StatefulSet "+s.set.Meta.Name+" failed error: "+err.Error())
}

// claimEvent records upstream's recordClaimEvent.
func (s *syncer) claimEvent(verb, claimName, podName string, err error) {
	t := titleVerb(verb)
	w := s.lastWrite(verb, kindPVC, claimName)
	if err == nil {
		s.eventOf(w, eventNormal, "Successful"+t, t+" Claim "+claimName+" Pod "+podName+" in StatefulSet "+s.set.Meta.Name+" success")
		return
	}
	s.eventOf(w, eventWarning, "Failed"+t, t+" Claim "+claimName+" for Pod "+podName+" in StatefulSet "+s.set.Meta.Name+" failed error: "+err.Error())
}

// lastWrite is the index of the write just recorded when it is verb kind/name, else -1 (e.g. a pod
// create that failed on its claims before the pod was sent).
func (s *syncer) lastWrite(verb, kind, name string) int {
	if n := len(s.plan.Actions); n > 0 {
		if a := &s.plan.Actions[n-1]; a.Verb == verb && a.Kind == kind && a.Name == name {
			return n - 1
		}
	}
	return -1
}

// event records an event that reports no single write.
func (s *syncer) event(typ, reason, msg string) { s.eventOf(-1, typ, reason, msg) }

func (s *syncer) eventOf(action int, typ, reason, msg string) {
	s.plan.Events = append(s.plan.Events, event{Type: typ, Reason: reason, Message: msg, gid: s.gid, action: action})
}

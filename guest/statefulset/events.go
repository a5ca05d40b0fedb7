package statefulset

// event is one Kubernetes event recorded for the StatefulSet.
type event struct {
	Type, Reason, Message string
	gid                   int
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
	t := titleVerb(verb)
	if err == nil {
		s.event(eventNormal, "Successful"+t, t+" Pod "+podName+" in StatefulSet "+s.set.Meta.Name+" successful")
		return
	}
	s.event(eventWarning, "Failed"+t, t+" Pod "+podName+" in StatefulSet "+s.set.Meta.Name+" failed error: "+err.Error())
}

// claimEvent records upstream's recordClaimEvent.
func (s *syncer) claimEvent(verb, claimName, podName string, err error) {
	t := titleVerb(verb)
	if err == nil {
		s.event(eventNormal, "Successful"+t, t+" Claim "+claimName+" Pod "+podName+" in StatefulSet "+s.set.Meta.Name+" success")
		return
	}
	s.event(eventWarning, "Failed"+t, t+" Claim "+claimName+" for Pod "+podName+" in StatefulSet "+s.set.Meta.Name+" failed error: "+err.Error())
}

func (s *syncer) event(typ, reason, msg string) {
	s.plan.Events = append(s.plan.Events, event{Type: typ, Reason: reason, Message: msg, gid: s.gid})
}

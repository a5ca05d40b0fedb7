package controller

import (
	"strings"

	"github.com/ordinal-dev/ordinal/abi"
)

// EventComponent is the source component of the events the controller records,
// upstream's.
const EventComponent = "statefulset-controller"

// plannedEvents ties a plan's events to the writes they report, so that an
// event is recorded only once its write has been issued with the outcome the
// plan predicted. Upstream records "<Verb> Pod <pod> in StatefulSet <set> ..."
// and "<Verb> Claim <claim> [for] Pod <pod> ..." right after the write; an event
// belongs to the first action (in plan order, not yet given an event of the
// same reason) whose object name is one of the message's words, and whose
// verb matches the message's first word when that is a verb. Events that name
// no action (e.g. ConflictingController) are recorded after the whole plan
// was applied.
type plannedEvents struct {
	byAction map[int][]abi.Event
	rest     []abi.Event
}

func matchEvents(plan *abi.Plan) plannedEvents {
	pe := plannedEvents{byAction: map[int][]abi.Event{}}
	used := map[int]map[string]bool{}
	for _, ev := range plan.Events {
		words := strings.Fields(ev.Message)
		verb := ""
		if len(words) > 0 {
			verb = strings.ToLower(words[0])
		}
		match := -1
		for i, a := range plan.Actions {
			if used[i][ev.Reason] {
				continue
			}
			if (verb == "create" || verb == "update" || verb == "delete") && verb != a.Verb {
				continue
			}
			if containsWord(words, a.Name) {
				match = i
				break
			}
		}
		if match < 0 {
			pe.rest = append(pe.rest, ev)
			continue
		}
		if used[match] == nil {
			used[match] = map[string]bool{}
		}
		used[match][ev.Reason] = true
		pe.byAction[match] = append(pe.byAction[match], ev)
	}
	return pe
}

func containsWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// failureEvent is the event upstream records when a pod or claim write fails
// (recordPodEvent/recordClaimEvent); other kinds record none.
func failureEvent(setName string, a abi.Action, err error) (abi.Event, bool) {
	t := titleVerb(a.Verb)
	switch a.Kind {
	case abi.KindPod:
		return abi.Event{Type: abi.EventWarning, Reason: "Failed" + t,
			Message: t + " Pod " + a.Name + " in StatefulSet " + setName + " failed error: " + err.Error()}, true
	case abi.KindPersistentVolumeClaim:
		pod := setName
		if i := strings.LastIndexByte(a.Name, '-'); i >= 0 {
			pod += a.Name[i:]
		}
		return abi.Event{Type: abi.EventWarning, Reason: "Failed" + t,
			Message: t + " Claim " + a.Name + " for Pod " + pod + " in StatefulSet " + setName + " failed error: " + err.Error()}, true
	}
	return abi.Event{}, false
}

func titleVerb(v string) string {
	if v == "" {
		return v
	}
	return strings.ToUpper(v[:1]) + v[1:]
}

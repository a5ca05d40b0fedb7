// Package plan is the host's one reading of a module's reconcile output. Every path that acts on a plan
// (the CLI, the controller, the replay engine and through it preview and the webhook) decodes it here, so a
// module that breaks the ABI is caught the same way everywhere, before anything is printed, replayed or
// applied.
package plan

import (
	"encoding/json"
	"fmt"
	"strconv"

	sigsjson "sigs.k8s.io/json"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/strictjson"
)

// InvalidError says where and how a module's output breaks the plan schema (abi/schema/plan.schema.json).
// The module, not the snapshot, is at fault.
type InvalidError struct {
	Path string // JSON path into the plan, e.g. "actions[2].verb"; "" for the whole document
	Msg  string
}

func (e *InvalidError) Error() string {
	if e.Path == "" {
		return "invalid plan: " + e.Msg
	}
	return "invalid plan: " + e.Path + ": " + e.Msg
}

// wirePlan is the plan as it travels, with pointers where the schema requires presence; each action, event
// and error is an object of its own, decoded by the same rule (strictjson.Object).
type wirePlan struct {
	ABI                 *int               `json:"abi"`
	Actions             *[]json.RawMessage `json:"actions"`
	RequeueAfterSeconds *float64           `json:"requeueAfterSeconds"`
	Events              *[]json.RawMessage `json:"events"`
	Error               json.RawMessage    `json:"error"`
}

type wireEvent struct {
	Type    *string `json:"type"`
	Reason  *string `json:"reason"`
	Message *string `json:"message"`
	Action  *int    `json:"action"`
}

type wireAction struct {
	Verb      *string         `json:"verb"`
	Kind      *string         `json:"kind"`
	Namespace *string         `json:"namespace"`
	Name      *string         `json:"name"`
	Object    json.RawMessage `json:"object"`
	PatchType *string         `json:"patchType"`
	Patch     json.RawMessage `json:"patch"`
	Error     *string         `json:"error"`
}

var (
	verbs      = set(abi.VerbCreate, abi.VerbUpdate, abi.VerbPatch, abi.VerbDelete, abi.VerbUpdateStatus, abi.VerbResize)
	kinds      = set(abi.KindPod, abi.KindPersistentVolumeClaim, abi.KindControllerRevision, abi.KindStatefulSet)
	patchTypes = set("application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml")
	eventTypes = set(abi.EventNormal, abi.EventWarning)
	errorCodes = set(abi.CodeInvalidJSON, abi.CodeInvalidSnapshot, abi.CodeUnsupportedABI, abi.CodeUnknownFeatureGate, abi.CodeSyncFailed, abi.CodeStaleReference)
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Decode checks raw against the plan schema and returns the plan. It enforces what
// abi/schema/plan.schema.json says (a test holds the two to the same verdicts) with a typed, case-sensitive
// decode that refuses unknown fields, because it runs on every sync and a JSON-Schema validator costs far
// more. It is stricter than the schema in one way the schema cannot say: a key repeated in an object of the
// plan (two "actions") is refused, since decoders differ on which one counts (strictjson.Object, the rule
// policy answers are read by too).
func Decode(raw []byte) (*abi.Plan, error) {
	if p := decodeOnce(raw); p != nil {
		return p, nil
	}
	return decodeByParts(raw)
}

// onePlan is the plan decoded in one pass, each action, event and error a struct of its own (decodeOnce).
type onePlan struct {
	ABI                 *int          `json:"abi"`
	Actions             *[]wireAction `json:"actions"`
	RequeueAfterSeconds *float64      `json:"requeueAfterSeconds"`
	Events              *[]wireEvent  `json:"events"`
	Error               *wireError    `json:"error"`
}

// decodeOnce is Decode for a plan it accepts: one strict pass over raw, where decodeByParts decodes the
// plan, then each action, event and error again from its bytes (a plan's objects were scanned four times
// on every sync). It returns nil for anything it does not accept, and decodeByParts then says what is
// wrong, in its words and order: so the fast path only ever accepts what decodeByParts accepts, with the
// same plan. What a strict pass cannot see, a member of an action, event or error that is null (decoded,
// it is absent), nullMembers looks for.
func decodeOnce(raw []byte) *abi.Plan {
	var w onePlan
	if strictjson.Object(raw, &w) != nil || w.ABI == nil || *w.ABI != abi.Version || w.Actions == nil ||
		w.RequeueAfterSeconds == nil || *w.RequeueAfterSeconds < 0 || w.Events == nil || nullMembers(raw) {
		return nil
	}
	p := &abi.Plan{ABI: *w.ABI, RequeueAfterSeconds: *w.RequeueAfterSeconds,
		Actions: make([]abi.Action, len(*w.Actions)), Events: make([]abi.Event, len(*w.Events))}
	for i, wa := range *w.Actions {
		a, err := actionOf(wa, "")
		if err != nil {
			return nil
		}
		p.Actions[i] = a
	}
	for i, we := range *w.Events {
		e, err := eventOf(we, "", len(p.Actions))
		if err != nil {
			return nil
		}
		p.Events[i] = e
	}
	if w.Error != nil {
		e, err := errorOf(*w.Error)
		if err != nil {
			return nil
		}
		p.Error = e
	}
	return p
}

// nullMembers reports whether an element of the plan's actions or events, or its error, is not an object
// or has a member that is null (strictjson.Object's rule for the objects decodeByParts decodes one by one).
func nullMembers(raw []byte) bool {
	found := false
	object := func(v gjson.Result) bool {
		if !v.IsObject() {
			found = true
			return false
		}
		v.ForEach(func(_, m gjson.Result) bool {
			found = found || m.Type == gjson.Null
			return !found
		})
		return !found
	}
	root := strictjson.View(raw)
	for _, list := range []string{"actions", "events"} {
		root.Get(list).ForEach(func(_, v gjson.Result) bool { return object(v) })
	}
	if e := root.Get("error"); e.Exists() {
		object(e)
	}
	return found
}

// decodeByParts decodes the plan, then each of its actions, events and error from its own bytes, so that a
// refusal names the part it is in.
func decodeByParts(raw []byte) (*abi.Plan, error) {
	var w wirePlan
	if err := strictDecode(raw, &w, ""); err != nil {
		return nil, err
	}
	switch {
	case w.ABI == nil:
		return nil, missing("", "abi")
	case *w.ABI != abi.Version:
		return nil, &InvalidError{Path: "abi", Msg: fmt.Sprintf("is %d; this host speaks ABI %d", *w.ABI, abi.Version)}
	case w.Actions == nil:
		return nil, missing("", "actions")
	case w.RequeueAfterSeconds == nil:
		return nil, missing("", "requeueAfterSeconds")
	case *w.RequeueAfterSeconds < 0:
		return nil, &InvalidError{Path: "requeueAfterSeconds", Msg: "is negative"}
	case w.Events == nil:
		return nil, missing("", "events")
	}
	p := &abi.Plan{ABI: *w.ABI, RequeueAfterSeconds: *w.RequeueAfterSeconds,
		Actions: make([]abi.Action, len(*w.Actions)), Events: make([]abi.Event, len(*w.Events))}
	for i, raw := range *w.Actions {
		a, err := checkAction(raw, "actions["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		p.Actions[i] = a
	}
	for i, raw := range *w.Events {
		path := "events[" + strconv.Itoa(i) + "]"
		var we wireEvent
		if err := strictDecode(raw, &we, path); err != nil {
			return nil, err
		}
		e, err := eventOf(we, path, len(p.Actions))
		if err != nil {
			return nil, err
		}
		p.Events[i] = e
	}
	if w.Error != nil {
		e, err := checkError(w.Error)
		if err != nil {
			return nil, err
		}
		p.Error = e
	}
	return p, nil
}

// eventOf checks an event decoded at path.
func eventOf(we wireEvent, path string, actions int) (abi.Event, error) {
	switch {
	case we.Type == nil:
		return abi.Event{}, missing(path, "type")
	case !eventTypes[*we.Type]:
		return abi.Event{}, &InvalidError{Path: path + ".type", Msg: fmt.Sprintf("%q is not Normal or Warning", *we.Type)}
	case we.Reason == nil:
		return abi.Event{}, missing(path, "reason")
	case *we.Reason == "":
		return abi.Event{}, &InvalidError{Path: path + ".reason", Msg: "is empty"}
	case we.Message == nil:
		return abi.Event{}, missing(path, "message")
	case we.Action != nil && (*we.Action < 0 || *we.Action >= actions):
		return abi.Event{}, &InvalidError{Path: path + ".action", Msg: fmt.Sprintf("%d is not the index of one of the plan's %d actions", *we.Action, actions)}
	}
	return abi.Event{Type: *we.Type, Reason: *we.Reason, Message: *we.Message, Action: we.Action}, nil
}

func checkAction(raw json.RawMessage, path string) (abi.Action, error) {
	var w wireAction
	if err := strictDecode(raw, &w, path); err != nil {
		return abi.Action{}, err
	}
	return actionOf(w, path)
}

// actionOf checks an action decoded at path.
func actionOf(w wireAction, path string) (abi.Action, error) {
	for _, f := range []struct {
		v    *string
		name string
	}{{w.Verb, "verb"}, {w.Kind, "kind"}, {w.Namespace, "namespace"}, {w.Name, "name"}} {
		if f.v == nil {
			return abi.Action{}, missing(path, f.name)
		}
	}
	a := abi.Action{Verb: *w.Verb, Kind: *w.Kind, Namespace: *w.Namespace, Name: *w.Name, Object: w.Object, Patch: w.Patch}
	if w.PatchType != nil {
		a.PatchType = *w.PatchType
	}
	if w.Error != nil {
		a.Error = *w.Error
	}
	bad := func(field, msg string, args ...any) (abi.Action, error) {
		return abi.Action{}, &InvalidError{Path: path + field, Msg: fmt.Sprintf(msg, args...)}
	}
	switch {
	case !verbs[a.Verb]:
		return bad(".verb", "%q is not one of create, update, patch, delete, updateStatus, resize", a.Verb)
	case !kinds[a.Kind]:
		return bad(".kind", "%q is not one of Pod, PersistentVolumeClaim, ControllerRevision, StatefulSet", a.Kind)
	case a.Name == "":
		return bad(".name", "is empty")
	case w.Object != nil && !strictjson.IsObject(w.Object):
		return bad(".object", "is not a JSON object")
	case w.PatchType != nil && !patchTypes[a.PatchType]:
		return bad(".patchType", "%q is not a patch type", a.PatchType)
	case w.Error != nil && a.Error == "":
		return bad(".error", "is empty")
	}
	hasObject, hasPatch := w.Object != nil, w.Patch != nil || w.PatchType != nil
	switch a.Verb {
	case abi.VerbCreate, abi.VerbUpdate, abi.VerbUpdateStatus, abi.VerbResize:
		if !hasObject {
			return bad("", "a %s carries an object", a.Verb)
		}
		if hasPatch {
			return bad("", "a %s carries no patch", a.Verb)
		}
	case abi.VerbPatch:
		if w.Patch == nil || w.PatchType == nil {
			return bad("", "a patch carries patchType and patch")
		}
		if hasObject {
			return bad("", "a patch carries no object")
		}
	case abi.VerbDelete:
		if hasObject || hasPatch {
			return bad("", "a delete carries no object or patch")
		}
	}
	if a.Verb == abi.VerbResize && a.Kind != abi.KindPod {
		return bad(".kind", "resize is of a Pod, not %s", a.Kind)
	}
	if a.Verb == abi.VerbUpdateStatus {
		if a.Kind != abi.KindStatefulSet {
			return bad(".kind", "updateStatus is of a StatefulSet, not %s", a.Kind)
		}
		var o struct {
			Status json.RawMessage `json:"status"`
		}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(w.Object, &o); err != nil || !strictjson.IsObject(o.Status) {
			return bad(".object.status", "an updateStatus object carries the status as an object")
		}
	}
	return a, nil
}

type wireError struct {
	Code    *string `json:"code"`
	Message *string `json:"message"`
	Path    *string `json:"path"`
}

func checkError(raw json.RawMessage) (*abi.Error, error) {
	var w wireError
	if err := strictDecode(raw, &w, "error"); err != nil {
		return nil, err
	}
	return errorOf(w)
}

// errorOf checks the plan's error, decoded.
func errorOf(w wireError) (*abi.Error, error) {
	switch {
	case w.Code == nil:
		return nil, missing("error", "code")
	case !errorCodes[*w.Code]:
		return nil, &InvalidError{Path: "error.code", Msg: fmt.Sprintf("%q is not an ABI v1 error code", *w.Code)}
	case w.Message == nil:
		return nil, missing("error", "message")
	case *w.Message == "":
		return nil, &InvalidError{Path: "error.message", Msg: "is empty"}
	}
	e := &abi.Error{Code: *w.Code, Message: *w.Message}
	if w.Path != nil {
		e.Path = *w.Path
	}
	return e, nil
}

// strictDecode is strictjson.Object, its refusal an InvalidError at path.
func strictDecode(raw []byte, v any, path string) error {
	if err := strictjson.Object(raw, v); err != nil {
		return &InvalidError{Path: path, Msg: err.Error()}
	}
	return nil
}

func missing(path, field string) error {
	if path == "" {
		return &InvalidError{Path: field, Msg: "is missing"}
	}
	return &InvalidError{Path: path + "." + field, Msg: "is missing"}
}

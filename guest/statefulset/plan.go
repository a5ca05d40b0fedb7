package statefulset

import (
	"strconv"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// Action verbs and kinds of ABI v1.
const (
	verbCreate       = "create"
	verbUpdate       = "update"
	verbPatch        = "patch"
	verbDelete       = "delete"
	verbUpdateStatus = "updateStatus"
	verbResize       = "resize" // an update of a pod's resize subresource (extension in-place-update)
	patchTypeSMP     = "application/strategic-merge-patch+json"
)

// action is one API write, in issue order.
type action struct {
	Verb, Kind, Namespace, Name string
	Object                      *jsonv.Value
	PatchType                   string
	Patch                       *jsonv.Value
	Err                         string // the API server's rejection, if any
	gid                         int    // simulated goroutine (0 = main) for canonical ordering
	seq                         int    // index when recorded (canonical ordering may move it)
}

// plan is the result of one sync.
type plan struct {
	Actions      []action
	RequeueAfter float64 // seconds
	Events       []event
	Err          *PlanError
	eventActions bool // write events[].action (the host asked for it)
}

// encodePlan writes the ABI v1 plan JSON.
func encodePlan(p *plan) []byte { return appendPlan(make([]byte, 0, 4096), p) }

// appendPlan appends the plan's JSON to b.
func appendPlan(b []byte, p *plan) []byte {
	b = append(b, `{"abi":1,"actions":[`...)
	for i := range p.Actions {
		if i > 0 {
			b = append(b, ',')
		}
		a := &p.Actions[i]
		b = append(b, `{"verb":`...)
		b = jsonv.AppendString(b, a.Verb)
		b = append(b, `,"kind":`...)
		b = jsonv.AppendString(b, a.Kind)
		b = append(b, `,"namespace":`...)
		b = jsonv.AppendString(b, a.Namespace)
		b = append(b, `,"name":`...)
		b = jsonv.AppendString(b, a.Name)
		if a.PatchType != "" {
			b = append(b, `,"patchType":`...)
			b = jsonv.AppendString(b, a.PatchType)
		}
		if a.Patch != nil {
			b = append(b, `,"patch":`...)
			b = jsonv.AppendEncode(b, *a.Patch)
		}
		if a.Object != nil {
			b = append(b, `,"object":`...)
			b = jsonv.AppendEncode(b, *a.Object)
		}
		if a.Err != "" {
			b = append(b, `,"error":`...)
			b = jsonv.AppendString(b, a.Err)
		}
		b = append(b, '}')
	}
	b = append(b, `],"requeueAfterSeconds":`...)
	b = jsonv.AppendFloat(b, p.RequeueAfter)
	b = append(b, `,"events":[`...)
	for i, e := range p.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = jsonv.AppendString(b, e.Type)
		b = append(b, `,"reason":`...)
		b = jsonv.AppendString(b, e.Reason)
		b = append(b, `,"message":`...)
		b = jsonv.AppendString(b, e.Message)
		if p.eventActions && e.action >= 0 {
			b = append(b, `,"action":`...)
			b = strconv.AppendInt(b, int64(e.action), 10)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if p.Err != nil {
		b = append(b, `,"error":{"code":`...)
		b = jsonv.AppendString(b, p.Err.Code)
		b = append(b, `,"message":`...)
		b = jsonv.AppendString(b, p.Err.Message)
		if p.Err.Path != "" {
			b = append(b, `,"path":`...)
			b = jsonv.AppendString(b, p.Err.Path)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// errorPlan is a plan with no actions and the given error.
func errorPlan(e *PlanError) []byte {
	return encodePlan(planOfError(e))
}

// planOfError is the plan of a sync that stopped at e.
func planOfError(e *PlanError) *plan { return &plan{Err: e} }

// Describe returns the module's describe JSON.
func Describe() []byte {
	b := []byte(`{"abi":1,"module":"ordinal","moduleVersion":"` + ModuleVersion + moduleVariant + extendedVariant + `","kubernetesVersion":"` + KubernetesVersion + `","features":{`)
	for i, g := range gateDefaults {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonv.AppendString(b, g.name)
		b = append(b, ':')
		b = strconv.AppendBool(b, g.def)
	}
	// customSetKinds: the set may be a custom resource with apps/v1's spec and status (any group,
	// kind StatefulSet); ownerReferences name it (the host's CRD mode).
	b = append(b, `},"customSetKinds":true`...)
	// writeFailures: a host that gets an unexpected refusal asks again with the snapshot's writeFailures
	// (write_failures.go)
	b = append(b, `,"writeFailures":true`...)
	// unchangedObjects: a snapshot may name an object of the instance's previous snapshot instead of
	// carrying it again (object_cache.go)
	b = append(b, `,"unchangedObjects":true`...)
	// objectDeltas: a snapshot may carry only what changed since the instance's previous call
	// (object_delta.go)
	b = append(b, `,"objectDeltas":true`...)
	return append(appendExtensions(b), '}')
}

// Module identity.
const (
	ModuleVersion     = "0.1.0"
	KubernetesVersion = "v1.37.2"
)

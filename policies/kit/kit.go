// Package kit is what a policy module written in Go (TinyGo, go-pdk) needs of the policy ABI
// (abi/POLICY.md): the input read with gjson, the answer written. A policy is a pure function from Input to
// holds; kit.Evaluate turns it into evaluate's bytes, so the same function is tested natively.
package kit

import (
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi/inplace"
)

// Input is one evaluate call's input.
type Input struct {
	Snapshot gjson.Result // the reconcile module's snapshot: statefulSet, pods, revisions, claims, now
	Now      time.Time    // the snapshot's "now": a policy never reads a clock
	Actions  []Action     // the plan's actions
	From     int          // the first action not yet issued: holds of earlier ones are too late
	held     map[string]time.Time
	signals  gjson.Result
	context  gjson.Result
	from     gjson.Result
	set      gjson.Result // the snapshot's statefulSet and pods, found in one pass over it
	podList  gjson.Result
	pods     map[string]gjson.Result // the snapshot's pods by name, once Pod is asked
	spends   []spend                 // what the allowed disruptions spend (Spend), in the answer's spends
}

type spend struct {
	action int
	budget string
}

// Action is one write of the plan, as a policy judges it.
type Action struct {
	Index                 int
	Verb, Kind, Name      string
	Object, Patch, Errors gjson.Result
}

// Hold holds one write back (abi.PolicyHold).
type Hold struct {
	Action     int
	Reason     string
	Message    string
	RetryAfter time.Duration // 0: the host's retry after a failed sync
}

// MaxRetryAfter is the longest retryAfterSeconds the ABI allows (abi.MaxPolicyRetrySeconds); Evaluate
// asks for at most that.
const MaxRetryAfter = 24 * time.Hour

// Parse reads evaluate's input: one pass over its members, and one over each action's. A policy is called
// on every sync that has a write it may hold, so its reading is most of its cost: a member found by scanning
// from the start each time, and a pass validating the whole input, cost a small policy more than its
// decision. The input is valid JSON (abi/POLICY.md section 2: a host writes it so); gjson reads JSON that is
// not without failing, so a broken host gets an answer it cannot trust, never a trap. An input that is not
// a JSON object at all is an error.
func Parse(raw []byte) (*Input, error) {
	root := gjson.ParseBytes(raw)
	if !root.IsObject() {
		return nil, errors.New("input is not a JSON object")
	}
	var abi, plan gjson.Result
	in := &Input{}
	root.ForEach(func(k, v gjson.Result) bool { // the first of a member named twice, as Get finds it
		switch k.Str {
		case "abi":
			abi = first(abi, v)
		case "snapshot":
			in.Snapshot = first(in.Snapshot, v)
		case "from":
			if !in.from.Exists() {
				in.from = v
			}
		case "context":
			in.context = first(in.context, v)
		case "plan":
			plan = first(plan, v)
		}
		return true
	})
	if abi.Type != gjson.Number || abi.Int() != 1 {
		return nil, errors.New("input abi is not 1")
	}
	in.From, in.signals = int(in.from.Int()), in.context.Get("signals")
	var now gjson.Result
	in.Snapshot.ForEach(func(k, v gjson.Result) bool { // one pass: each Get would scan from the start again
		switch k.Str {
		case "now":
			now = first(now, v)
		case "statefulSet":
			in.set = first(in.set, v)
		case "pods":
			in.podList = first(in.podList, v)
		}
		return true
	})
	t, err := time.Parse(time.RFC3339Nano, now.String())
	if err != nil {
		return nil, errors.New("snapshot.now is not an RFC 3339 time")
	}
	in.Now = t
	i := 0
	plan.Get("actions").ForEach(func(_, a gjson.Result) bool {
		act := Action{Index: i}
		var verb, kind, name gjson.Result
		a.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "verb":
				verb = first(verb, v)
			case "kind":
				kind = first(kind, v)
			case "name":
				name = first(name, v)
			case "object":
				act.Object = first(act.Object, v)
			case "patch":
				act.Patch = first(act.Patch, v)
			case "error":
				act.Errors = first(act.Errors, v)
			}
			return true
		})
		act.Verb, act.Kind, act.Name = verb.String(), kind.String(), name.String()
		in.Actions = append(in.Actions, act)
		i++
		return true
	})
	for _, h := range in.context.Get("held").Array() {
		if t, err := time.Parse(time.RFC3339Nano, h.Get("since").String()); err == nil {
			if in.held == nil {
				in.held = map[string]time.Time{}
			}
			in.held[h.Get("verb").String()+"/"+h.Get("kind").String()+"/"+h.Get("name").String()] = t
		}
	}
	return in, nil
}

// first is v unless a member of that name came before it (r).
func first(r, v gjson.Result) gjson.Result {
	if r.Exists() {
		return r
	}
	return v
}

// Pending are the actions a policy may still hold: From on, not planned to fail, not the status write.
func (in *Input) Pending() []Action {
	var out []Action
	for _, a := range in.Actions {
		if a.Index >= in.From && a.Errors.String() == "" && a.Verb != "updateStatus" {
			out = append(out, a)
		}
	}
	return out
}

// HeldSince is when this policy first held the write (ok false: it did not hold it in the previous sync).
func (in *Input) HeldSince(a Action) (time.Time, bool) {
	t, ok := in.held[a.Verb+"/"+a.Kind+"/"+a.Name]
	return t, ok
}

// Spend says that the pod disruption a (allowed: not among decide's holds) spends one disruption of the
// context's PodDisruptionBudget of that name, which selects its pod: a Disruption's Action — a pod delete, or
// an in-place update's first action. The host commits it before it sends that write, as the eviction API
// does, or holds the write when the budget changed since this input was written (abi/POLICY.md section 4.1).
// A pair spent twice is said once.
func (in *Input) Spend(a Action, budget string) {
	for _, s := range in.spends {
		if s.action == a.Index && s.budget == budget {
			return
		}
	}
	in.spends = append(in.spends, spend{a.Index, budget})
}

// Pod is the snapshot's pod of that name (Exists false: none; the first, of pods of one name).
func (in *Input) Pod(name string) gjson.Result {
	if in.pods == nil {
		in.pods = map[string]gjson.Result{}
		in.podList.ForEach(func(_, p gjson.Result) bool {
			if n := p.Get("metadata.name").String(); !in.pods[n].Exists() {
				in.pods[n] = p
			}
			return true
		})
	}
	return in.pods[name]
}

// Set is the snapshot's StatefulSet.
func (in *Input) Set() gjson.Result { return in.set }

// Pods are the snapshot's pods (a JSON array; with describe's context "snapshot" all of them, else those
// the plan names).
func (in *Input) Pods() gjson.Result { return in.podList }

// Signal is a value the host fetched for the policy (Exists false: the host has none of that name).
func (in *Input) Signal(name string) gjson.Result {
	return in.signals.Get(gjson.Escape(name))
}

// Evaluate is evaluate's output for raw input: decide's holds, or an error answer when the input cannot be
// read or decide fails (the host then holds nothing back and reports the policy).
func Evaluate(raw []byte, decide func(*Input) ([]Hold, error)) []byte {
	in, err := Parse(raw)
	if err != nil {
		return failure(err)
	}
	holds, err := decide(in)
	if err != nil {
		return failure(err)
	}
	out := []byte(`{"abi":1,"holds":[`)
	for i, h := range holds {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"action":`...)
		out = strconv.AppendInt(out, int64(h.Action), 10)
		out = append(out, `,"reason":`...)
		out = appendString(out, h.Reason)
		out = append(out, `,"message":`...)
		out = appendString(out, h.Message)
		if h.RetryAfter > 0 { // at most a day, as the ABI allows: a longer wait is looked at again daily
			out = append(out, `,"retryAfterSeconds":`...)
			out = strconv.AppendFloat(out, min(h.RetryAfter, MaxRetryAfter).Seconds(), 'f', -1, 64)
		}
		out = append(out, '}')
	}
	out = append(out, ']')
	// A held delete spends nothing (abi/POLICY.md section 3), nor does an in-place update any action of which
	// is held: their spends are not said, or the host would refuse the whole answer and with it the hold.
	spends := in.spends[:0:0]
	for _, s := range in.spends {
		held := false
		u, inPlace := inplace.At(planOf{in}, s.action)
		for _, h := range holds {
			held = held || h.Action == s.action || inPlace && (h.Action == u.Resize || h.Action == u.Update)
		}
		if !held {
			spends = append(spends, s)
		}
	}
	if len(spends) > 0 {
		out = append(out, `,"spends":[`...)
		for i, s := range spends {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"action":`...)
			out = strconv.AppendInt(out, int64(s.action), 10)
			out = append(out, `,"podDisruptionBudget":`...)
			out = appendString(out, s.budget)
			out = append(out, '}')
		}
		out = append(out, ']')
	}
	return append(out, '}')
}

func failure(err error) []byte {
	return append(appendString([]byte(`{"abi":1,"holds":[],"error":{"code":"PolicyFailed","message":`), err.Error()), "}}"...)
}

// appendString appends s as a JSON string (invalid UTF-8 becomes U+FFFD, as encoding/json writes it).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// Selects reports whether a label selector (metav1.LabelSelector as JSON: matchLabels, matchExpressions
// with In, NotIn, Exists, DoesNotExist) selects an object with these labels. An empty selector selects
// everything, an absent one nothing (policy/v1 PodDisruptionBudget's rules); an operator it does not know
// selects nothing.
func Selects(selector, labels gjson.Result) bool {
	if !selector.Exists() || selector.Type == gjson.Null {
		return false
	}
	ok := true
	selector.Get("matchLabels").ForEach(func(k, v gjson.Result) bool {
		if l := labels.Get(gjson.Escape(k.String())); !l.Exists() || l.String() != v.String() {
			ok = false
		}
		return ok
	})
	if !ok {
		return false
	}
	for _, e := range selector.Get("matchExpressions").Array() {
		l := labels.Get(gjson.Escape(e.Get("key").String()))
		in := false
		for _, v := range e.Get("values").Array() {
			if l.Exists() && l.String() == v.String() {
				in = true
			}
		}
		switch e.Get("operator").String() {
		case "In":
			ok = in
		case "NotIn":
			ok = !in
		case "Exists":
			ok = l.Exists()
		case "DoesNotExist":
			ok = !l.Exists()
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return true
}

// Context is a member of the host's context beyond held and signals (podDisruptionBudgets, ...).
func (in *Input) Context(name string) gjson.Result { return in.context.Get(gjson.Escape(name)) }

// Healthy reports whether a pod is healthy as the disruption controller counts currentHealthy: its Ready
// condition True and no deletionTimestamp.
func Healthy(pod gjson.Result) bool {
	if !pod.Exists() || pod.Get("metadata.deletionTimestamp").Exists() {
		return false
	}
	for _, c := range pod.Get("status.conditions").Array() {
		if c.Get("type").String() == "Ready" {
			return c.Get("status").String() == "True"
		}
	}
	return false
}

// Disruption is a write of the plan that takes a pod down: its delete, or its in-place update (abi/POLICY.md
// section 2.1: a resize when its CPU or memory change, then the update that moves its revision label) when
// the kubelet restarts a container for it (Restarts). A policy that guards pods going down holds and spends
// both alike, by Action.
type Disruption struct {
	// Action is the write that stands for the disruption in holds and spends: the delete, or the in-place
	// update's first action (its resize when it has one, else its update). It was issued already when its
	// Index is before From, and is planned to fail when its Errors are set.
	Action
	// InPlace: an in-place update; Update is the index of its update (the delete's index for a delete).
	InPlace bool
	Update  int
}

// Disruptions are the plan's pod deletes and the in-place updates that restart a container, in plan order,
// those issued already (before From) and those planned to fail included: a policy counting what this sync
// took down counts the first. An in-place update that restarts nothing (labels, annotations, a resize the
// kubelet makes live) leaves its pod Ready throughout, as the disruption controller counts it: none.
func (in *Input) Disruptions() []Disruption {
	var out []Disruption
	for _, a := range in.Actions {
		if a.Kind != "Pod" {
			continue
		}
		switch a.Verb {
		case "delete":
			out = append(out, Disruption{Action: a, Update: a.Index})
		case "resize", "update":
			// An in-place update is found at its first action: its update after a resize is passed over.
			if u, ok := inplace.At(planOf{in}, a.Index); ok && u.First() == a.Index && in.Restarts(u.Update) {
				out = append(out, Disruption{Action: a, InPlace: true, Update: u.Update})
			}
		}
	}
	return out
}

// Restarts reports whether the in-place update whose update is action i restarts a container of its pod
// (abi/POLICY.md section 2.1): against the snapshot's pod, the update's object changes the image of a
// container or init container, adds one, or changes a CPU or memory request or limit of one whose
// resizePolicy for that resource is RestartContainer. A resize under NotRequired, the default, the kubelet
// makes live.
func (in *Input) Restarts(i int) bool {
	pod, obj := in.Pod(in.Actions[i].Name).Get("spec"), in.Actions[i].Object.Get("spec")
	for _, list := range []string{"containers", "initContainers"} {
		was := map[string]gjson.Result{}
		for _, c := range pod.Get(list).Array() {
			was[c.Get("name").String()] = c
		}
		for _, c := range obj.Get(list).Array() {
			old, ok := was[c.Get("name").String()]
			if !ok || old.Get("image").String() != c.Get("image").String() || resizeRestarts(old, c) {
				return true
			}
		}
	}
	return false
}

// resizeRestarts: a CPU or memory request or limit differs between the container as it was and as it will
// be, and the container's resizePolicy restarts it for that resource.
func resizeRestarts(was, will gjson.Result) bool {
	for _, r := range []string{"cpu", "memory"} {
		changed := false
		for _, kind := range []string{"requests", "limits"} {
			path := "resources." + kind + "." + r
			changed = changed || was.Get(path).String() != will.Get(path).String()
		}
		if !changed {
			continue
		}
		for _, p := range was.Get("resizePolicy").Array() {
			if p.Get("resourceName").String() == r && p.Get("restartPolicy").String() == "RestartContainer" {
				return true
			}
		}
	}
	return false
}

// DisruptionHeldSince is HeldSince of a disruption: for an in-place update, since when this policy has held
// either of its writes (the earlier), so a hold timed from its resize goes on counting once a sync's plan has
// only its update left (a resize that went out before an update held).
func (in *Input) DisruptionHeldSince(d Disruption) (time.Time, bool) {
	if !d.InPlace {
		return in.HeldSince(d.Action)
	}
	r, rok := in.held["resize/Pod/"+d.Name]
	u, uok := in.held["update/Pod/"+d.Name]
	switch {
	case rok && (!uok || r.Before(u)):
		return r, true
	case uok:
		return u, true
	}
	return time.Time{}, false
}

// planOf is an input's plan and snapshot as inplace.At reads them.
type planOf struct{ in *Input }

func (p planOf) Len() int { return len(p.in.Actions) }

func (p planOf) Action(i int) (verb, kind, name string) {
	a := &p.in.Actions[i]
	return a.Verb, a.Kind, a.Name
}

func (p planOf) Marks(i int) (revision, inPlace string) {
	meta := p.in.Actions[i].Object.Get("metadata")
	return stringAt(meta.Get("labels"), inplace.LabelRevision), stringAt(meta.Get("annotations"), inplace.Annotation)
}

func (p planOf) PodRevision(name string) string {
	return stringAt(p.in.Pod(name).Get("metadata.labels"), inplace.LabelRevision)
}

// stringAt is the string member key of object o ("" when absent or not a string).
func stringAt(o gjson.Result, key string) string {
	if v := o.Get(gjson.Escape(key)); v.Type == gjson.String {
		return v.Str
	}
	return ""
}

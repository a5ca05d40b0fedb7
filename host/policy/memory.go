package policy

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// Memory is what a host remembers of one set's holds between syncs: since when each policy has held each
// write (abi.PolicyContext.Held), so a policy can time a hold out without state of its own. Safe for
// concurrent use; the zero value is ready.
type Memory struct {
	mu    sync.Mutex
	since map[string]map[heldKey]time.Time // policy -> write -> since
}

type heldKey struct{ verb, kind, name string }

// Released is a write a policy held in the previous sync and no longer holds.
type Released struct {
	Policy, Verb, Kind, Name string
	HeldFor                  time.Duration
}

func (r Released) String() string {
	return fmt.Sprintf("policy %s no longer holds %s %s %s (held %s)", r.Policy, r.Verb, r.Kind, r.Name, r.HeldFor.Round(time.Second))
}

// Since is when policy first held the write (verb, kind, name) among the holds Record last remembered.
func (m *Memory) Since(policy, verb, kind, name string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.since[policy][heldKey{verb, kind, name}]
	return t, ok
}

// held is what policy has been holding, for its input.
func (m *Memory) held(policy string) []abi.HeldWrite {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.heldLocked(policy)
}

// heldLocked is held, m locked.
func (m *Memory) heldLocked(policy string) []abi.HeldWrite {
	var out []abi.HeldWrite
	for k, t := range m.since[policy] {
		out = append(out, abi.HeldWrite{Verb: k.verb, Kind: k.kind, Name: k.name, Since: t.UTC().Format(time.RFC3339Nano)})
	}
	slices.SortFunc(out, func(a, b abi.HeldWrite) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Verb, b.Verb))
	})
	return out
}

// Record remembers the holds of a sync at now and returns the writes held before and not now, less those
// the sync left unmade: a write a policy let through is released once it is made, so the sync after a
// delete that failed asks the policy again with the write's time kept (a handoff whose timeout let the
// delete through must not time it afresh).
func (m *Memory) Record(now time.Time, held []hostplan.HeldWrite, unmade Unmade) []Released {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := map[string]map[heldKey]time.Time{}
	for _, h := range held {
		k := heldKey{h.Verb, h.Kind, h.Name}
		t, ok := m.since[h.Policy][k]
		if !ok {
			t = now
		}
		putSince(next, h.Policy, k, t)
	}
	for p, ks := range m.since {
		for k, t := range ks {
			if _, still := next[p][k]; !still && unmade[k] {
				putSince(next, p, k, t)
			}
		}
	}
	var out []Released
	for p, ks := range m.since {
		for k, t := range ks {
			if _, still := next[p][k]; !still {
				out = append(out, Released{Policy: p, Verb: k.verb, Kind: k.kind, Name: k.name, HeldFor: now.Sub(t)})
			}
		}
	}
	m.since = next
	slices.SortFunc(out, func(a, b Released) int {
		return cmp.Or(cmp.Compare(a.Policy, b.Policy), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Verb, b.Verb))
	})
	return out
}

// Unmade is the writes a sync planned and did not make (Memory.Record).
type Unmade map[heldKey]bool

// UnmadeOf is what the sync whose writes res carried out (err, how they ended) left unmade: each write of
// the plan carried out that was refused (with its refusal in the plan after a replan, or the write that
// stopped the plan) or not issued.
func UnmadeOf(res hostplan.Applied, err error) Unmade {
	out := Unmade{}
	if res.Plan == nil {
		return out
	}
	for i, a := range res.Plan.Actions {
		if i >= res.Issued || a.Error != "" {
			out[heldKey{a.Verb, a.Kind, a.Name}] = true
		}
	}
	if stopped := (*hostplan.WriteError)(nil); errors.As(err, &stopped) {
		out[heldKey{stopped.Action.Verb, stopped.Action.Kind, stopped.Action.Name}] = true
	}
	return out
}

// AnnotationHeld is the set's annotation in which the host keeps its Memory, so that a controller that
// restarts, or a replica that takes the set's shard, tells each policy since when it has held each write as
// the one before would have: a JSON object of the policies' names, each the writes it holds as its context
// says them (abi.HeldWrite). The host writes it when what its policies hold changes (MemoryWrite), and
// removes it once they hold nothing; the set's status says the same in words (ConditionPolicyHold).
const AnnotationHeld = abi.AnnotationPrefix + "policy-held"

// MemoryOf is the Memory a host starts with for a set it has none of (a restarted controller, a shard
// taken, a replay's restarted controller): what the set's AnnotationHeld records, less the records of a hold
// that ended, as its ConditionPolicyHold dates them. The condition True since T (dated from when its hold
// began, see HoldStatus): a record from before T is of an earlier hold. False since T (a sync held nothing
// at T): a record from before T, or from T's second (the condition keeps whole seconds), is of the hold
// that ended then; a later one is of a hold whose status write has not landed yet. No condition: no status
// write saying a hold has landed yet, so every record is of the hold on. The host writes the record after
// the status (MemoryWrite), so the two disagree only when a write of one was refused: a refused status write
// delays the condition, never the record's time. An annotation that is not what the host writes is an
// error naming what is wrong, with the Memory of nothing (the policies time their holds from this sync).
func MemoryOf(set gjson.Result) (*Memory, error) {
	m := &Memory{}
	value := set.Get("metadata.annotations." + gjson.Escape(AnnotationHeld))
	if !value.Exists() {
		return m, nil
	}
	records, err := parseHeld(value.String())
	if err != nil {
		return m, fmt.Errorf("annotation %s: %w", AnnotationHeld, err)
	}
	from, err := recordsFrom(set.Get(`status.conditions.#(type=="` + ConditionPolicyHold + `")`))
	if err != nil {
		return m, err
	}
	for p, writes := range records {
		for k, since := range writes {
			if !since.Before(from) {
				m.setSince(p, k, since)
			}
		}
	}
	return m, nil
}

// recordsFrom is the earliest time a record of the hold on can have, by the set's PolicyHold condition cond.
func recordsFrom(cond gjson.Result) (time.Time, error) {
	if !cond.Exists() {
		return time.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339, cond.Get("lastTransitionTime").String())
	if err != nil {
		return time.Time{}, fmt.Errorf("condition %s: lastTransitionTime %q is not an RFC 3339 time", ConditionPolicyHold, cond.Get("lastTransitionTime").String())
	}
	if cond.Get("status").String() != "True" {
		return at.Add(time.Second), nil
	}
	return at, nil
}

// parseHeld reads AnnotationHeld's value: each policy's writes, each once, each with its time.
func parseHeld(value string) (map[string]map[heldKey]time.Time, error) {
	var recorded map[string][]abi.HeldWrite
	if err := json.Unmarshal([]byte(value), &recorded); err != nil {
		return nil, fmt.Errorf("is not a JSON object of policies' held writes: %v", err)
	}
	out := map[string]map[heldKey]time.Time{}
	for p, writes := range recorded {
		if p == "" {
			return nil, fmt.Errorf("names a policy with an empty name")
		}
		out[p] = map[heldKey]time.Time{}
		for i, w := range writes {
			at := fmt.Sprintf("policy %s's write %d", p, i)
			since, err := time.Parse(time.RFC3339Nano, w.Since)
			switch {
			case w.Verb == "" || w.Kind == "" || w.Name == "":
				return nil, fmt.Errorf("%s has an empty verb, kind or name", at)
			case err != nil:
				return nil, fmt.Errorf("%s: since %q is not an RFC 3339 time", at, w.Since)
			}
			k := heldKey{w.Verb, w.Kind, w.Name}
			if _, dup := out[p][k]; dup {
				return nil, fmt.Errorf("%s (%s %s %s) is recorded twice", at, w.Verb, w.Kind, w.Name)
			}
			out[p][k] = since
		}
	}
	return out, nil
}

// setSince remembers that policy has held write k since t.
func (m *Memory) setSince(policy string, k heldKey, t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.since == nil {
		m.since = map[string]map[heldKey]time.Time{}
	}
	putSince(m.since, policy, k, t)
}

// putSince sets since[policy][k] to t, making policy's map when it has none.
func putSince(since map[string]map[heldKey]time.Time, policy string, k heldKey, t time.Time) {
	if since[policy] == nil {
		since[policy] = map[heldKey]time.Time{}
	}
	since[policy][k] = t
}

// annotation is AnnotationHeld's value for m ("": nothing held, no annotation).
func (m *Memory) annotation() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]abi.HeldWrite{}
	for p := range m.since {
		if w := m.heldLocked(p); len(w) > 0 {
			out[p] = w
		}
	}
	if len(out) == 0 {
		return ""
	}
	b, _ := json.Marshal(out) // strings only: it cannot fail; map keys sorted, so one memory, one value
	return string(b)
}

// MemoryWrite is the host's write that records mem in the set (AnnotationHeld): a merge patch of the
// annotation, or of its removal once nothing is held; nil when the set records mem already. A host issues
// it after the sync's plan (a sync's status write is a PUT at the snapshot's resourceVersion, which this
// write would change).
func MemoryWrite(set gjson.Result, mem *Memory) *abi.Action {
	if mem == nil {
		return nil
	}
	want, cur := mem.annotation(), set.Get("metadata.annotations."+gjson.Escape(AnnotationHeld))
	if want == cur.String() && (want != "") == cur.Exists() {
		return nil
	}
	value := any(nil)
	if want != "" {
		value = want
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationHeld: value}}})
	return &abi.Action{Verb: abi.VerbPatch, Kind: abi.KindStatefulSet, Namespace: set.Get("metadata.namespace").String(),
		Name: set.Get("metadata.name").String(), PatchType: string(types.MergePatchType), Patch: patch}
}

// Empty reports whether m remembers no hold.
func (m *Memory) Empty() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.since) == 0
}

// MemoryInvalid is the host's event about a set whose record MemoryOf could not read (err, its error).
func MemoryInvalid(err error) abi.Event {
	return abi.Event{Type: abi.EventWarning, Reason: EventMemoryInvalid, Message: err.Error() + "; the policies' holds are timed from this sync"}
}

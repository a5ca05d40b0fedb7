package replay

import (
	"encoding/json"
	"iter"
	"strconv"
	"strings"

	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// PodGrid is the pods one sync saw, in ordinal order. A replay records one per sync, and a rollout's pods
// are a few runs of consecutive ordinals in one state (the updated ones Ready, the one being replaced, the
// old ones Ready): a grid holds its runs, each a state and a count, so a grid costs its runs, not its pods
// (a 1000-pod preview held half a gigabyte of states, then tens of megabytes of shared chunks). The replay
// builds each sync's grid from the last one and the pods that changed (gridEdit): a sync's grid costs what
// changed and the runs, not a walk of every pod. A grid is never changed once made. It is written as a JSON
// array of PodState.
type PodGrid struct {
	runs []podRun
	n    int
}

// podRun is count states from first on: each next one the pod of the next ordinal, named as first is with
// its ordinal's digits (web-3, web-4, ...), in first's state.
type podRun struct {
	first PodState
	count int
}

// at is the run's k-th state.
func (r podRun) at(k int) PodState {
	if k == 0 {
		return r.first
	}
	p := r.first
	p.Ordinal += k
	p.Name = r.prefix() + strconv.Itoa(p.Ordinal)
	return p
}

// last is the run's last state.
func (r podRun) last() PodState { return r.at(r.count - 1) }

// prefix is the name of first without its ordinal's digits.
func (r podRun) prefix() string {
	return strings.TrimSuffix(r.first.Name, strconv.Itoa(r.first.Ordinal))
}

// follows reports whether p can end the run: the pod of the next ordinal, named as the run's pods are, in
// their state.
func (r podRun) follows(p PodState) bool {
	q := r.first
	if p.Ordinal != q.Ordinal+r.count || p.Revision != q.Revision || p.Label != q.Label || p.Phase != q.Phase ||
		p.Ready != q.Ready || p.Terminating != q.Terminating || q.Ordinal < 0 {
		return false
	}
	digits := strconv.Itoa(q.Ordinal)
	if !strings.HasSuffix(q.Name, digits) {
		return false
	}
	prefix := q.Name[:len(q.Name)-len(digits)]
	return len(p.Name) > len(prefix) && strings.HasPrefix(p.Name, prefix) && p.Name[len(prefix):] == strconv.Itoa(p.Ordinal)
}

// gridBuilder folds states, in order, into runs.
type gridBuilder struct{ g PodGrid }

// add adds one state.
func (b *gridBuilder) add(p PodState) {
	b.g.n++
	if k := len(b.g.runs) - 1; k >= 0 && b.g.runs[k].follows(p) {
		b.g.runs[k].count++
		return
	}
	b.g.runs = append(b.g.runs, podRun{first: p, count: 1})
}

// addRun adds the states of r from its k-th on, up to (not including) its end-th.
func (b *gridBuilder) addRun(r podRun, k, end int) {
	if k >= end {
		return
	}
	b.add(r.at(k))
	if end-k > 1 {
		// the rest follow the state just added: they fold into its run as they did into r
		b.g.runs[len(b.g.runs)-1].count += end - k - 1
		b.g.n += end - k - 1
	}
}

// GridOf is the grid of states (in ordinal order).
func GridOf(states []PodState) PodGrid {
	var b gridBuilder
	for _, p := range states {
		b.add(p)
	}
	return b.g
}

// gridChange is a pod of the set whose state a sync reads anew: its new state, or none when it is no longer
// one of the set's pods (deleted, or no longer a member). key is where the grid has it (gridKey).
type gridChange struct {
	key    PodState // Ordinal and Name
	state  PodState
	member bool
}

// gridLess orders states as a grid does: by ordinal, then by name in natural order (the view's order).
func gridLess(a, b PodState) bool {
	if a.Ordinal != b.Ordinal {
		return a.Ordinal < b.Ordinal
	}
	return world.NaturalLess(a.Name, b.Name)
}

// before reports whether the run's k-th state comes before key in a grid (gridLess), its name made only
// when the ordinals tie.
func (r podRun) before(k int, key PodState) bool {
	if o := r.first.Ordinal + k; k > 0 && o != key.Ordinal {
		return o < key.Ordinal
	}
	return gridLess(r.at(k), key)
}

// gridEdit is prev with changes applied (changes in grid order, one per pod): a change replaces the state of
// its pod, adds it or removes it. It costs prev's runs and the changes, not prev's pods: the states before a
// change are taken a run, or the part of a run, at a time (a run's ordinals are consecutive).
func gridEdit(prev PodGrid, changes []gridChange) PodGrid {
	if len(changes) == 0 {
		return prev
	}
	var b gridBuilder
	b.g.runs = make([]podRun, 0, len(prev.runs)+2*len(changes))
	runs := prev.runs
	k := 0 // runs[0]'s states before k are added
	for _, ch := range changes {
		// the states before the change's pod
		for len(runs) > 0 {
			r := runs[0]
			if r.before(r.count-1, ch.key) {
				b.addRun(r, k, r.count)
				runs, k = runs[1:], 0
				continue
			}
			at := k
			if r.count > 1 {
				at = max(k, min(ch.key.Ordinal-r.first.Ordinal, r.count-1))
			}
			for at < r.count && r.before(at, ch.key) {
				at++
			}
			b.addRun(r, k, at)
			k = at
			break
		}
		// the pod's old state, if the grid has it
		if len(runs) > 0 {
			if old := runs[0].at(k); old.Ordinal == ch.key.Ordinal && old.Name == ch.key.Name {
				if k++; k == runs[0].count {
					runs, k = runs[1:], 0
				}
			}
		}
		if ch.member {
			b.add(ch.state)
		}
	}
	for _, r := range runs {
		b.addRun(r, k, r.count)
		k = 0
	}
	return b.g
}

// Len is the number of pods in the grid.
func (g PodGrid) Len() int { return g.n }

// All yields the grid's states in ordinal order.
func (g PodGrid) All() iter.Seq[PodState] {
	return func(yield func(PodState) bool) {
		for _, r := range g.runs {
			for k := range r.count {
				if !yield(r.at(k)) {
					return
				}
			}
		}
	}
}

// States is the grid as a slice of its own.
func (g PodGrid) States() []PodState {
	out := make([]PodState, 0, g.n)
	for p := range g.All() {
		out = append(out, p)
	}
	return out
}

// MarshalJSON writes the grid as the array of its states.
func (g PodGrid) MarshalJSON() ([]byte, error) { return g.appendJSON(nil), nil }

// appendJSON appends the grid as json.Marshal encodes the slice of its states (an empty grid as []), without
// reflection: most of a timeline's JSON is its steps' grids. The states of a run differ in name and ordinal
// only, so the rest of them, and the quoted prefix of their names, are encoded once a run.
func (g PodGrid) appendJSON(b []byte) []byte {
	b = append(b, '[')
	var digits [20]byte
	for i, r := range g.runs {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.first.appendJSON(b)
		if r.count == 1 {
			continue
		}
		name := jsonv.AppendString(nil, r.prefix())
		name = name[:len(name)-1] // open: the ordinal's digits follow
		rest := r.first.appendRest(nil)
		for k := 1; k < r.count; k++ {
			ord := strconv.AppendInt(digits[:0], int64(r.first.Ordinal+k), 10)
			b = append(b, `,{"name":`...)
			b = append(append(append(b, name...), ord...), `","ordinal":`...)
			b = append(append(b, ord...), rest...)
		}
	}
	return append(b, ']')
}

// appendJSON appends the state as json.Marshal encodes it.
func (p PodState) appendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = jsonv.AppendString(b, p.Name)
	b = append(b, `,"ordinal":`...)
	b = strconv.AppendInt(b, int64(p.Ordinal), 10)
	return p.appendRest(b)
}

// appendRest appends what follows the state's ordinal in its encoding.
func (p PodState) appendRest(b []byte) []byte {
	b = append(b, `,"revision":`...)
	b = jsonv.AppendString(b, p.Revision)
	b = append(b, `,"label":`...)
	b = jsonv.AppendString(b, p.Label)
	b = append(b, `,"phase":`...)
	b = jsonv.AppendString(b, p.Phase)
	b = append(b, `,"ready":`...)
	b = strconv.AppendBool(b, p.Ready)
	b = append(b, `,"terminating":`...)
	b = strconv.AppendBool(b, p.Terminating)
	return append(b, '}')
}

// UnmarshalJSON reads an array of states.
func (g *PodGrid) UnmarshalJSON(b []byte) error {
	var states []PodState
	if err := json.Unmarshal(b, &states); err != nil {
		return err
	}
	*g = GridOf(states)
	return nil
}

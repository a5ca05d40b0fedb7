package replay

import (
	"encoding/json"
	"iter"
	"slices"
)

// PodGrid is the pods one sync saw, in ordinal order. A replay records one per sync, and between two syncs
// a pod or two change: consecutive grids share the chunks in which nothing changed, so a rollout of n pods
// over s syncs holds about s chunks and n states instead of s·n states (a 1000-pod preview held half a
// gigabyte of them). A grid is never changed once made. It is written as a JSON array of PodState.
type PodGrid struct {
	chunks [][]PodState // each gridChunk states but the last
	n      int
}

// gridChunk is how many states a chunk holds: small enough that a change copies little, large enough that
// a grid is few pointers.
const gridChunk = 32

// GridOf is the grid of states (in ordinal order), sharing with prev every chunk that holds the same states.
func GridOf(states []PodState, prev PodGrid) PodGrid {
	g := PodGrid{n: len(states), chunks: make([][]PodState, 0, (len(states)+gridChunk-1)/gridChunk)}
	for i := 0; i < len(states); i += gridChunk {
		c := states[i:min(i+gridChunk, len(states))]
		if k := len(g.chunks); k < len(prev.chunks) && slices.Equal(prev.chunks[k], c) {
			g.chunks = append(g.chunks, prev.chunks[k])
			continue
		}
		g.chunks = append(g.chunks, slices.Clone(c))
	}
	return g
}

// Len is the number of pods in the grid.
func (g PodGrid) Len() int { return g.n }

// All yields the grid's states in ordinal order.
func (g PodGrid) All() iter.Seq[PodState] {
	return func(yield func(PodState) bool) {
		for _, c := range g.chunks {
			for _, p := range c {
				if !yield(p) {
					return
				}
			}
		}
	}
}

// States is the grid as a slice of its own.
func (g PodGrid) States() []PodState {
	out := make([]PodState, 0, g.n)
	for _, c := range g.chunks {
		out = append(out, c...)
	}
	return out
}

// MarshalJSON writes the grid as the array of its states.
func (g PodGrid) MarshalJSON() ([]byte, error) {
	if g.n == 0 {
		return []byte("[]"), nil
	}
	return json.Marshal(g.States())
}

// UnmarshalJSON reads an array of states.
func (g *PodGrid) UnmarshalJSON(b []byte) error {
	var states []PodState
	if err := json.Unmarshal(b, &states); err != nil {
		return err
	}
	*g = GridOf(states, PodGrid{})
	return nil
}

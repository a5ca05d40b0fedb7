package replay

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// A grid holds the states it was given, in order, as runs of consecutive ordinals in one state; it is written
// as the JSON array of its states.
func TestPodGridFoldsRuns(t *testing.T) {
	states := make([]PodState, 100)
	for i := range states {
		states[i] = PodState{Name: fmt.Sprintf("web-%d", i), Ordinal: i, Label: "A", Phase: "Running", Ready: true}
	}
	states[40].Ready = false
	g := GridOf(states)
	if !slices.Equal(g.States(), states) || g.Len() != 100 {
		t.Fatalf("the grid does not hold its states")
	}
	if len(g.runs) != 3 {
		t.Errorf("100 pods with one not Ready are %d runs, want 3", len(g.runs))
	}
	got, _ := json.Marshal(g)
	want, _ := json.Marshal(states)
	if string(got) != string(want) {
		t.Errorf("JSON:\n got  %.200s\n want %.200s", got, want)
	}
	var back PodGrid
	if err := json.Unmarshal(got, &back); err != nil || !slices.Equal(back.States(), states) {
		t.Errorf("read back: %v", err)
	}
	if b, _ := json.Marshal(PodGrid{}); string(b) != "[]" {
		t.Errorf("an empty grid is %s", b)
	}
}

// Names that are not the run's prefix and ordinal, gaps, and ordinals twice are runs of their own.
func TestPodGridKeepsOddNames(t *testing.T) {
	states := []PodState{
		{Name: "web-0", Ordinal: 0}, {Name: "web-1", Ordinal: 1}, {Name: "web-01", Ordinal: 1}, {Name: "web-2", Ordinal: 2},
		{Name: "web-4", Ordinal: 4}, {Name: "web-05", Ordinal: 5}, {Name: "web-06", Ordinal: 6}, {Name: "other-7", Ordinal: 7},
	}
	if got := GridOf(states).States(); !slices.Equal(got, states) {
		t.Fatalf("got %v\nwant %v", got, states)
	}
}

// gridEdit gives the grid of the states with the changes applied, whatever the changes: a state replaced,
// a pod added or removed, inside a run or at its edges, and the runs fold again around them.
func TestGridEditIsTheGridOfTheChangedStates(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	phases := []string{"Running", "Pending"}
	random := func(o int) PodState {
		name := fmt.Sprintf("web-%d", o)
		if rng.Intn(20) == 0 {
			name = fmt.Sprintf("web-0%d", o) // another pod of the same ordinal
		}
		return PodState{Name: name, Ordinal: o, Label: "AB"[rng.Intn(2):][:1], Phase: phases[rng.Intn(2)], Ready: rng.Intn(3) > 0}
	}
	for round := 0; round < 2000; round++ {
		n := rng.Intn(40)
		var states []PodState
		for o := 0; o < n; o++ {
			if rng.Intn(8) > 0 {
				states = append(states, random(o))
			}
		}
		states = sortedStates(states)
		prev := GridOf(states)
		// the changes: some states replaced or removed, some pods added
		byName := map[string]PodState{}
		for _, p := range states {
			byName[p.Name] = p
		}
		var changes []gridChange
		for k := rng.Intn(5); k > 0; k-- {
			p := random(rng.Intn(n + 2))
			if slices.ContainsFunc(changes, func(c gridChange) bool { return c.key.Name == p.Name }) {
				continue
			}
			if rng.Intn(3) == 0 {
				changes = append(changes, gridChange{key: p})
				delete(byName, p.Name)
			} else {
				changes = append(changes, gridChange{key: p, state: p, member: true})
				byName[p.Name] = p
			}
		}
		slices.SortFunc(changes, func(a, b gridChange) int {
			if gridLess(a.key, b.key) {
				return -1
			}
			return 1
		})
		var want []PodState
		for _, p := range byName {
			want = append(want, p)
		}
		want = sortedStates(want)
		got := gridEdit(prev, changes)
		if !slices.Equal(got.States(), want) || got.Len() != len(want) {
			t.Fatalf("round %d: %v with %v\n got  %v\n want %v", round, states, changes, got.States(), want)
		}
		if fresh := GridOf(want); !slices.Equal(got.runs, fresh.runs) {
			t.Fatalf("round %d: runs %v, folded afresh %v", round, got.runs, fresh.runs)
		}
		if !slices.Equal(prev.States(), states) {
			t.Fatalf("round %d: the earlier grid changed", round)
		}
	}
}

func sortedStates(states []PodState) []PodState {
	slices.SortFunc(states, func(a, b PodState) int {
		if gridLess(a, b) {
			return -1
		}
		if gridLess(b, a) {
			return 1
		}
		return 0
	})
	return states
}

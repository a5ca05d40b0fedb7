package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// A grid holds the states it was given, in order, and shares with the grid before it exactly the chunks in
// which no state changed; it is written as the JSON array of its states.
func TestPodGridSharesUnchangedChunks(t *testing.T) {
	states := make([]PodState, 100)
	for i := range states {
		states[i] = PodState{Name: fmt.Sprintf("web-%d", i), Ordinal: i, Label: "A", Phase: "Running", Ready: true}
	}
	first := GridOf(states, PodGrid{})
	states[40].Ready = false // chunk 1 of 4
	second := GridOf(states, first)
	if !slices.Equal(second.States(), states) || second.Len() != 100 {
		t.Fatalf("the grid does not hold its states")
	}
	for k := range second.chunks {
		shared := &second.chunks[k][0] == &first.chunks[k][0]
		if shared != (k != 1) {
			t.Errorf("chunk %d shared: %v", k, shared)
		}
	}
	if first.States()[40].Ready != true {
		t.Errorf("the earlier grid changed with the later")
	}
	got, _ := json.Marshal(second)
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

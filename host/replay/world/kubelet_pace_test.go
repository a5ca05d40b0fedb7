package world

import (
	"encoding/json"
	"testing"
	"time"
)

// A model's pace is numbers and whence, the sentence the text prints made from them: the tick model has its
// tick and no phases; a scenario's delays are the scenario's, its kubelet.source its words; the restart
// delay is the start delay unless set, and said only then.
func TestPaceIsTypedAndSaidFromItsValues(t *testing.T) {
	d := func(s time.Duration) *Duration { x := Duration(s); return &x }
	for _, c := range []struct {
		name string
		kc   KubeletConfig
		json string
		text string
	}{
		{"tick", KubeletConfig{Model: ModelTick}, `{"tickSeconds":5,"from":"defaults"}`, "one tick of 5s per step (the reference harness's)"},
		{"scenario", KubeletConfig{StartDelay: d(1500 * time.Millisecond), RestartDelay: d(4 * time.Second)},
			`{"startSeconds":1.5,"readySeconds":3,"terminationSeconds":5,"restartSeconds":4,"from":"scenario"}`,
			"a pod Running 1.5s after it is created, Ready 3s after that, gone 5s after it is deleted or its grace period if shorter, its containers running again 4s after an in-place update (the scenario's)"},
		{"source", KubeletConfig{Source: "kwok's pace"}, `{"startSeconds":2,"readySeconds":3,"terminationSeconds":5,"restartSeconds":2,"from":"scenario","source":"kwok's pace"}`,
			"a pod Running 2s after it is created, Ready 3s after that, gone 5s after it is deleted or its grace period if shorter (kwok's pace)"},
	} {
		p := c.kc.Pace()
		b, err := json.Marshal(p)
		if err != nil || string(b) != c.json {
			t.Errorf("%s: JSON %s (%v), want %s", c.name, b, err, c.json)
		}
		if p.String() != c.text {
			t.Errorf("%s: text %q, want %q", c.name, p.String(), c.text)
		}
	}
}

package inplace_test

import (
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/inplace"
)

// The names the judgement reads are the ABI's.
func TestNamesAreTheABIs(t *testing.T) {
	if inplace.VerbUpdate != abi.VerbUpdate || inplace.VerbResize != abi.VerbResize || inplace.KindPod != abi.KindPod ||
		inplace.Annotation != abi.AnnotationInPlaceUpdate || inplace.LabelRevision != abi.LabelRevision {
		t.Fatal("package inplace's names differ from package abi's")
	}
}

type act struct{ verb, kind, name, revision, record string }

type plan struct {
	acts []act
	pods map[string]string
}

func (p plan) Len() int                              { return len(p.acts) }
func (p plan) Action(i int) (string, string, string) { a := p.acts[i]; return a.verb, a.kind, a.name }
func (p plan) Marks(i int) (string, string)          { return p.acts[i].revision, p.acts[i].record }
func (p plan) PodRevision(name string) string        { return p.pods[name] }

// Which actions are an in-place update, and of which: an update moving the pod's revision label to the
// revision its record names, with the resize of the same pod right before it.
func TestAt(t *testing.T) {
	p := plan{pods: map[string]string{"web-0": "r1", "web-1": "r1", "web-2": "r1", "web-3": "r2", "web-4": "r1"}, acts: []act{
		{"resize", "Pod", "web-4", "r1", "r1"}, // 0: the resize of web-4's in-place update
		{"update", "Pod", "web-4", "r2", "r2"}, // 1: its update
		{"update", "Pod", "web-3", "r2", "r2"}, // 2: a repair: web-3 is at r2 already
		{"update", "Pod", "web-2", "r2", ""},   // 3: no record: not in place
		{"update", "Pod", "web-2", "r2", "r1"}, // 4: a record naming another revision
		{"resize", "Pod", "web-1", "", ""},     // 5: a resize followed by another pod's update
		{"update", "Pod", "web-0", "r2", "r2"}, // 6: web-0's in-place update, without a resize
		{"delete", "Pod", "web-0", "", ""},     // 7
		{"update", "PersistentVolumeClaim", "web-0", "r2", "r2"},
		{"resize", "Pod", "web-1", "", ""}, // 9: a resize at the end (planned to fail: no update follows)
	}}
	want := map[int]inplace.Update{
		0: {Pod: "web-4", Resize: 0, Update: 1},
		1: {Pod: "web-4", Resize: 0, Update: 1},
		6: {Pod: "web-0", Resize: -1, Update: 6},
	}
	for i := -1; i <= len(p.acts); i++ {
		u, ok := inplace.At(p, i)
		w, wok := want[i]
		if ok != wok || u != w {
			t.Errorf("action %d: %+v %v, want %+v %v", i, u, ok, w, wok)
		}
	}
	if u := want[0]; u.First() != 0 {
		t.Errorf("First of %+v is %d", u, u.First())
	}
	if u := want[6]; u.First() != 6 {
		t.Errorf("First of %+v is %d", u, u.First())
	}
}

package world

import "testing"

// The model's never-Ready revision keeps that revision's pods from becoming Ready in both models, whatever a
// rule says, and leaves pods of other revisions as the rules and annotations have them.
func TestNeverReadyRevision(t *testing.T) {
	no := false
	cfg := KubeletConfig{NeverReadyRevision: "web-b", Pods: []PodBehavior{{NeverReady: &no}}}
	pod := func(rev string, annotated bool) Obj {
		md := Obj{"name": "web-0", "labels": Obj{"controller-revision-hash": rev}}
		if annotated {
			md["annotations"] = Obj{NeverReadyAnnotation: "true"}
		}
		return Obj{"metadata": md}
	}
	for _, c := range []struct {
		rev       string
		annotated bool
		delays    bool   // never Ready in the delays model
		tick      string // why not Ready in the tick model ("" Ready)
	}{
		{"web-b", false, true, "revision web-b is never Ready in this model"},
		{"web-a", false, false, ""},
		{"web-a", true, false, NeverReadyAnnotation}, // a rule may make an annotated pod Ready in the delays model, not in the harness's
	} {
		p := pod(c.rev, c.annotated)
		if got := cfg.behaviorOf(p).neverReady; got != c.delays {
			t.Errorf("%s annotated %v: delays never Ready %v, want %v", c.rev, c.annotated, got, c.delays)
		}
		if got := cfg.notReadyInTick(p); got != c.tick {
			t.Errorf("%s annotated %v: tick %q, want %q", c.rev, c.annotated, got, c.tick)
		}
	}
	if (KubeletConfig{}).neverReadyRevision(pod("", false)) {
		t.Error("no never-Ready revision set, yet a pod without a revision is never Ready")
	}
}

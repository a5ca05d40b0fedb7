package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/host/replay"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Intermediate states of a simulated rollout.
//
// `oracle simulate -steps k -final F` stops after k syncs and writes the world right after the
// k-th sync's writes were applied, before the toy kubelet/GC of step k runs. The world the
// (k+1)-th sync sees is that state advanced by one tick with the simulator's documented world
// rules (README "simulate"): terminating pods disappear, pods the simulation created become
// Running+Ready (or Ready=False with the oracle.test/never-ready annotation), Pending PVCs
// become Bound, and orphaned objects are garbage-collected. advanceWorld applies those rules;
// every reconstructed state is checked against the plan the simulator itself computed for that
// step (`simulate -json`), so each committed sim case is exactly a state the oracle's timeline
// went through.

const simTick = 5 * time.Second

func (g *Gen) sim(group, desc string, s0 M, maxSteps int) {
	g.group(group, desc)
	s0 = g.o.defaults(s0)
	tl, _ := g.o.simulate(s0, maxSteps)
	steps := jsonobj.AsArr(tl["steps"])
	if len(steps) < 2 {
		fatalf("%s: simulation has only %d step(s)", group, len(steps))
	}
	for k := range steps {
		var st M
		if k == 0 {
			st = clone(s0)
		} else {
			_, fin := g.o.simulate(s0, k)
			st = advanceWorld(fin, simTick)
		}
		st = g.o.defaults(st)
		want := jsonobj.AsObj(jsonobj.Get(steps[k], "plan"))
		got := g.o.plan(st)
		if !jsonobj.Equal(stripKeys(got, "resourceVersion"), stripKeys(want, "resourceVersion")) {
			fatalf("%s step %d: reconstructed world's plan differs from the simulator's\n got: %s\nwant: %s",
				group, k, compactMarshal(got), compactMarshal(want))
		}
		g.add(group, fmt.Sprintf("step-%02d", k), fmt.Sprintf("world before sync %d of %d (now %s): %s",
			k+1, len(steps), jsonobj.GetStr(st, "now"), podSummary(steps[k])), st)
	}
}

func podSummary(step any) string {
	var parts []string
	for _, p := range jsonobj.AsArr(jsonobj.Get(step, "pods")) {
		s := jsonobj.GetStr(p, "name") + "[" + shortRev(jsonobj.GetStr(p, "revision")) + " " + jsonobj.GetStr(p, "phase")
		if jsonobj.Get(p, "ready") == true {
			s += "/Ready"
		}
		if jsonobj.Get(p, "terminating") == true {
			s += " terminating"
		}
		parts = append(parts, s+"]")
	}
	if len(parts) == 0 {
		return "no pods"
	}
	return strings.Join(parts, " ")
}

func shortRev(r string) string {
	if i := strings.LastIndex(r, "-"); i >= 0 {
		return r[i+1:]
	}
	return r
}

// advanceWorld applies one tick of the simulator's world rules to a world that was written
// right after a sync. The rules live in host/replay (the replay engine's tick model runs the same
// code), so the fixtures and the replays cannot drift apart.
func advanceWorld(fin M, tick time.Duration) M {
	b, err := replay.AdvanceTickSnapshot(encodeSnapshot(clone(fin)), tick)
	if err != nil {
		fatalf("advancing the world: %v", err)
	}
	w := prepareSnapshot(mustDecodeObj(b))
	// The simulator lists objects in its fake API server's map order; sorted, a regeneration gives the
	// same files (upstream sorts what it reads, so the plans do not depend on it).
	for _, k := range []string{"pods", "revisions", "claims"} {
		l := jsonobj.AsArr(w[k])
		sort.SliceStable(l, func(i, j int) bool {
			return jsonobj.GetStr(l[i], "metadata.name") < jsonobj.GetStr(l[j], "metadata.name")
		})
	}
	return w
}

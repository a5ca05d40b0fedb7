package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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

// simUIDPrefix marks objects created by the oracle's simulated API server.
const simUIDPrefix = "00000000-0000-4000-8000-"

func (g *Gen) sim(group, desc string, s0 M, maxSteps int) {
	g.group(group, desc)
	s0 = g.o.defaults(s0)
	tl, _ := g.o.simulate(s0, maxSteps)
	steps := arr(tl["steps"])
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
		want := obj(get(steps[k], "plan"))
		got := g.o.plan(st)
		if !jsonEqual(stripKeys(got, "resourceVersion"), stripKeys(want, "resourceVersion")) {
			fatalf("%s step %d: reconstructed world's plan differs from the simulator's\n got: %s\nwant: %s",
				group, k, compactMarshal(got), compactMarshal(want))
		}
		g.add(group, fmt.Sprintf("step-%02d", k), fmt.Sprintf("world before sync %d of %d (now %s): %s",
			k+1, len(steps), getStr(st, "now"), podSummary(steps[k])), st)
	}
}

func podSummary(step any) string {
	var parts []string
	for _, p := range arr(get(step, "pods")) {
		s := getStr(p, "name") + "[" + shortRev(getStr(p, "revision")) + " " + getStr(p, "phase")
		if get(p, "ready") == true {
			s += "/Ready"
		}
		if get(p, "terminating") == true {
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
// right after a sync.
func advanceWorld(fin M, tick time.Duration) M {
	s := clone(fin)
	now := ts(nowOf(s).Add(tick))
	s["now"] = now
	rv := maxRV(s)
	bump := func(o any) {
		rv++
		set(obj(o), "metadata.resourceVersion", strconv.Itoa(rv))
	}
	// terminating pods are gone
	var pods []any
	for _, p := range podsOf(s) {
		if get(p, "metadata.deletionTimestamp") == nil {
			pods = append(pods, p)
		}
	}
	// pods the simulation created start
	for _, p := range pods {
		if getStr(p, "status.phase") != "Pending" || !strings.HasPrefix(getStr(p, "metadata.uid"), simUIDPrefix) {
			continue
		}
		ready := "True"
		if ann := obj(get(p, "metadata.annotations")); ann != nil && ann["oracle.test/never-ready"] == "true" {
			ready = "False"
		}
		cond := func(t, st string) M { return M{"type": t, "status": st, "lastTransitionTime": now} }
		st := obj(obj(p)["status"])
		st["phase"] = "Running"
		st["startTime"] = now
		st["conditions"] = []any{cond("PodScheduled", "True"), cond("Initialized", "True"),
			cond("ContainersReady", ready), cond("Ready", ready)}
		bump(p)
	}
	// PVCs bind
	for _, c := range arr(s["claims"]) {
		if getStr(c, "status.phase") == "Pending" && get(c, "metadata.deletionTimestamp") == nil {
			set(obj(c), "status.phase", "Bound")
			bump(c)
		}
	}
	// garbage collection of objects whose owners are all gone
	live := map[string]bool{getStr(setOf(s), "metadata.uid"): true}
	for _, list := range [][]any{pods, arr(s["revisions"]), arr(s["claims"])} {
		for _, o := range list {
			live[getStr(o, "metadata.uid")] = true
		}
	}
	orphan := func(o any) bool {
		refs := arr(get(o, "metadata.ownerReferences"))
		if len(refs) == 0 {
			return false
		}
		for _, r := range refs {
			if live[getStr(r, "uid")] {
				return false
			}
		}
		return true
	}
	keep := func(list []any) []any {
		out := []any{}
		for _, o := range list {
			if !orphan(o) {
				out = append(out, o)
			}
		}
		return out
	}
	s["claims"] = keep(arr(s["claims"]))
	s["revisions"] = keep(arr(s["revisions"]))
	for _, p := range pods {
		if orphan(p) && get(p, "metadata.deletionTimestamp") == nil {
			set(obj(p), "metadata.deletionTimestamp", now)
		}
	}
	if pods == nil {
		pods = []any{}
	}
	s["pods"] = pods
	return s
}

func maxRV(s M) int {
	best := 0
	check := func(o any) {
		if n, err := strconv.Atoi(getStr(o, "metadata.resourceVersion")); err == nil && n > best {
			best = n
		}
	}
	check(setOf(s))
	for _, k := range []string{"pods", "revisions", "claims"} {
		for _, o := range arr(s[k]) {
			check(o)
		}
	}
	return best
}

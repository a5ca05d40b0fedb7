package main

// The conformance scenarios: one generator per family of cases (fresh sets, rolling updates, pod states,
// OnDelete, scaling, minReadySeconds, ...). One file over 600 lines so that every case the reference is
// asked about reads in one place, and a new family goes beside the others.

import (
	"fmt"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

func img(v int) string { return fmt.Sprintf("registry.k8s.io/nginx-slim:0.%d", v) }

var (
	img27 = img(27)
	img28 = img(28)
)

var policies = []string{policyOrdered, policyParallel}

type vc struct {
	n int
	r string
}

func (v vc) name() string {
	if v.n == 0 {
		return "novct"
	}
	return fmt.Sprintf("vct%d-%s", v.n, retentionName(v.r))
}

func (v vc) desc() string {
	if v.n == 0 {
		return "no volumeClaimTemplates"
	}
	return fmt.Sprintf("%d volumeClaimTemplate(s), retention whenDeleted/whenScaled=%s", v.n, strings.ReplaceAll(retentionName(v.r), "-", "/"))
}

func rollingStrategy(partition int, maxUnavailable any) M {
	ru := M{"partition": num(partition)}
	if maxUnavailable != nil {
		ru["maxUnavailable"] = maxUnavailable
	}
	return M{"type": "RollingUpdate", "rollingUpdate": ru}
}

var onDelete = M{"type": "OnDelete"}

func (g *Gen) scenarios() {
	g.fresh()
	g.rolling()
	g.podStates()
	g.onDeleteGroup()
	g.scale()
	g.combined()
	g.minReady()
	g.ownership()
	g.ordinals()
	g.history()
	g.deleting()
	g.pvc()
	g.identity()
	g.recreate()
	g.status()
	g.compat()
	g.large()
	g.sims()
}

func (g *Gen) large() {
	const grp = "large"
	g.group(grp, "a handful of bigger sets (8-10 replicas): maxUnavailable \"40%\" rollouts, scale-down with claims, partition with failed pods")
	for _, pol := range policies {
		p := polShort(pol)
		b := g.settledAt(Opts{Key: "large/" + pol, Replicas: 10, Policy: pol, Strategy: rollingStrategy(0, "40%")})
		g.add(grp, p+"-10-mu40pct-template-changed", pol+", 10 replicas, maxUnavailable 40% (4), template changed", bump(clone(b), img28))
		s := bump(clone(b), img28)
		markFailed(s, "web-2")
		markNotReady(s, "web-7")
		g.add(grp, p+"-10-mu40pct-template-changed-unhealthy", pol+", 10 replicas, maxUnavailable 40%, template changed, web-2 Failed, web-7 not Ready", s)
	}
	v := g.settledAt(Opts{Key: "large/v", Replicas: 10, Policy: policyParallel, VCT: 2, Retention: "DD"})
	g.add(grp, "parallel-10-vct2-delete-delete-to-4", "Parallel, 10 replicas, 2 claim templates Delete/Delete, scaled 10->4", scaleTo(v, 4))
	o := g.settledAt(Opts{Key: "large/o", Replicas: 8, Start: 3, Strategy: rollingStrategy(4, nil)})
	bump(o, img28)
	markFailed(o, "web-4")
	markFailed(o, "web-9")
	g.add(grp, "ordered-8-start3-p4-failed", "OrderedReady, 8 replicas from ordinal 3, partition 4, template changed, web-4 and web-9 Failed", o)
}

// settled returns a converged world for opts, 60s after it settled (a later user change).
func (g *Gen) settledAt(o Opts) M {
	return later(g.settle(newSnap(o)), time.Minute)
}

func (g *Gen) fresh() {
	const grp = "fresh"
	g.group(grp, "new sets (no pods yet): both pod management policies, 0/1/2 volumeClaimTemplates with the four PVC retention policies, OnDelete, ordinals.start=3, replicas 0, minReadySeconds, never-ready template")
	vcs := []vc{{0, ""}, {1, "RR"}, {1, "RD"}, {1, "DR"}, {1, "DD"}, {2, "RR"}, {2, "DD"}}
	for _, pol := range policies {
		p := polShort(pol)
		for _, v := range vcs {
			g.add(grp, p+"-"+v.name(), fmt.Sprintf("new %s set, 3 replicas, %s", pol, v.desc()),
				newSnap(Opts{Key: "fresh/" + p + v.name(), Replicas: 3, Policy: pol, VCT: v.n, Retention: v.r}))
		}
		g.add(grp, p+"-ondelete", "new set with OnDelete update strategy, 3 replicas",
			newSnap(Opts{Key: "fresh/od" + p, Replicas: 3, Policy: pol, Strategy: onDelete}))
		g.add(grp, p+"-start3", "new set with spec.ordinals.start=3, 3 replicas (web-3..web-5)",
			newSnap(Opts{Key: "fresh/s3" + p, Replicas: 3, Policy: pol, Start: 3}))
		g.add(grp, p+"-start3-vct2-delete-delete", "new set, ordinals.start=3, 2 claim templates, Delete/Delete",
			newSnap(Opts{Key: "fresh/s3v" + p, Replicas: 3, Policy: pol, Start: 3, VCT: 2, Retention: "DD"}))
		g.add(grp, p+"-replicas0", "new set with 0 replicas: only the revision and status",
			newSnap(Opts{Key: "fresh/r0" + p, Replicas: 0, Policy: pol}))
		g.add(grp, p+"-minready10", "new set with minReadySeconds=10",
			newSnap(Opts{Key: "fresh/mr" + p, Replicas: 3, Policy: pol, MinReady: 10}))
		g.add(grp, p+"-six-replicas-maxunavailable2", "new 6-replica set with maxUnavailable 2 (irrelevant for creation)",
			newSnap(Opts{Key: "fresh/6" + p, Replicas: 6, Policy: pol, Strategy: rollingStrategy(0, num(2))}))
	}
}

func (g *Gen) rolling() {
	const grp = "rolling-update"
	g.group(grp, "settled 5-replica set, template changed: RollingUpdate partition 0/2/5/7 x maxUnavailable unset/2/\"40%\" x MaxUnavailableStatefulSet gate on/off x both pod management policies")
	for _, pol := range policies {
		base := g.settledAt(Opts{Key: "rolling/" + pol, Replicas: 5, Policy: pol})
		for _, part := range []int{0, 2, 5, 7} {
			for _, mu := range []any{nil, num(2), "40%"} {
				gates := []bool{true}
				muName := "mu-unset"
				if mu != nil {
					gates = []bool{true, false}
					muName = "mu" + strings.TrimSuffix(fmt.Sprint(mu), "%")
					if s, ok := mu.(string); ok && strings.HasSuffix(s, "%") {
						muName += "pct"
					}
				}
				for _, gate := range gates {
					s := clone(base)
					set(setOf(s), "spec.updateStrategy", rollingStrategy(part, mu))
					bump(s, img28)
					name := fmt.Sprintf("%s-p%d-%s", polShort(pol), part, muName)
					desc := fmt.Sprintf("%s, 5 replicas, template changed, partition %d, maxUnavailable %v", pol, part, orUnset(mu))
					if !gate {
						setFeatures(s, M{"MaxUnavailableStatefulSet": false})
						name += "-gate-off"
						desc += ", MaxUnavailableStatefulSet off"
					}
					g.add(grp, name, desc, s)
				}
			}
		}
	}
}

func orUnset(v any) any {
	if v == nil {
		return "unset"
	}
	return v
}

type podState struct {
	name, desc string
	apply      func(s M, pod string)
}

var podStates = []podState{
	{"failed", "phase Failed", markFailed},
	{"succeeded", "phase Succeeded", markSucceeded},
	{"terminating", "terminating (deletionTimestamp set)", markTerminating},
	{"never-ready", "Running with Ready=False", markNotReady},
	{"pending", "Pending (unschedulable)", markPending},
}

func (g *Gen) podStates() {
	const grp = "pod-states"
	g.group(grp, "Failed / Succeeded / terminating / never-ready (Running, Ready=False) / Pending pods at ordinal 1 or 4 of a settled 5-replica set, steady and during a rolling update (also maxUnavailable 2), both policies")
	for _, pol := range policies {
		base := g.settledAt(Opts{Key: "podstates/" + pol, Replicas: 5, Policy: pol})
		for _, upd := range []bool{false, true} {
			for _, st := range podStates {
				for _, ord := range []int{1, 4} {
					s := clone(base)
					mode, mdesc := "steady", "steady"
					if upd {
						bump(s, img28)
						mode, mdesc = "update", "template changed"
					}
					pn := fmt.Sprintf("web-%d", ord)
					st.apply(s, pn)
					g.add(grp, fmt.Sprintf("%s-%s-%s-%s", polShort(pol), mode, st.name, pn),
						fmt.Sprintf("%s, 5 replicas, %s, %s is %s", pol, mdesc, pn, st.desc), s)
				}
			}
		}
		for _, st := range podStates {
			s := clone(base)
			set(setOf(s), "spec.updateStrategy", rollingStrategy(0, num(2)))
			bump(s, img28)
			st.apply(s, "web-1")
			g.add(grp, fmt.Sprintf("%s-update-mu2-%s-web-1", polShort(pol), st.name),
				fmt.Sprintf("%s, 5 replicas, template changed with maxUnavailable 2, web-1 is %s", pol, st.desc), s)
		}
	}
}

func (g *Gen) onDeleteGroup() {
	const grp = "ondelete"
	g.group(grp, "OnDelete update strategy: template change touches no pod; deleted/failed/terminating pods are recreated at the update revision; scaling; currentRevision never advances")
	for _, pol := range policies {
		p := polShort(pol)
		base := g.settledAt(Opts{Key: "ondelete/" + pol, Replicas: 4, Policy: pol, Strategy: onDelete})
		changed := bump(clone(base), img28)
		g.add(grp, p+"-template-changed", pol+", 4 replicas, template changed: new revision and status only", changed)
		for _, n := range []string{"web-1", "web-3"} {
			s := clone(changed)
			removePod(s, n)
			g.add(grp, p+"-template-changed-"+n+"-deleted", pol+", template changed, "+n+" was deleted by a user", s)
		}
		s := clone(changed)
		markFailed(s, "web-1")
		g.add(grp, p+"-template-changed-web-1-failed", pol+", template changed, web-1 Failed", s)
		s = clone(changed)
		markTerminating(s, "web-2")
		g.add(grp, p+"-template-changed-web-2-terminating", pol+", template changed, web-2 terminating", s)
		g.add(grp, p+"-template-changed-scale-up-6", pol+", template changed and scaled 4->6", scaleTo(clone(changed), 6))
		g.add(grp, p+"-template-changed-scale-down-2", pol+", template changed and scaled 4->2", scaleTo(clone(changed), 2))
		// all pods replaced by the user: every pod at the update revision, currentRevision stays
		w := g.settle(changed)
		w = later(w, time.Minute)
		w["pods"] = []any{}
		w = later(g.settle(w), time.Minute)
		g.add(grp, p+"-all-pods-replaced-settled", pol+", all pods recreated at the update revision: currentRevision is not advanced, nothing to do", w)
		s = clone(w)
		st := jsonobj.AsObj(jsonobj.Get(setOf(s), "status"))
		st["updatedReplicas"] = num(0)
		st["currentReplicas"] = num(4)
		g.add(grp, p+"-all-pods-replaced-stale-status", pol+", all pods at the update revision, stale status counts: status rewritten, currentRevision not advanced", s)
	}
}

func (g *Gen) scale() {
	const grp = "scale"
	g.group(grp, "settled 4-replica sets scaled up to 6, down to 2 and to 0, with 0/1/2 claim templates and all four retention policies, both policies")
	vcs := []vc{{0, ""}, {1, "RR"}, {1, "RD"}, {1, "DR"}, {1, "DD"}, {2, "RR"}, {2, "RD"}, {2, "DR"}, {2, "DD"}}
	for _, pol := range policies {
		for _, v := range vcs {
			base := g.settledAt(Opts{Key: "scale/" + pol + v.name(), Replicas: 4, Policy: pol, VCT: v.n, Retention: v.r})
			for _, to := range []int{6, 2, 0} {
				g.add(grp, fmt.Sprintf("%s-%s-to-%d", polShort(pol), v.name(), to),
					fmt.Sprintf("%s, %s, scaled 4->%d", pol, v.desc(), to), scaleTo(clone(base), to))
			}
		}
	}
}

func (g *Gen) combined() {
	const grp = "update-and-scale"
	g.group(grp, "template change and scale (5->6 / 5->3) at once, one claim template with whenScaled=Delete, under partition 0/2, maxUnavailable 2/\"40%\" and OnDelete, both policies")
	strategies := []struct {
		name string
		s    M
	}{
		{"p0", rollingStrategy(0, nil)},
		{"p2", rollingStrategy(2, nil)},
		{"mu2", rollingStrategy(0, num(2))},
		{"mu40pct", rollingStrategy(0, "40%")},
		{"ondelete", onDelete},
	}
	for _, pol := range policies {
		base := g.settledAt(Opts{Key: "combined/" + pol, Replicas: 5, Policy: pol, VCT: 1, Retention: "RD"})
		for _, st := range strategies {
			for _, to := range []int{6, 3} {
				s := clone(base)
				set(setOf(s), "spec.updateStrategy", clone(st.s))
				bump(s, img28)
				scaleTo(s, to)
				g.add(grp, fmt.Sprintf("%s-%s-to-%d", polShort(pol), st.name, to),
					fmt.Sprintf("%s, strategy %s, template changed and scaled 5->%d, retention Retain/Delete", pol, st.name, to), s)
			}
		}
	}
}

func (g *Gen) minReady() {
	const grp = "min-ready-seconds"
	g.group(grp, "minReadySeconds 0 and 10 with pods Ready for 5s or 15s at now (and mixed): steady status/requeue, scale-up, rolling update, both policies")
	for _, pol := range policies {
		for _, mr := range []int{0, 10} {
			base := g.settledAt(Opts{Key: fmt.Sprintf("minready/%s/%d", pol, mr), Replicas: 4, Policy: pol, MinReady: mr})
			ages := []time.Duration{5 * time.Second, 15 * time.Second}
			for _, age := range ages {
				s := clone(base)
				for _, n := range podNames(s) {
					readySince(s, n, age)
				}
				pre := fmt.Sprintf("%s-mrs%d-ready%ds", polShort(pol), mr, int(age.Seconds()))
				d := fmt.Sprintf("%s, minReadySeconds %d, all pods Ready for %s", pol, mr, age)
				g.add(grp, pre+"-steady", d, s)
				g.add(grp, pre+"-scale-up-5", d+", scaled 4->5", scaleTo(clone(s), 5))
				g.add(grp, pre+"-template-changed", d+", template changed", bump(clone(s), img28))
			}
			if mr > 0 {
				s := clone(base)
				for _, n := range podNames(s) {
					readySince(s, n, time.Minute)
				}
				readySince(s, "web-3", 4*time.Second)
				pre := fmt.Sprintf("%s-mrs%d-mixed", polShort(pol), mr)
				d := fmt.Sprintf("%s, minReadySeconds %d, web-0..2 Ready for 60s, web-3 for 4s", pol, mr)
				g.add(grp, pre+"-steady", d, s)
				g.add(grp, pre+"-template-changed", d+", template changed", bump(clone(s), img28))
			}
		}
	}
}

func (g *Gen) recreate() {
	const grp = "recreate"
	g.group(grp, "updateStrategy type Recreate with the alpha StatefulSetRecreateStrategy gate on (and off), both policies")
	gate := M{"StatefulSetRecreateStrategy": true}
	for _, pol := range policies {
		p := polShort(pol)
		base := g.settledAt(Opts{Key: "recreate/" + pol, Replicas: 3, Policy: pol, Strategy: M{"type": "Recreate"}, Features: gate})
		g.add(grp, p+"-steady", pol+", Recreate, settled", clone(base))
		changed := bump(clone(base), img28)
		g.add(grp, p+"-template-changed", pol+", Recreate, template changed", clone(changed))
		s := clone(changed)
		markTerminating(s, "web-0")
		g.add(grp, p+"-template-changed-one-terminating", pol+", Recreate, template changed, web-0 already terminating", s)
		s = clone(changed)
		removePod(s, "web-0")
		removePod(s, "web-2")
		g.add(grp, p+"-template-changed-partly-deleted", pol+", Recreate, template changed, web-0 and web-2 already gone", s)
		g.add(grp, p+"-gate-off-template-changed", pol+", updateStrategy Recreate but the gate is off, template changed", setFeatures(clone(changed), M{"StatefulSetRecreateStrategy": false}))
	}
}

func (g *Gen) status() {
	const grp = "status"
	g.group(grp, "status-only behaviour: consistent status (no updateStatus), stale counts, stale observedGeneration, rolling-update completion (currentRevision advanced) versus OnDelete (never advanced), both policies")
	for _, pol := range policies {
		p := polShort(pol)
		ru := g.settledAt(Opts{Key: "status/ru/" + pol, Replicas: 4, Policy: pol})
		od := g.settledAt(Opts{Key: "status/od/" + pol, Replicas: 4, Policy: pol, Strategy: onDelete})
		g.add(grp, p+"-consistent-rollingupdate", pol+", RollingUpdate, settled: status consistent, no writes", clone(ru))
		g.add(grp, p+"-consistent-ondelete", pol+", OnDelete, settled: no writes", clone(od))
		s := clone(ru)
		st := jsonobj.AsObj(jsonobj.Get(setOf(s), "status"))
		st["readyReplicas"] = num(1)
		st["availableReplicas"] = num(1)
		st["currentReplicas"] = num(2)
		g.add(grp, p+"-stale-counts", pol+", settled but status counts are stale", s)
		s = clone(ru)
		bumpGen(s)
		g.add(grp, p+"-stale-observed-generation", pol+", generation bumped without a template change: observedGeneration updated", s)
		// rolling update completion: after a full rollout, status still names the old currentRevision
		oldRev := jsonobj.GetStr(setOf(ru), "status.currentRevision")
		done := later(g.settle(bump(clone(ru), img28)), time.Minute)
		s = clone(done)
		st = jsonobj.AsObj(jsonobj.Get(setOf(s), "status"))
		st["currentRevision"] = oldRev
		st["currentReplicas"] = num(0)
		g.add(grp, p+"-rolling-update-completion", pol+", every pod updated and ready, status.currentRevision still old: advanced to the update revision", s)
		s = clone(done)
		st = jsonobj.AsObj(jsonobj.Get(setOf(s), "status"))
		st["currentRevision"] = oldRev
		st["currentReplicas"] = num(0)
		markNotReady(s, "web-3")
		g.add(grp, p+"-rolling-update-not-complete-unready", pol+", every pod updated but web-3 not ready: currentRevision not advanced", s)
		// OnDelete: all pods replaced by hand, never advances
		odc := g.settle(bump(clone(od), img28))
		odc = later(odc, time.Minute)
		odc["pods"] = []any{}
		odc = later(g.settle(odc), time.Minute)
		s = clone(odc)
		st = jsonobj.AsObj(jsonobj.Get(setOf(s), "status"))
		st["currentReplicas"] = num(4)
		st["updatedReplicas"] = num(0)
		g.add(grp, p+"-ondelete-all-updated-no-advance", pol+", OnDelete, every pod at the update revision: currentRevision stays", s)
	}
}

func (g *Gen) compat() {
	const grp = "compat"
	g.group(grp, "1.33-era objects: a revision whose template serialization has \"creationTimestamp\":null, pods labelled with it; StatefulSetSemanticRevisionComparison on (no rollout) and off (new revision, rollout)")
	for _, pol := range policies {
		p := polShort(pol)
		for _, vct := range []int{0, 1} {
			o := Opts{Key: fmt.Sprintf("compat/%s/%d", pol, vct), Replicas: 3, Policy: pol}
			sfx := ""
			if vct > 0 {
				o.VCT, o.Retention, sfx = 1, "RR", "-vct1"
			}
			s := g.settledAt(o)
			r := jsonobj.AsObj(revisionsOf(s)[0])
			raw := []byte(r["data"].(compactJSON))
			zero := 0
			name := jsonobj.GetStr(r, "metadata.name")
			if h := controllerRevisionHash(raw, &zero); "web-"+h != name {
				fatalf("revision hash check: computed %s for %s", h, name)
			}
			data := mustDecodeObj(raw)
			set(jsonobj.AsObj(jsonobj.Get(data, "spec.template")), "metadata.creationTimestamp", nil)
			old := compactMarshal(data)
			if !strings.Contains(string(old), `"metadata":{"creationTimestamp":null,`) {
				fatalf("compat data: %s", old)
			}
			r["data"] = compactJSON(old)
			h := controllerRevisionHash(old, &zero)
			renameRevision(s, name, "web-"+h, h)
			for _, on := range []bool{true, false} {
				c := clone(s)
				n, d := p+sfx+"-semantic-gate-on", "gate on: recognised as the same template, no new revision"
				if !on {
					setFeatures(c, M{"StatefulSetSemanticRevisionComparison": false})
					n, d = p+sfx+"-semantic-gate-off", "gate off: byte comparison differs, new revision and rollout"
				}
				g.add(grp, n, pol+", 1.33-era revision (creationTimestamp:null in template data) "+d, c)
			}
			if vct == 0 {
				g.add(grp, p+"-template-changed", pol+", 1.33-era revision and a real template change (gate on)", bump(clone(s), img28))
			}
		}
	}
}

func (g *Gen) sims() {
	opts := func(key string, pol string, n int) Opts { return Opts{Key: "sim/" + key, Replicas: n, Policy: pol} }
	g.sim("sim-fresh-orderedready", "every world state of a new OrderedReady set (3 replicas) converging",
		newSnap(opts("fresh-or", policyOrdered, 3)), 40)
	g.sim("sim-fresh-parallel", "every world state of a new Parallel set (3 replicas) converging",
		newSnap(opts("fresh-par", policyParallel, 3)), 40)
	o := opts("fresh-p2c", policyParallel, 3)
	o.Start, o.VCT, o.Retention = 3, 2, "DD"
	g.sim("sim-fresh-parallel-start3-two-claims", "new Parallel set, ordinals.start 3, two claim templates Delete/Delete, converging",
		newSnap(o), 40)
	rollout := func(grp, desc, key, pol string, strat M, features M) {
		base := g.settle(newSnap(Opts{Key: "sim/" + key, Replicas: 5, Policy: pol, Features: features}))
		base = later(base, time.Minute)
		if strat != nil {
			set(setOf(base), "spec.updateStrategy", strat)
		}
		g.sim(grp, desc, bump(base, img28), 60)
	}
	rollout("sim-rolling-update", "every state of a RollingUpdate rollout, OrderedReady, 5 replicas", "ru", policyOrdered, rollingStrategy(0, nil), nil)
	rollout("sim-rolling-update-parallel", "every state of a RollingUpdate rollout, Parallel, 5 replicas", "rup", policyParallel, rollingStrategy(0, nil), nil)
	rollout("sim-partition-canary", "every state of a partition-3 canary rollout (only web-3, web-4 updated), 5 replicas", "canary", policyOrdered, rollingStrategy(3, nil), nil)
	rollout("sim-maxunavailable2-orderedready", "every state of a maxUnavailable 2 rollout, OrderedReady, 5 replicas", "mu2", policyOrdered, rollingStrategy(0, num(2)), nil)
	rollout("sim-maxunavailable2-parallel", "every state of a maxUnavailable 2 rollout, Parallel, 5 replicas", "mu2p", policyParallel, rollingStrategy(0, num(2)), nil)
	rollout("sim-maxunavailable2-gate-off", "every state of a maxUnavailable 2 rollout with MaxUnavailableStatefulSet off (one at a time)", "mu2off", policyOrdered,
		rollingStrategy(0, num(2)), M{"MaxUnavailableStatefulSet": false})
	// OnDelete: template change, then two pods deleted by a user
	od := later(g.settle(newSnap(Opts{Key: "sim/od", Replicas: 4, Strategy: onDelete})), time.Minute)
	bump(od, img28)
	markTerminating(od, "web-1")
	markTerminating(od, "web-2")
	g.sim("sim-ondelete", "OnDelete: template changed and web-1, web-2 deleted by a user; they come back at the update revision, others stay", od, 40)
	for _, r := range []string{"RR", "RD", "DR", "DD"} {
		b := later(g.settle(newSnap(Opts{Key: "sim/sd/" + r, Replicas: 5, VCT: 1, Retention: r})), time.Minute)
		g.sim("sim-scale-down-"+retentionName(r), "every state of a 5->2 scale-down with one claim template, retention "+strings.ReplaceAll(retentionName(r), "-", "/"), scaleTo(b, 2), 40)
	}
	z := later(g.settle(newSnap(Opts{Key: "sim/zero", Replicas: 3, Policy: policyParallel, VCT: 1, Retention: "DD"})), time.Minute)
	g.sim("sim-scale-to-zero-parallel", "Parallel set with Delete/Delete claims scaled 3->0", scaleTo(z, 0), 40)
	mr := newSnap(opts("minready", policyOrdered, 3))
	set(setOf(mr), "spec.minReadySeconds", num(10))
	g.sim("sim-min-ready-seconds", "new OrderedReady set with minReadySeconds 10: requeues while pods become available", mr, 60)
	f := later(g.settle(newSnap(opts("failed", policyOrdered, 3))), time.Minute)
	markFailed(f, "web-1")
	g.sim("sim-failed-pod", "web-1 Failed in a settled set: deleted, then recreated", f, 40)
	fp := later(g.settle(newSnap(opts("failedp", policyParallel, 4))), time.Minute)
	markFailed(fp, "web-0")
	markFailed(fp, "web-2")
	g.sim("sim-failed-pods-parallel", "Parallel, web-0 and web-2 Failed: deleted and recreated together", fp, 40)
	nr := newSnap(opts("neverready", policyOrdered, 3))
	set(setOf(nr), "spec.template.metadata.annotations", M{"oracle.test/never-ready": "true"})
	g.sim("sim-never-ready", "new set whose pods never become Ready: web-0 is created and the set waits", nr, 40)
	nrp := newSnap(opts("neverreadyp", policyParallel, 3))
	set(setOf(nrp), "spec.template.metadata.annotations", M{"oracle.test/never-ready": "true"})
	g.sim("sim-never-ready-parallel", "new Parallel set whose pods never become Ready", nrp, 40)
}

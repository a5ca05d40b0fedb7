package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The groups of cases about the set's objects: ownership and adoption, ordinals, revision history, a set
// being deleted, claims and identity (scenarios.go calls them).

func otherOwner(name string) []any {
	return []any{M{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name, "uid": uidFor("other-owner/" + name),
		"controller": true, "blockOwnerDeletion": true}}
}

func (g *Gen) ownership() {
	const grp = "ownership"
	g.group(grp, "adoption of orphan pods and revisions, pods/revisions owned by another controller, release of owned pods that no longer match the selector or whose names do not parse, both policies")
	for _, pol := range policies {
		p := polShort(pol)
		base := g.settledAt(Opts{Key: "ownership/" + pol, Replicas: 3, Policy: pol})
		add := func(name, desc string, f func(s M)) {
			s := clone(base)
			f(s)
			g.add(grp, p+"-"+name, pol+", 3 replicas, "+desc, s)
		}
		add("orphan-pods", "all pods lost their ownerReferences (adopted)", func(s M) {
			for _, po := range podsOf(s) {
				jsonobj.Delete(jsonobj.AsObj(po), "metadata.ownerReferences")
			}
		})
		add("orphan-pods-template-changed", "all pods orphaned and template changed", func(s M) {
			for _, po := range podsOf(s) {
				jsonobj.Delete(jsonobj.AsObj(po), "metadata.ownerReferences")
			}
			bump(s, img28)
		})
		add("orphan-pod-and-revision", "web-1 and the revision are orphans", func(s M) {
			jsonobj.Delete(pod(s, "web-1"), "metadata.ownerReferences")
			for _, r := range revisionsOf(s) {
				jsonobj.Delete(jsonobj.AsObj(r), "metadata.ownerReferences")
			}
		})
		add("orphan-revision", "the revision lost its ownerReference", func(s M) {
			for _, r := range revisionsOf(s) {
				jsonobj.Delete(jsonobj.AsObj(r), "metadata.ownerReferences")
			}
		})
		add("other-owner-same-name", "web-1 is controlled by another StatefulSet (the create of web-1 is rejected)", func(s M) {
			set(pod(s, "web-1"), "metadata.ownerReferences", otherOwner("web-legacy"))
		})
		add("other-owner-extra-pod", "an extra pod web-5 with matching labels is controlled by another controller (ignored)", func(s M) {
			np := clonePodAs(s, "web-2", "web-5")
			set(np, "metadata.ownerReferences", otherOwner("web-legacy"))
			addPod(s, np)
		})
		add("other-owner-revision", "a revision with matching labels is controlled by another StatefulSet (ignored)", func(s M) {
			r := clone(jsonobj.AsObj(revisionsOf(s)[0]))
			set(r, "metadata.name", "web-legacy-7d9f8b6c5d")
			set(r, "metadata.uid", uidFor("rev/other/"+p))
			set(r, "metadata.ownerReferences", otherOwner("web-legacy"))
			set(r, "revision", num(7))
			s["revisions"] = append(revisionsOf(s), r)
		})
		add("release-selector-mismatch", "owned web-2 no longer matches the selector: released, then its re-create is rejected (AlreadyExists, sync error)", func(s M) {
			set(pod(s, "web-2"), "metadata.labels.app", "web-debug")
		})
		add("orphan-selector-mismatch", "an orphan pod web-4 that does not match the selector (ignored)", func(s M) {
			np := clonePodAs(s, "web-2", "web-4")
			jsonobj.Delete(np, "metadata.ownerReferences")
			set(np, "metadata.labels.app", "web-debug")
			addPod(s, np)
		})
		add("owned-unparsable-name", "an owned pod named web-abc with matching labels (released: not a member)", func(s M) {
			np := clonePodAs(s, "web-1", "web-abc")
			jsonobj.Delete(jsonobj.AsObj(jsonobj.Get(np, "metadata.labels")), "apps.kubernetes.io/pod-index")
			addPod(s, np)
		})
		add("orphan-unparsable-names", "orphan pods named web, webapp-0 and web-x with matching labels (not adopted)", func(s M) {
			for _, n := range []string{"web", "webapp-0", "web-x"} {
				np := clonePodAs(s, "web-1", n)
				jsonobj.Delete(np, "metadata.ownerReferences")
				jsonobj.Delete(jsonobj.AsObj(jsonobj.Get(np, "metadata.labels")), "apps.kubernetes.io/pod-index")
				addPod(s, np)
			}
		})
		add("orphan-extra-ordinal", "an orphan pod web-3 (beyond replicas) with matching labels: adopted, then condemned", func(s M) {
			np := clonePodAs(s, "web-2", "web-3")
			jsonobj.Delete(np, "metadata.ownerReferences")
			addPod(s, np)
		})
	}
}

func (g *Gen) ordinals() {
	const grp = "ordinals"
	g.group(grp, "spec.ordinals.start (3), changing start, and pods with invalid ordinals (above replicas, below start), both policies")
	for _, pol := range policies {
		p := polShort(pol)
		b3 := g.settledAt(Opts{Key: "ordinals/3/" + pol, Replicas: 4, Policy: pol, Start: 3})
		b0 := g.settledAt(Opts{Key: "ordinals/0/" + pol, Replicas: 4, Policy: pol})
		g.add(grp, p+"-start3-steady", pol+", ordinals.start=3, 4 replicas web-3..web-6, settled", clone(b3))
		g.add(grp, p+"-start3-scale-up-6", pol+", start 3, scaled 4->6", scaleTo(clone(b3), 6))
		g.add(grp, p+"-start3-scale-down-2", pol+", start 3, scaled 4->2", scaleTo(clone(b3), 2))
		g.add(grp, p+"-start3-template-changed", pol+", start 3, template changed", bump(clone(b3), img28))
		g.add(grp, p+"-start3-to-0", pol+", start changed 3->0", setSpec(clone(b3), "ordinals.start", num(0)))
		g.add(grp, p+"-start3-to-1", pol+", start changed 3->1", setSpec(clone(b3), "ordinals.start", num(1)))
		g.add(grp, p+"-start0-to-3", pol+", start changed 0->3", setSpec(clone(b0), "ordinals", M{"start": num(3)}))
		s := clone(b0)
		addPod(s, clonePodAs(s, "web-3", "web-9"))
		g.add(grp, p+"-invalid-ordinal-above-replicas", pol+", owned pod web-9 beyond replicas 4 (condemned)", s)
		s = clone(b3)
		addPod(s, clonePodAs(s, "web-3", "web-1"))
		g.add(grp, p+"-start3-invalid-ordinal-below-start", pol+", start 3, owned pod web-1 below start (condemned)", s)
		bv := g.settledAt(Opts{Key: "ordinals/3v/" + pol, Replicas: 4, Policy: pol, Start: 3, VCT: 1, Retention: "DD"})
		g.add(grp, p+"-start3-vct1-delete-delete-scale-down-1", pol+", start 3, one claim template Delete/Delete, scaled 4->1", scaleTo(bv, 1))
	}
}

// firstCreatedRevision returns the first ControllerRevision the oracle would create for s.
func (g *Gen) firstCreatedRevision(s M) M {
	pl := g.o.plan(g.o.defaults(s))
	for _, a := range jsonobj.AsArr(pl["actions"]) {
		if jsonobj.GetStr(a, "verb") == "create" && jsonobj.GetStr(a, "kind") == "ControllerRevision" {
			return jsonobj.AsObj(jsonobj.Get(a, "object"))
		}
	}
	fatalf("no ControllerRevision created")
	return nil
}

func (g *Gen) history() {
	const grp = "history"
	g.group(grp, "revision history: revisionHistoryLimit 0/2/10 with 12 revisions, rollbacks (an older revision is renumbered), hash collisions with status.collisionCount 0 and 1")
	// 12 revisions: images 0.20 .. 0.31, each fully rolled out.
	chain := g.settle(newSnap(Opts{Key: "history", Replicas: 3, HistoryLimit: 100, Image: img(20)}))
	for i := 21; i <= 31; i++ {
		chain = g.settle(later(bump(chain, img(i)), time.Minute))
	}
	chain = later(chain, time.Minute)
	if n := len(revisionsOf(chain)); n != 12 {
		fatalf("history chain has %d revisions", n)
	}
	for _, lim := range []int{0, 2, 10} {
		s := setSpec(clone(chain), "revisionHistoryLimit", num(lim))
		g.add(grp, fmt.Sprintf("limit-%d-steady", lim), fmt.Sprintf("12 revisions, all pods at the newest, revisionHistoryLimit lowered to %d", lim), s)
		g.add(grp, fmt.Sprintf("limit-%d-template-changed", lim), fmt.Sprintf("12 revisions, revisionHistoryLimit %d, template changed (13th revision)", lim), bump(clone(s), img(32)))
	}
	g.add(grp, "rollback-to-revision-3", "12 revisions, template reverted to revision 3's (renumbered to 13)", bump(clone(chain), img(22)))
	g.add(grp, "rollback-to-revision-3-limit-2", "as rollback-to-revision-3 with revisionHistoryLimit 2",
		setSpec(bump(clone(chain), img(22)), "revisionHistoryLimit", num(2)))
	g.add(grp, "rollback-to-previous", "12 revisions, template reverted to revision 11's", bump(clone(chain), img(30)))
	for _, pol := range policies {
		p := polShort(pol)
		w := g.settle(newSnap(Opts{Key: "history/rb/" + pol, Replicas: 3, Policy: pol}))
		w = g.settle(later(bump(w, img28), time.Minute))
		g.add(grp, p+"-rollback-two-revisions", pol+", rolled out 0.27->0.28, then template reverted to 0.27", later(bump(w, img27), time.Minute))
	}
	// hash collisions
	old := g.firstCreatedRevision(newSnap(Opts{Key: "history/old", Replicas: 3, Image: img(25)}))
	for _, cc := range []int{0, 1} {
		for _, pol := range policies {
			p := polShort(pol)
			s := g.settledAt(Opts{Key: "history/cc/" + pol, Replicas: 3, Policy: pol})
			set(setOf(s), "status.collisionCount", num(cc))
			bump(s, img28)
			next := g.firstCreatedRevision(s)
			name := jsonobj.GetStr(next, "metadata.name")
			cur := jsonobj.AsObj(revisionsOf(s)[0])
			cur["revision"] = num(2)
			r := clone(cur)
			set(r, "metadata.name", name)
			set(r, "metadata.uid", uidFor("collision/"+p+fmt.Sprint(cc)))
			set(r, "metadata.creationTimestamp", ts(t0.Add(-time.Hour)))
			jsonobj.AsObj(jsonobj.Get(r, "metadata.labels"))["controller.kubernetes.io/hash"] = strings.TrimPrefix(name, "web-")
			r["data"] = clone(old["data"])
			r["revision"] = num(1)
			s["revisions"] = append(revisionsOf(s), r)
			g.add(grp, fmt.Sprintf("%s-collision-count-%d", p, cc),
				fmt.Sprintf("%s, template changed; an older revision (different data) already has the name %s that the new template hashes to with collisionCount %d", pol, name, cc), s)
		}
	}
	s := g.settledAt(Opts{Key: "history/cc1", Replicas: 3, CollisionCnt: 1})
	g.add(grp, "collision-count-1-steady", "set created with status.collisionCount 1 (revision names hashed with probe 1), settled", clone(s))
	g.add(grp, "collision-count-1-template-changed", "collisionCount 1, template changed (no collision)", bump(s, img28))
}

func markSetDeleting(s M) M {
	md := jsonobj.AsObj(setOf(s)["metadata"])
	md["deletionTimestamp"] = ts(nowOf(s).Add(-10 * time.Second))
	md["deletionGracePeriodSeconds"] = num(0)
	md["finalizers"] = []any{"foregroundDeletion"}
	return s
}

func (g *Gen) deleting() {
	const grp = "set-deleting"
	g.group(grp, "the StatefulSet has a deletionTimestamp (foreground deletion): status only, no pod changes, orphans not adopted, both policies")
	for _, pol := range policies {
		p := polShort(pol)
		base := g.settledAt(Opts{Key: "deleting/" + pol, Replicas: 3, Policy: pol})
		g.add(grp, p+"-steady", pol+", settled set being deleted", markSetDeleting(clone(base)))
		g.add(grp, p+"-template-changed", pol+", set being deleted with a changed template", markSetDeleting(bump(clone(base), img28)))
		s := clone(base)
		removePod(s, "web-1")
		g.add(grp, p+"-pod-missing", pol+", set being deleted, web-1 gone (not recreated)", markSetDeleting(s))
		g.add(grp, p+"-scale-down-1", pol+", set being deleted, replicas 3->1", markSetDeleting(scaleTo(clone(base), 1)))
		s = clone(base)
		jsonobj.Delete(pod(s, "web-1"), "metadata.ownerReferences")
		g.add(grp, p+"-orphan-pod", pol+", set being deleted, web-1 orphaned (adoption refused: sync error)", markSetDeleting(s))
	}
}

func stalePodRef(name string) []any {
	return []any{M{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uidFor("stale-pod/" + name),
		"controller": false, "blockOwnerDeletion": true}}
}

func (g *Gen) pvc() {
	const grp = "pvc"
	g.group(grp, "PersistentVolumeClaims: stale claims (owned by an older pod uid), terminating claims, Pending pods with missing claims, retention-policy changes updating claim ownerReferences, both policies")
	for _, pol := range policies {
		p := polShort(pol)
		rd := g.settledAt(Opts{Key: "pvc/rd/" + pol, Replicas: 4, Policy: pol, VCT: 1, Retention: "RD"})
		rr := g.settledAt(Opts{Key: "pvc/rr/" + pol, Replicas: 4, Policy: pol, VCT: 1, Retention: "RR"})
		dd := g.settledAt(Opts{Key: "pvc/dd/" + pol, Replicas: 4, Policy: pol, VCT: 1, Retention: "DD"})
		dd2 := g.settledAt(Opts{Key: "pvc/dd2/" + pol, Replicas: 4, Policy: pol, VCT: 2, Retention: "DD"})
		add := func(name, desc string, base M, f func(s M)) {
			s := clone(base)
			f(s)
			g.add(grp, p+"-"+name, pol+", 4 replicas, "+desc, s)
		}
		add("stale-claim-missing-pod-whenscaled-delete", "whenScaled=Delete, web-1 gone, data-web-1 owned by the old web-1 uid (stale: pod not recreated)", rd, func(s M) {
			removePod(s, "web-1")
			set(claim(s, "data-web-1"), "metadata.ownerReferences", stalePodRef("web-1"))
		})
		add("stale-claim-missing-pod-whenscaled-retain", "whenScaled=Retain, web-1 gone, data-web-1 owned by an old web-1 uid", rr, func(s M) {
			removePod(s, "web-1")
			set(claim(s, "data-web-1"), "metadata.ownerReferences", stalePodRef("web-1"))
		})
		add("stale-claim-existing-pod", "whenScaled=Delete, data-web-1 owned by a different web-1 uid while web-1 exists", rd, func(s M) {
			set(claim(s, "data-web-1"), "metadata.ownerReferences", stalePodRef("web-1"))
		})
		add("stale-claim-condemned-pod", "whenScaled=Delete, scaled 4->2, data-web-3 owned by an old web-3 uid", rd, func(s M) {
			scaleTo(s, 2)
			set(claim(s, "data-web-3"), "metadata.ownerReferences", stalePodRef("web-3"))
		})
		term := func(s M, c string) {
			cl := claim(s, c)
			set(cl, "metadata.deletionTimestamp", ts(nowOf(s).Add(-5*time.Second)))
			set(cl, "metadata.deletionGracePeriodSeconds", num(0))
			set(cl, "metadata.finalizers", []any{"kubernetes.io/pvc-protection"})
		}
		add("terminating-claim-missing-pod", "web-2 gone, data-web-2 terminating (sync error)", rr, func(s M) {
			removePod(s, "web-2")
			term(s, "data-web-2")
		})
		add("terminating-claim-pending-pod", "web-2 Pending, data-web-2 terminating", rr, func(s M) {
			markPending(s, "web-2")
			term(s, "data-web-2")
		})
		add("terminating-claim-running-pod", "web-2 Running, data-web-2 terminating", rr, func(s M) {
			term(s, "data-web-2")
		})
		add("pending-pod-missing-claim", "web-2 Pending, its claim data-web-2 missing (recreated)", rr, func(s M) {
			markPending(s, "web-2")
			removeClaim(s, "data-web-2")
		})
		add("pending-pod-missing-one-of-two-claims", "2 claim templates Delete/Delete, web-3 Pending, logs-web-3 missing", dd2, func(s M) {
			markPending(s, "web-3")
			removeClaim(s, "logs-web-3")
		})
		add("running-pod-missing-claim", "web-2 Running, data-web-2 missing", rr, func(s M) {
			removeClaim(s, "data-web-2")
		})
		add("missing-pod-and-claim", "web-2 and data-web-2 both gone", rr, func(s M) {
			removePod(s, "web-2")
			removeClaim(s, "data-web-2")
		})
		for _, to := range []string{"DD", "RD", "DR"} {
			t := to
			add("retention-retain-retain-to-"+retentionName(t), "retention changed Retain/Retain -> "+strings.ReplaceAll(retentionName(t), "-", "/"), rr, func(s M) {
				setSpec(s, "persistentVolumeClaimRetentionPolicy", retentionPolicy(t))
			})
		}
		add("retention-delete-delete-to-retain-retain", "retention changed Delete/Delete -> Retain/Retain (owner refs removed)", dd, func(s M) {
			setSpec(s, "persistentVolumeClaimRetentionPolicy", retentionPolicy("RR"))
		})
	}
}

func (g *Gen) identity() {
	const grp = "identity"
	g.group(grp, "identity and storage repair: pods missing statefulset.kubernetes.io/pod-name or apps.kubernetes.io/pod-index labels, wrong hostname, missing claim volumes, both policies")
	for _, pol := range policies {
		p := polShort(pol)
		base := g.settledAt(Opts{Key: "identity/" + pol, Replicas: 3, Policy: pol, VCT: 1, Retention: "RR"})
		add := func(name, desc string, f func(s M)) {
			s := clone(base)
			f(s)
			g.add(grp, p+"-"+name, pol+", 3 replicas, one claim template, "+desc, s)
		}
		labels := func(s M, n string) M { return jsonobj.AsObj(jsonobj.Get(pod(s, n), "metadata.labels")) }
		add("missing-pod-name-label", "web-1 lacks the pod-name label", func(s M) {
			delete(labels(s, "web-1"), "statefulset.kubernetes.io/pod-name")
		})
		add("missing-pod-index-label", "web-1 lacks the pod-index label", func(s M) {
			delete(labels(s, "web-1"), "apps.kubernetes.io/pod-index")
		})
		add("missing-identity-labels-all-pods", "every pod lacks both identity labels", func(s M) {
			for _, n := range podNames(s) {
				delete(labels(s, n), "statefulset.kubernetes.io/pod-name")
				delete(labels(s, n), "apps.kubernetes.io/pod-index")
			}
		})
		add("wrong-pod-name-label", "web-2's pod-name label says web-0", func(s M) {
			labels(s, "web-2")["statefulset.kubernetes.io/pod-name"] = "web-0"
		})
		add("wrong-hostname", "web-1 has hostname web-x", func(s M) {
			set(pod(s, "web-1"), "spec.hostname", "web-x")
		})
		add("missing-claim-volume", "web-1 has no volume for claim template data", func(s M) {
			po := pod(s, "web-1")
			var vols []any
			for _, v := range jsonobj.AsArr(jsonobj.Get(po, "spec.volumes")) {
				if jsonobj.GetStr(v, "name") != "data" {
					vols = append(vols, v)
				}
			}
			set(po, "spec.volumes", vols)
		})
		add("missing-labels-template-changed", "web-1 lacks identity labels and the template changed", func(s M) {
			delete(labels(s, "web-1"), "statefulset.kubernetes.io/pod-name")
			delete(labels(s, "web-1"), "apps.kubernetes.io/pod-index")
			bump(s, img28)
		})
	}
}

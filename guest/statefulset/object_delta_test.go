package statefulset

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// deltaOf is next as a delta snapshot on prev: the objects of next that prev lacks or has with other bytes
// (by uid), the uids of prev's objects next lacks, and next's counts.
func deltaOf(t *testing.T, prev, next map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, v := range next {
		out[k] = v
	}
	removed, counts := map[string]any{}, map[string]any{}
	for _, list := range []string{"pods", "revisions", "claims"} {
		before := map[string]string{}
		for _, o := range listOf(prev, list) {
			before[uidOf(o)] = string(encode(t, o))
		}
		sent, now := []any{}, map[string]bool{}
		for _, o := range listOf(next, list) {
			now[uidOf(o)] = true
			if b, ok := before[uidOf(o)]; !ok || b != string(encode(t, o)) {
				sent = append(sent, o)
			}
		}
		gone := []any{}
		for _, o := range listOf(prev, list) {
			if !now[uidOf(o)] {
				gone = append(gone, uidOf(o))
			}
		}
		out[list], removed[list], counts[list] = sent, gone, len(listOf(next, list))
	}
	out["delta"] = map[string]any{"removed": removed, "counts": counts}
	return out
}

// holdable: an instance holds every object of s (each has a uid and a resourceVersion, no uid twice in a
// list), so a delta can build on it.
func holdable(s map[string]any) bool {
	for _, list := range []string{"pods", "revisions", "claims"} {
		uids := map[string]bool{}
		for _, o := range listOf(s, list) {
			md, _ := o.(map[string]any)["metadata"].(map[string]any)
			uid, _ := md["uid"].(string)
			rv, _ := md["resourceVersion"].(string)
			if uid == "" || rv == "" || uids[uid] {
				return false
			}
			uids[uid] = true
		}
	}
	return true
}

func listOf(s map[string]any, list string) []any { l, _ := s[list].([]any); return l }

func uidOf(o any) string {
	md, _ := o.(map[string]any)["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	return uid
}

// clone is a deep copy of a snapshot document.
func clone(t *testing.T, s map[string]any) map[string]any {
	t.Helper()
	return decodeWorld(t, encode(t, s))
}

// changeWorld changes a snapshot as worlds change between syncs: objects changed (a new resourceVersion and
// labels), removed, added (copies of others under a new name and uid), reordered, and the time moved.
func changeWorld(t *testing.T, r *rand.Rand, s map[string]any, step int) map[string]any {
	t.Helper()
	s = clone(t, s)
	for _, list := range []string{"pods", "revisions", "claims"} {
		objs := listOf(s, list)
		for n := r.IntN(3); n > 0 && len(objs) > 0; n-- {
			switch o := objs[r.IntN(len(objs))].(map[string]any); r.IntN(4) {
			case 0, 1:
				md := o["metadata"].(map[string]any)
				md["resourceVersion"] = fmt.Sprint(700000 + step*10 + n)
				labels, _ := md["labels"].(map[string]any)
				if labels == nil {
					labels = map[string]any{}
					md["labels"] = labels
				}
				labels["delta.ordinal.dev/step"] = fmt.Sprint(step)
				if r.IntN(3) == 0 { // a namespace left out is the set's: what the instance keeps must not point into the input
					delete(md, "namespace")
				}
				if list == "revisions" && r.IntN(3) == 0 { // other data under the same name and uid (revisionMemo)
					changeRevisionData(r, s, o)
				}
				if list == "claims" && r.IntN(2) == 0 { // what claimsMatchRetentionPolicy reads (pod_memo.go)
					if _, owned := md["ownerReferences"]; owned {
						delete(md, "ownerReferences")
					} else if set, _ := s["statefulSet"].(map[string]any); set != nil {
						smd, _ := set["metadata"].(map[string]any)
						md["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
							"name": smd["name"], "uid": smd["uid"], "controller": true, "blockOwnerDeletion": true}}
					}
				}
			case 2:
				i := r.IntN(len(objs))
				objs = append(objs[:i:i], objs[i+1:]...)
			case 3:
				c := clone(t, map[string]any{"o": o})["o"].(map[string]any)
				md := c["metadata"].(map[string]any)
				md["uid"] = fmt.Sprintf("added-%d-%d", step, n)
				md["name"] = fmt.Sprint(md["name"], "-x", step, n)
				md["resourceVersion"] = fmt.Sprint(800000 + step*10 + n)
				objs = append(objs, c)
			}
		}
		if r.IntN(4) == 0 {
			r.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
		}
		s[list] = objs
	}
	if r.IntN(5) == 0 {
		changeSet(r, s, step)
	}
	return s
}

// changeSet changes what the module's per-pod memo (pod_memo.go) keys on: the set's name, uid,
// selector, a claim template's name, its claim retention policy or its replicas, while the pods stay as they were.
func changeSet(r *rand.Rand, s map[string]any, step int) {
	set, _ := s["statefulSet"].(map[string]any)
	if set == nil {
		return
	}
	md, _ := set["metadata"].(map[string]any)
	spec, _ := set["spec"].(map[string]any)
	if md == nil || spec == nil {
		return
	}
	switch r.IntN(8) {
	case 6, 7: // the pod template, to another text and back (setPatch's memo, keyed by the template's text)
		if tmpl, _ := spec["template"].(map[string]any); tmpl != nil {
			toggleTemplateAnnotation(tmpl)
		}
	case 4:
		policy, _ := spec["persistentVolumeClaimRetentionPolicy"].(map[string]any)
		if policy == nil {
			policy = map[string]any{}
			spec["persistentVolumeClaimRetentionPolicy"] = policy
		}
		for _, k := range []string{"whenScaled", "whenDeleted"} {
			if r.IntN(2) == 0 {
				policy[k] = []string{"Retain", "Delete"}[r.IntN(2)]
			}
		}
	case 5:
		if n, err := strconv.Atoi(fmt.Sprint(spec["replicas"])); err == nil && n > 0 {
			spec["replicas"] = json.Number(strconv.Itoa(n - 1 + 2*r.IntN(2)))
		}
	case 0:
		md["name"] = fmt.Sprint(md["name"], "x")
	case 1:
		md["uid"] = fmt.Sprintf("set-uid-%d", step)
	case 2:
		sel, _ := spec["selector"].(map[string]any)
		if sel == nil {
			return
		}
		ml, _ := sel["matchLabels"].(map[string]any)
		if ml == nil {
			ml = map[string]any{}
			sel["matchLabels"] = ml
		}
		if _, ok := ml["delta.ordinal.dev/step"]; ok {
			delete(ml, "delta.ordinal.dev/step")
		} else {
			ml["delta.ordinal.dev/step"] = fmt.Sprint(step) // the pods changed at this step match it
		}
	case 3:
		tmpls, _ := spec["volumeClaimTemplates"].([]any)
		if len(tmpls) == 0 {
			return
		}
		if t, ok := tmpls[0].(map[string]any); ok {
			if tmd, ok := t["metadata"].(map[string]any); ok {
				tmd["name"] = fmt.Sprint(tmd["name"], "x")
			}
		}
	}
}

// toggleTemplateAnnotation adds a pod template's annotation delta.ordinal.dev/template, or removes it when it is there.
func toggleTemplateAnnotation(tmpl map[string]any) {
	md, _ := tmpl["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		tmpl["metadata"] = md
	}
	ann, _ := md["annotations"].(map[string]any)
	if _, ok := ann["delta.ordinal.dev/template"]; ok {
		delete(ann, "delta.ordinal.dev/template")
		return
	}
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann["delta.ordinal.dev/template"] = "on"
}

// changeRevisionData gives a revision other data (what the module keeps of a revision's data is the held
// revision's, found again for another resourceVersion): the set's template as its own, or its own template
// with an annotation toggled.
func changeRevisionData(r *rand.Rand, s map[string]any, rev map[string]any) {
	if r.IntN(2) == 0 {
		set, _ := s["statefulSet"].(map[string]any)
		spec, _ := set["spec"].(map[string]any)
		if tmpl, ok := spec["template"].(map[string]any); ok {
			var c map[string]any
			b, _ := json.Marshal(tmpl)
			json.Unmarshal(b, &c)
			c["$patch"] = "replace"
			rev["data"] = map[string]any{"spec": map[string]any{"template": c}}
			return
		}
	}
	data, _ := rev["data"].(map[string]any)
	spec, _ := data["spec"].(map[string]any)
	if tmpl, ok := spec["template"].(map[string]any); ok {
		toggleTemplateAnnotation(tmpl)
	}
}

// A delta snapshot gets the plan of the whole world it stands for, byte for byte: over random sequences of
// changes to every conformance case (objects changed, removed, added, reordered), and the instance goes on
// taking deltas after it.
func TestDeltaPlansAreTheWholeSnapshots(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 28))
	deltas, stale := 0, 0
	for _, cs := range conformanceSnapshots(t) {
		s := decodeWorld(t, cs.in)
		// as the module's direct export does, every call's input is written over the previous one's: nothing
		// the instance keeps may point into it
		var c ObjectCache
		var buf []byte
		call := func(in []byte) []byte {
			buf = append(buf[:0], in...)
			out := ReconcileCached(&c, buf)
			if c.KeepsInput() { // what the instance holds points into it: the next call has a buffer of its own
				buf = nil
				return out
			}
			for i := range buf {
				buf[i] = 'X'
			}
			return out
		}
		first := call(cs.in)
		if code, _ := planCode(t, first); code != "" && code != CodeSyncFailed {
			continue // a refused snapshot: nothing is held (TestDeltaNeedsWhatTheInstanceHolds)
		}
		prev := s
		for step := 1; step <= 4; step++ {
			next := changeWorld(t, r, prev, step)
			want := Reconcile(encode(t, next))
			got := call(encode(t, deltaOf(t, prev, next)))
			code, msg := planCode(t, got)
			if (code == CodeStaleReference) != !holdable(prev) {
				t.Fatalf("%s step %d: %s %s, but every object of the previous world could be held: %v", cs.name, step, code, msg, holdable(prev))
			}
			if code == CodeStaleReference { // the host sends the whole world
				stale++
				got = call(encode(t, next))
			} else {
				deltas++
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s step %d (%s %s):\n got  %.600s\n want %.600s", cs.name, step, code, msg, got, want)
			}
			if wc, _ := planCode(t, want); wc != "" && wc != CodeSyncFailed {
				break // refused: the instance holds nothing, as for a whole snapshot
			}
			prev = next
		}
	}
	t.Logf("%d deltas, %d stale", deltas, stale)
	if deltas < 1000 {
		t.Fatalf("%d deltas planned, %d stale: the test exercised too few", deltas, stale)
	}
}

// A delta applies only to what the instance holds: none after a refused snapshot or without a cache, none
// when the previous world had an object it could not hold, none whose counts or removals disagree with it;
// each is StaleReference (the host then sends the whole snapshot), never a plan of another world.
func TestDeltaNeedsWhatTheInstanceHolds(t *testing.T) {
	const name = "scale/ordered-vct1-delete-delete-to-2"
	s := snapshotDoc(t, name)
	same := deltaOf(t, s, s)
	var c ObjectCache
	if code, _ := planCode(t, ReconcileCached(&c, encode(t, same))); code != CodeStaleReference {
		t.Errorf("a fresh instance: %s", code)
	}
	if code, _ := planCode(t, Reconcile(encode(t, same))); code != CodeStaleReference {
		t.Errorf("without a cache: %s", code)
	}
	ReconcileCached(&c, encode(t, s))
	if got, want := ReconcileCached(&c, encode(t, same)), Reconcile(encode(t, s)); !bytes.Equal(got, want) {
		t.Errorf("an empty delta is not the previous world's plan:\n%.300s\n%.300s", got, want)
	}
	ReconcileCached(&c, []byte(`{"abi":1}`))
	if code, _ := planCode(t, ReconcileCached(&c, encode(t, same))); code != CodeStaleReference {
		t.Errorf("after a refused snapshot: %s", code)
	}

	check := func(what string, edit func(d map[string]any), wantCode, wantIn string) {
		t.Helper()
		var c ObjectCache
		ReconcileCached(&c, encode(t, s))
		d := clone(t, same)
		edit(d)
		code, msg := planCode(t, ReconcileCached(&c, encode(t, d)))
		if code != wantCode || !strings.Contains(msg, wantIn) {
			t.Errorf("%s: %s %q, want %s containing %q", what, code, msg, wantCode, wantIn)
		}
		// and the instance holds nothing after it
		if code, _ := planCode(t, ReconcileCached(&c, encode(t, same))); code != CodeStaleReference {
			t.Errorf("%s: the instance still takes deltas: %s", what, code)
		}
	}
	delta := func(d map[string]any) map[string]any { return d["delta"].(map[string]any) }
	pod0 := listOf(s, "pods")[0]
	check("a count the host got wrong", func(d map[string]any) { delta(d)["counts"].(map[string]any)["pods"] = 7 }, CodeStaleReference, "the host counted 7")
	check("a removal of a pod not held", func(d map[string]any) {
		delta(d)["removed"].(map[string]any)["pods"] = []any{"no-such-uid"}
	}, CodeStaleReference, "no-such-uid")
	check("no counts", func(d map[string]any) { delete(delta(d), "counts") }, CodeInvalidSnapshot, "delta.counts.pods")
	check("a pod removed twice", func(d map[string]any) {
		delta(d)["removed"].(map[string]any)["pods"] = []any{uidOf(pod0), uidOf(pod0)}
	}, CodeInvalidSnapshot, "twice")
	check("a pod removed and sent", func(d map[string]any) {
		delta(d)["removed"].(map[string]any)["pods"] = []any{uidOf(pod0)}
		d["pods"] = []any{pod0}
	}, CodeInvalidSnapshot, "removes and sends")
	check("a reference in a delta", func(d map[string]any) {
		d["pods"] = referenced(t, s, "pods")["pods"]
	}, CodeInvalidSnapshot, "whole, not as references")
	check("a new pod under a held pod's name", func(d map[string]any) {
		p := clone(t, map[string]any{"o": pod0})["o"].(map[string]any)
		p["metadata"].(map[string]any)["uid"] = "another-uid"
		d["pods"] = []any{p}
		delta(d)["counts"].(map[string]any)["pods"] = len(listOf(s, "pods")) + 1
	}, CodeInvalidSnapshot, "also held from the previous snapshot")
	check("a pod without a resourceVersion", func(d map[string]any) {
		p := clone(t, map[string]any{"o": pod0})["o"].(map[string]any)
		delete(p["metadata"].(map[string]any), "resourceVersion")
		d["pods"] = []any{p}
	}, CodeInvalidSnapshot, "uid and a resourceVersion")

	// a world with an object the instance could not hold (no uid): no delta builds on it
	noUID := snapshotDoc(t, name)
	delete(listOf(noUID, "claims")[0].(map[string]any)["metadata"].(map[string]any), "uid")
	c = ObjectCache{}
	ReconcileCached(&c, encode(t, noUID))
	if code, _ := planCode(t, ReconcileCached(&c, encode(t, deltaOf(t, noUID, noUID)))); code != CodeStaleReference {
		t.Errorf("after a world with an object without a uid: %s", code)
	}
}

// rawDelta is next as a delta on prev, as deltaOf, with every object as next's bytes carry it (a revision's
// data is compared byte for byte: re-encoding it would make another world).
func rawDelta(t *testing.T, prev, next []byte) []byte {
	t.Helper()
	var p, n map[string]json.RawMessage
	if err := json.Unmarshal(prev, &p); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(next, &n); err != nil {
		t.Fatal(err)
	}
	uid := func(o json.RawMessage) string {
		var m struct{ Metadata struct{ UID string } }
		json.Unmarshal(o, &m)
		return m.Metadata.UID
	}
	removed, counts := map[string]any{}, map[string]any{}
	for _, list := range []string{"pods", "revisions", "claims"} {
		var before, after []json.RawMessage
		json.Unmarshal(p[list], &before)
		json.Unmarshal(n[list], &after)
		had, has := map[string]string{}, map[string]bool{}
		for _, o := range before {
			had[uid(o)] = string(o)
		}
		sent := [][]byte{}
		for _, o := range after {
			has[uid(o)] = true
			if b, ok := had[uid(o)]; !ok || b != string(o) {
				sent = append(sent, o)
			}
		}
		gone := []string{}
		for _, o := range before {
			if !has[uid(o)] {
				gone = append(gone, uid(o))
			}
		}
		n[list] = append(append(json.RawMessage("["), bytes.Join(sent, []byte(","))...), ']')
		removed[list], counts[list] = gone, len(after)
	}
	n["delta"] = encode(t, map[string]any{"removed": removed, "counts": counts})
	// written by hand: json.Marshal would compact the raw objects
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []byte("{")
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, encode(t, k)...), ':'), n[k]...)
	}
	return append(out, '}')
}

// FuzzDelta: a delta from one generated world to another gets the plan the second world gets whole, or, where
// the instance cannot hold the first (an object without a uid or resourceVersion, a refused snapshot, another
// namespace), StaleReference, and where the second has an object a delta cannot carry, InvalidSnapshot; never
// a panic, never another plan.
func FuzzDelta(f *testing.F) {
	for i := int64(0); i < 16; i++ {
		f.Add(i, i+1)
		f.Add(i, i)
	}
	f.Fuzz(func(t *testing.T, seedA, seedB int64) {
		inA, inB := genSnapshot(seedA), genSnapshot(seedB)
		a, b := decodeWorld(t, inA), decodeWorld(t, inB)
		var c ObjectCache
		first := ReconcileCached(&c, inA)
		firstCode, _ := planCode(t, first)
		got := ReconcileCached(&c, rawDelta(t, inA, inB))
		want := Reconcile(inB)
		gotCode, gotMsg := planCode(t, got)
		if strings.Contains(gotMsg, "internal error") {
			t.Fatalf("seeds %d, %d: panic: %s", seedA, seedB, gotMsg)
		}
		setOf := func(s map[string]any) string {
			md, _ := s["statefulSet"].(map[string]any)["metadata"].(map[string]any)
			ns, _ := md["namespace"].(string)
			return cmp.Or(ns, "default")
		}
		holds := (firstCode == "" || firstCode == CodeSyncFailed) && holdable(a) && setOf(a) == setOf(b)
		switch {
		case holds && !holdable(b): // a host never sends such a delta: an object it could not name (or one uid twice)
			if gotCode != CodeInvalidSnapshot {
				t.Fatalf("seeds %d, %d: a delta with an object without a uid or resourceVersion: %s %s", seedA, seedB, gotCode, gotMsg)
			}
		case holds && !bytes.Equal(got, want):
			wantCode, _ := planCode(t, want)
			if gotCode == "" || gotCode != wantCode { // an invalid world may be reported at another path
				t.Fatalf("seeds %d, %d: the delta's plan differs from the whole world's:\n got  %.400s\n want %.400s", seedA, seedB, got, want)
			}
		case !holds && gotCode != CodeStaleReference:
			t.Fatalf("seeds %d, %d: a delta on a world the instance cannot hold: %s %s", seedA, seedB, gotCode, gotMsg)
		}
	})
}

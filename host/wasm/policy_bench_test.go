package wasm_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/policies"
)

// BenchmarkPolicyOverhead is what a set's policies add to a sync (issue 29: a policy call adds at most 10%
// to a sync). The sync is the controller's incremental one: a set mid-rollout (a template change,
// OrderedReady, maxUnavailable 1, half its pods updated; policyWorld) of 100 or 1000 pods, one pod changed
// since its previous sync, its snapshot laid out as the controller's builder lays it out and sent through
// the set's wasm.Session (the module gets the changed pod, the rest by reference), its plan (the next pod's
// delete, the status) decoded. In the same iteration each shipped
// policy (and, as "all", the four as one set names them) judges that plan through host/policy's Run as the
// controller makes one per sync: the plan's objects looked up through the snapshot builder's index
// (Run.Object), the members before the lists as the builder wrote them (Run.Head), the pods as it knows them
// (Run.Pods), the pdb policy given a budget, zones the nodes. It reports policy/sync, the ratio of the
// two times, and each in ms.
func BenchmarkPolicyOverhead(b *testing.B) {
	ctx := context.Background()
	mods := map[string]policy.Module{}
	for _, name := range []string{"pdb", "zones", "window", "handoff"} {
		p, err := wasm.LoadPolicy(ctx, policies.Builtin()[name], wasm.Config{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Close(context.Background()) })
		mods[name] = p
	}
	m := loadGuest(b, wasm.Config{MaxInstances: 1})
	for _, n := range []int{100, 1000} {
		w := policyWorld(b, m, n)
		for _, name := range []string{"pdb", "zones", "window", "handoff", "all"} {
			var ps []policy.Module
			if name == "all" {
				ps = []policy.Module{mods["handoff"], mods["window"], mods["zones"], mods["pdb"]}
			} else {
				ps = []policy.Module{mods[name]}
			}
			b.Run(fmt.Sprintf("pods=%d/%s", n, name), func(b *testing.B) { benchPolicyOverhead(b, m, w, ps) })
		}
	}
}

// world is a set's syncs as policyWorld makes them.
type world struct {
	snaps   [2][]byte
	layouts [2]*wasm.Layout
	objects [2]func(kind, name string) (json.RawMessage, bool)
	heads   [2][]byte
	pods    [2]func() policy.Pods
	budgets []json.RawMessage
	nodes   []json.RawMessage
	n       int
}

// policyWorld is a set of n pods mid-rollout naming the four shipped policies, as the controller's syncs see
// it while the rollout goes on: the update revision made, the upper half of the pods updated, every pod
// Ready, so that the sync deletes the next pod (web-n/2-1) and writes the status. It is two snapshots that
// differ in one pod's resourceVersion, each with the layout and the object lookup the controller's snapshot
// builder gives (its members in the builder's order: the set before the lists); the nodes its pods run on,
// in three zones; a budget selecting its pods.
func policyWorld(b *testing.B, m *wasm.Module, n int) *world {
	snap := strings.Replace(string(rollingUpdateSnapshot(n)), `"labels":{"app":"web"}},"spec":{"replicas"`,
		`"labels":{"app":"web"},"annotations":{"ordinal.dev/policies":"handoff,window,zones,pdb","window.ordinal.dev/allow":"00:00-24:00"}},"spec":{"replicas"`, 1)
	if !strings.Contains(snap, "window.ordinal.dev/allow") {
		b.Fatal("the set carries no policies")
	}
	// The rollout's first sync makes the update revision: it is in the snapshot from then on.
	raw, err := m.Reconcile(context.Background(), []byte(snap))
	if err != nil {
		b.Fatal(err)
	}
	created := gjson.GetBytes(raw, `actions.#(kind=="ControllerRevision").object`)
	rev, update := map[string]any{}, created.Get("metadata.name").Str
	if err := json.Unmarshal([]byte(created.Raw), &rev); err != nil || update == "" {
		b.Fatalf("the first sync made no revision: %s", raw)
	}
	md := rev["metadata"].(map[string]any)
	md["namespace"], md["uid"], md["resourceVersion"], md["creationTimestamp"] = "default", "rev-2", "200", "2026-05-01T12:00:00Z"
	revJSON, _ := json.Marshal(rev)
	snap = strings.Replace(snap, `"revisions":[`, `"revisions":[`+string(revJSON)+`,`, 1)
	for i := n / 2; i < n; i++ { // updated: the update revision's label (what upstream reads) and template
		pod := fmt.Sprintf(`"controller-revision-hash":"web-7b9c6d5f4","statefulset.kubernetes.io/pod-name":"web-%d"`, i)
		if !strings.Contains(snap, pod) {
			b.Fatalf("no pod web-%d", i)
		}
		snap = strings.Replace(snap, pod, strings.Replace(pod, "web-7b9c6d5f4", update, 1), 1)
	}
	w := &world{n: n}
	for i := range w.snaps {
		if i == 1 { // pod web-0 with another resourceVersion (and so other bytes)
			snap = strings.Replace(snap, `"resourceVersion":"1000"`, `"resourceVersion":"999999"`, 1)
		}
		w.snaps[i] = []byte(snap)
		w.layouts[i], w.objects[i], w.heads[i], w.pods[i] = layOut(b, w.snaps[i])
	}
	if string(w.snaps[0]) == string(w.snaps[1]) {
		b.Fatal("the two snapshots do not differ")
	}
	for i := range 16 { // the pods' nodes (node-0 to node-15), in three zones
		w.nodes = append(w.nodes, json.RawMessage(fmt.Sprintf(`{"metadata":{"name":"node-%d","labels":{"topology.kubernetes.io/zone":"zone-%c"}}}`, i, 'a'+i%3)))
	}
	w.budgets = []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web","namespace":"default","generation":1},`+
		`"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}},"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":%d,"desiredHealthy":%d}}`, n, n-1))}
	return w
}

// layOut is what the controller's snapshot builder knows of a snapshot as it writes it: where each listed
// object is, what names it, its digest (wasm.Layout); each object by kind and name (policy.Run.Object); the
// members before its lists (policy.Run.Head: the builder writes abi, now and the set first); its pods' names
// and those that are down (policy.Run.Pods: the builder finds a pod's health once per encoding of it).
func layOut(b *testing.B, snap []byte) (*wasm.Layout, func(kind, name string) (json.RawMessage, bool), []byte, func() policy.Pods) {
	l := &wasm.Layout{}
	byName := map[[2]string]json.RawMessage{}
	kinds := map[string]string{"pods": "Pod", "revisions": "ControllerRevision", "claims": "PersistentVolumeClaim"}
	var head []byte
	var pods policy.Pods
	gjson.ParseBytes(snap).ForEach(func(k, v gjson.Result) bool {
		if kinds[k.Str] == "" {
			if k.Str == "statefulSet" {
				head = snap[:v.Index+len(v.Raw)]
			}
			return true
		}
		v.ForEach(func(_, e gjson.Result) bool {
			raw := snap[e.Index : e.Index+len(e.Raw)]
			l.Objects = append(l.Objects, wasm.LaidObject{List: k.Str, From: e.Index, To: e.Index + len(e.Raw),
				UID: e.Get("metadata.uid").Str, RV: e.Get("metadata.resourceVersion").Str, Digest: sha256.Sum256(raw)})
			byName[[2]string{kinds[k.Str], e.Get("metadata.name").Str}] = raw
			if k.Str == "pods" {
				p := &corev1.Pod{}
				if err := json.Unmarshal(raw, p); err != nil {
					b.Fatal(err)
				}
				pods.Names = append(pods.Names, p.Name)
				if !policy.Healthy(p) {
					pods.Down = append(pods.Down, raw)
				}
			}
			return true
		})
		return true
	})
	if head == nil || gjson.GetBytes(append(head[:len(head):len(head)], '}'), "statefulSet.metadata.name").Str != "web" {
		b.Fatal("the snapshot's set is not before its lists")
	}
	return l, func(kind, name string) (json.RawMessage, bool) {
		raw, ok := byName[[2]string{kind, name}]
		return raw, ok
	}, head, func() policy.Pods { return pods }
}

// timed is a policy whose calls are counted: the input's bytes and the time in Evaluate (the module's call).
type timed struct {
	policy.Module
	bytes, calls int
	evaluate     time.Duration
}

func (t *timed) Evaluate(ctx context.Context, input []byte) ([]byte, error) {
	t0 := time.Now()
	out, err := t.Module.Evaluate(ctx, input)
	t.evaluate += time.Since(t0)
	t.bytes += len(input)
	t.calls++
	return out, err
}

func benchPolicyOverhead(b *testing.B, m *wasm.Module, w *world, mods []policy.Module) {
	ctx := context.Background()
	ps := make([]policy.Module, len(mods))
	var counted []*timed
	for i, p := range mods {
		t := &timed{Module: p}
		ps[i], counted = t, append(counted, t)
	}
	sess := m.NewSession()
	if _, err := sess.Reconcile(ctx, w.snaps[1]); err != nil { // the set's first sync: sent whole
		b.Fatal(err)
	}
	memory := &policy.Memory{}
	var syncTime, policyTime time.Duration
	i := 0
	for b.Loop() {
		i++
		snap := w.snaps[i%2]
		t0 := time.Now()
		raw, err := wasm.LaidOut{Session: sess, Snapshot: snap, Layout: w.layouts[i%2]}.Reconcile(ctx, snap)
		if err != nil {
			b.Fatal(err)
		}
		p, err := plan.Decode(raw)
		if err != nil || len(p.Actions) != 2 || p.Actions[0].Verb != "delete" || p.Actions[0].Name != fmt.Sprintf("web-%d", w.n/2-1) {
			b.Fatalf("plan %s (%v): want the next pod's delete and the status", raw, err)
		}
		t1 := time.Now()
		run := &policy.Run{Policies: ps, Snapshot: snap, Memory: memory, PodDisruptionBudgets: w.budgets, Nodes: w.nodes,
			Object: w.objects[i%2], Head: w.heads[i%2], Pods: w.pods[i%2],
			Failed: func(f policy.Failure) { b.Fatal(f) }} // one per sync, as the controller makes it
		if holds := run.Judge(ctx, p, 0); len(holds) != 0 {
			b.Fatalf("holds %v: the benchmark's policies allow the plan", holds)
		}
		policyTime += time.Since(t1)
		syncTime += t1.Sub(t0)
	}
	st := sess.Stats()
	b.ReportMetric(float64(policyTime)/float64(syncTime), "policy/sync")
	b.ReportMetric(float64(syncTime.Microseconds())/1000/float64(b.N), "sync-ms")
	b.ReportMetric(float64(policyTime.Microseconds())/1000/float64(b.N), "policy-ms")
	b.ReportMetric(float64(st.Whole-1)/float64(st.Calls-1), "whole/sync") // a recycled instance is sent the set whole again
	var bytes, calls int
	var evaluate time.Duration
	for _, t := range counted {
		bytes, calls, evaluate = bytes+t.bytes, calls+t.calls, evaluate+t.evaluate
	}
	b.ReportMetric(float64(bytes)/1024/float64(calls), "input-KiB/call")
	b.ReportMetric(float64(evaluate.Microseconds())/1000/float64(b.N), "evaluate-ms")
}

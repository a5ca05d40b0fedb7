package statefulset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
)

// A long life of one set through an instance's deltas: its pods made ready and unready, failed, deleted,
// relabelled to the revision being rolled out, removed and made again, adopted and orphaned, the set
// rescaled, its template and minReadySeconds changed, the plan's revisions and status written back, the
// instance recycled now and then. Every delta's plan must be the whole snapshot's, byte for byte, and most
// deltas must have been planned from the instance's index of claimed pods (pod_index.go), not by its
// fallback. ORDINAL_INDEX_PODS and ORDINAL_INDEX_STEPS make the set and the life longer (1000 pods is the
// size the index exists for; the default keeps the suite fast).
func TestIndexedDeltaPlansAreTheWholeSnapshots(t *testing.T) {
	pods, steps := envInt(t, "ORDINAL_INDEX_PODS", 30), envInt(t, "ORDINAL_INDEX_STEPS", 200)
	r := rand.New(rand.NewPCG(11, uint64(pods)))
	w := decodeWorld(t, genSnapshotSettled(pods))
	var c ObjectCache
	var buf []byte
	call := func(in []byte) []byte { // the input written over after each call, as the module's export does
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
	call(encode(t, w))
	sent := w // the world as the instance was last given it (writeBack changes w after)
	indexed, fallbacks := 0, 0
	for step := 1; step <= steps; step++ {
		next := clone(t, w)
		changeLife(r, next, pods, step)
		want := Reconcile(encode(t, next))
		if r.IntN(40) == 0 { // recycled: a new instance gets the whole world
			c = ObjectCache{}
			call(encode(t, next))
		} else {
			before := c.maps.podIndex.valid
			got := call(encode(t, deltaOf(t, sent, next)))
			if !bytes.Equal(got, want) {
				os.WriteFile("/tmp/ordinal-index-failure.json", encode(t, next), 0o644)
				t.Fatalf("step %d:\n got  %.800s\n want %.800s", step, got, want)
			}
			if before && c.maps.podIndex.valid {
				indexed++
			} else {
				fallbacks++
			}
		}
		sent, w = next, clone(t, next)
		writeBack(t, w, want, step)
	}
	t.Logf("%d deltas from the index, %d by upstream's loops", indexed, fallbacks)
	if indexed < steps/3 {
		t.Fatalf("only %d of %d deltas were planned from the index", indexed, steps)
	}
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: not a positive number", name, s)
	}
	return n
}

// decodeWorld is a snapshot document as a tree, its numbers as their text (json.Number).
func decodeWorld(t *testing.T, in []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(in))
	d.UseNumber()
	var s map[string]any
	if err := d.Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// changeLife changes a few pods of w (a set of n pods at most), and now and then the set.
func changeLife(r *rand.Rand, w map[string]any, n, step int) {
	pods := listOf(w, "pods")
	for k := r.IntN(3) + 1; k > 0 && len(pods) > 0; k-- {
		i := r.IntN(len(pods))
		p := pods[i].(map[string]any)
		md := p["metadata"].(map[string]any)
		md["resourceVersion"] = fmt.Sprint(1000000 + step*10 + k)
		labels := md["labels"].(map[string]any)
		switch r.IntN(10) {
		case 0, 1, 2:
			setReady(p, r.IntN(3) != 0, step)
		case 3:
			p["status"].(map[string]any)["phase"] = []string{"Running", "Pending", "Failed"}[r.IntN(3)]
		case 4:
			md["deletionTimestamp"] = "2026-11-22T10:00:00Z"
		case 5, 6:
			if rev := updateRevisionOf(w); rev != "" {
				labels["controller-revision-hash"] = rev
			}
		case 7: // gone
			pods = append(pods[:i:i], pods[i+1:]...)
		case 8: // orphaned (the plan adopts it; writeBack does not, healOdd does later)
			if r.IntN(3) == 0 {
				delete(md, "ownerReferences")
			}
		case 9: // no longer selected (the plan releases it)
			if r.IntN(3) == 0 {
				labels["app"] = "other"
			}
		}
	}
	if r.IntN(2) == 0 {
		healOdd(pods, step)
	}
	if r.IntN(3) == 0 { // a missing pod made again under its own name
		have := map[string]bool{}
		for _, p := range pods {
			have[p.(map[string]any)["metadata"].(map[string]any)["name"].(string)] = true
		}
		for o := 0; o < n; o++ {
			name := "web-" + strconv.Itoa(o)
			if have[name] {
				continue
			}
			tmpl := onePod()
			md := tmpl["metadata"].(map[string]any)
			md["name"], md["uid"], md["resourceVersion"] = name, fmt.Sprintf("pod-%d-%d", o, step), fmt.Sprint(2000000+step)
			labels := md["labels"].(map[string]any)
			labels["apps.kubernetes.io/pod-index"], labels["statefulset.kubernetes.io/pod-name"] = strconv.Itoa(o), name
			if rev := updateRevisionOf(w); rev != "" {
				labels["controller-revision-hash"] = rev
			}
			tmpl["status"] = map[string]any{"phase": "Pending"}
			pods = append(pods, tmpl)
			break
		}
	}
	w["pods"] = pods
	w["now"] = fmt.Sprintf("2026-11-22T10:%02d:%02dZ", step/60%60, step%60)
	set := w["statefulSet"].(map[string]any)
	spec := set["spec"].(map[string]any)
	switch r.IntN(30) {
	case 0:
		spec["replicas"] = json.Number(strconv.Itoa(n - r.IntN(n/4+1)))
	case 1:
		spec["minReadySeconds"] = json.Number([]string{"0", "0", "10"}[r.IntN(3)])
	case 2:
		c := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c["image"] = fmt.Sprint("nginx:1.", 25+r.IntN(3))
		md := set["metadata"].(map[string]any)
		g, _ := strconv.Atoi(fmt.Sprint(md["generation"]))
		md["generation"] = json.Number(strconv.Itoa(g + 1))
	case 3:
		spec["podManagementPolicy"] = []string{"OrderedReady", "Parallel"}[r.IntN(2)]
	}
}

// healOdd makes one pod the set would adopt or release its own and selected again.
func healOdd(pods []any, step int) {
	for _, p := range pods {
		md := p.(map[string]any)["metadata"].(map[string]any)
		labels := md["labels"].(map[string]any)
		if _, owned := md["ownerReferences"]; owned && labels["app"] == "web" {
			continue
		}
		labels["app"] = "web"
		md["ownerReferences"] = onePod()["metadata"].(map[string]any)["ownerReferences"]
		md["resourceVersion"] = fmt.Sprint(4000000 + step)
		return
	}
}

func setReady(p map[string]any, ready bool, step int) {
	st := p["status"].(map[string]any)
	st["phase"] = "Running"
	conds, _ := st["conditions"].([]any)
	status := map[bool]string{true: "True", false: "False"}[ready]
	for _, c := range conds {
		if c := c.(map[string]any); c["type"] == "Ready" {
			c["status"], c["lastTransitionTime"] = status, fmt.Sprintf("2026-11-22T09:%02d:00Z", step%60)
			return
		}
	}
	st["conditions"] = append(conds, map[string]any{"type": "Ready", "status": status, "lastTransitionTime": "2026-11-22T09:00:00Z"})
}

func updateRevisionOf(w map[string]any) string {
	st, _ := w["statefulSet"].(map[string]any)["status"].(map[string]any)
	s, _ := st["updateRevision"].(string)
	return s
}

var onePodJSON = sync.OnceValue(func() []byte {
	b, _ := json.Marshal(decodeAny(genSnapshotSettled(1))["pods"].([]any)[0])
	return b
})

// onePod is a new copy of the settled set's pod web-0.
func onePod() map[string]any { return decodeAny(onePodJSON()) }

func decodeAny(b []byte) map[string]any {
	var s map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	d.Decode(&s)
	return s
}

// writeBack makes the world as the plan left it, as far as the next syncs need: the revisions it created and
// the status it wrote.
func writeBack(t *testing.T, w map[string]any, plan []byte, step int) {
	var p struct {
		Actions []struct {
			Verb, Kind string
			Object     map[string]any
		}
	}
	if err := json.Unmarshal(plan, &p); err != nil {
		t.Fatal(err)
	}
	for i, a := range p.Actions {
		switch {
		case a.Verb == "create" && a.Kind == "ControllerRevision":
			md := a.Object["metadata"].(map[string]any)
			md["uid"], md["resourceVersion"] = fmt.Sprintf("rev-%d-%d", step, i), fmt.Sprint(3000000+step)
			w["revisions"] = append(listOf(w, "revisions"), decodeAny(encode(t, a.Object)))
		case a.Verb == "updateStatus":
			w["statefulSet"].(map[string]any)["status"] = decodeAny(encode(t, a.Object["status"]))
		}
	}
}

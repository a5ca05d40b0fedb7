package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/wasm"
)

// simSequences are the conformance groups that hold every state of one simulated rollout (sim-*), in
// order: consecutive snapshots of one set, as a controller's syncs see them.
func simSequences(t *testing.T) map[string][][]byte {
	t.Helper()
	groups, err := filepath.Glob(filepath.Join("..", "..", "internal", "conformance", "cases", "sim-*"))
	if err != nil || len(groups) == 0 {
		t.Fatalf("no sim-* conformance groups (%v)", err)
	}
	out := map[string][][]byte{}
	for _, g := range groups {
		files, _ := filepath.Glob(filepath.Join(g, "step-*.snapshot.json"))
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(g)] = append(out[filepath.Base(g)], b)
		}
	}
	return out
}

// mutate changes a snapshot the way worlds change between syncs, or the way a careless host could: objects
// reordered, dropped, their resourceVersion bumped without another change, a pod changed under the same
// resourceVersion, the set's time moved.
func mutate(t *testing.T, r *rand.Rand, snapshot []byte) []byte {
	t.Helper()
	var s map[string]any
	d := json.NewDecoder(bytes.NewReader(snapshot))
	d.UseNumber()
	if err := d.Decode(&s); err != nil {
		t.Fatal(err)
	}
	for _, list := range []string{"pods", "revisions", "claims"} {
		objs, _ := s[list].([]any)
		switch r.IntN(6) {
		case 0:
			r.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
		case 1:
			if len(objs) > 0 {
				i := r.IntN(len(objs))
				objs = append(objs[:i:i], objs[i+1:]...)
			}
		case 2:
			for _, o := range objs {
				if md, _ := o.(map[string]any)["metadata"].(map[string]any); md != nil && r.IntN(2) == 0 {
					md["resourceVersion"] = fmt.Sprint(r.IntN(1000) + 900000)
				}
			}
		case 3: // the same uid and resourceVersion, other bytes (a host must not reference it)
			for _, o := range objs {
				if md, _ := o.(map[string]any)["metadata"].(map[string]any); md != nil && r.IntN(2) == 0 {
					labels, _ := md["labels"].(map[string]any)
					if labels == nil {
						labels = map[string]any{}
						md["labels"] = labels
					}
					labels["e2e.ordinal.dev/mutated"] = fmt.Sprint(r.IntN(3))
				}
			}
		}
		s[list] = objs
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every plan a Session makes is byte for byte the plan of the whole snapshot: over every simulated rollout
// of the conformance cases in order, and over random sequences of their states, mutated (reordered,
// dropped, re-versioned and changed objects), with another caller on the same instance in between, and
// with instances recycled every few calls. And the session did send references (the point of it).
func TestSessionPlansAreTheWholeSnapshots(t *testing.T) {
	ctx := context.Background()
	seqs := simSequences(t)
	names := make([]string, 0, len(seqs))
	for n := range seqs {
		names = append(names, n)
	}
	sort.Strings(names)
	full := loadGuest(t, wasm.Config{})
	for _, tc := range []struct {
		name string
		cfg  wasm.Config
	}{
		{"one instance", wasm.Config{MaxInstances: 1}},
		{"recycled every 3 calls", wasm.Config{MaxInstances: 1, MaxCallsPerInstance: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadGuest(t, tc.cfg)
			var refs, calls, deltas int
			check := func(what string, s *wasm.Session, snap []byte) {
				t.Helper()
				want, err := full.Reconcile(ctx, snap)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.Reconcile(ctx, snap)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: the session's plan differs from the whole snapshot's\n got  %.400s\n want %.400s", what, got, want)
				}
			}
			for _, n := range names {
				s := m.NewSession()
				for i, snap := range seqs[n] {
					check(fmt.Sprintf("%s step %d", n, i), s, snap)
				}
				// every reference resolved: the instance held what the session sent it (a StaleReference
				// is answered by a resend, so a plan alone would not show an instance that lost its objects,
				// e.g. one whose cache pointed into an input buffer the next call overwrote)
				if st := s.Stats(); st.Resent != 0 {
					t.Errorf("%s: %d of %d calls were refused as stale and sent again", n, st.Resent, st.Calls)
				}
				refs, calls, deltas = refs+s.Stats().References, calls+s.Stats().Calls, deltas+s.Stats().Deltas
			}
			r := rand.New(rand.NewPCG(1, 2))
			for run := 0; run < 40; run++ {
				s := m.NewSession()
				other := m.NewSession()
				seq := seqs[names[r.IntN(len(names))]]
				for i := 0; i < 12; i++ {
					snap := seq[r.IntN(len(seq))]
					if r.IntN(3) == 0 {
						snap = mutate(t, r, snap)
					}
					check(fmt.Sprintf("run %d call %d", run, i), s, snap)
					if r.IntN(5) == 0 { // someone else's call on the same instance in between
						check(fmt.Sprintf("run %d call %d (other)", run, i), other, seqs[names[r.IntN(len(names))]][0])
					}
				}
				refs, calls, deltas = refs+s.Stats().References, calls+s.Stats().Calls, deltas+s.Stats().Deltas
			}
			if refs == 0 || deltas == 0 {
				t.Fatalf("%d calls sent no object by reference (%d) or no delta (%d)", calls, refs, deltas)
			}
			t.Logf("%d calls, %d as deltas, %d objects not sent again", calls, deltas, refs)
		})
	}
}

// A reference the instance cannot resolve (forged, or to an object another snapshot held) gets a
// StaleReference plan, never a plan about an object the snapshot did not carry; the full module call
// without a cache (Reconcile of such bytes) says the same.
func TestStaleReferenceIsRefused(t *testing.T) {
	ctx := context.Background()
	m := loadGuest(t, wasm.Config{MaxInstances: 1})
	snap := simSequences(t)["sim-fresh-orderedready"][2]
	var s map[string]any
	if err := json.Unmarshal(snap, &s); err != nil {
		t.Fatal(err)
	}
	s["pods"] = append(s["pods"].([]any), map[string]any{"unchanged": map[string]any{"uid": "forged", "resourceVersion": "1"}})
	forged, _ := json.Marshal(s)
	for _, call := range []func(context.Context, []byte) ([]byte, error){m.Reconcile, m.NewSession().Reconcile} {
		out, err := call(ctx, forged)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Actions []any
			Error   struct{ Code, Path, Message string }
		}
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatal(err)
		}
		if p.Error.Code != "StaleReference" || len(p.Actions) != 0 || !strings.Contains(p.Error.Message, "forged") {
			t.Fatalf("plan %s", out)
		}
	}
}

// Regression (hostile probe, F1): a snapshot with a list key twice, the module reading the last list and
// the session the first, made a later call's plan another than the whole snapshot's. The session now keeps
// nothing of such a snapshot; and an object that repeats metadata, uid or resourceVersion is never
// referenced.
func TestSessionSnapshotWithARepeatedKey(t *testing.T) {
	ctx := context.Background()
	m := loadGuest(t, wasm.Config{MaxInstances: 1})
	full := loadGuest(t, wasm.Config{})
	base, err := os.ReadFile(filepath.Join("..", "..", "internal", "conformance", "cases", "compat", "ordered-semantic-gate-on.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(base, &s); err != nil {
		t.Fatal(err)
	}
	pods := s["pods"].([]any)
	pods[0].(map[string]any)["status"].(map[string]any)["phase"] = "Failed" // same uid and resourceVersion
	second, _ := json.Marshal(pods)
	trimmed := bytes.TrimRight(base, " \n")
	twice := append(append(append([]byte{}, trimmed[:len(trimmed)-1]...), `,"pods":`...), second...)
	twice = append(twice, '}')
	// the same object with its metadata twice: the module reads the second
	dupMeta := bytes.Replace(base, []byte(`"metadata": {`), []byte(`"metadata": {"uid":"x","resourceVersion":"1"}, "metadata": {`), 1)
	for name, first := range map[string][]byte{"list key twice": twice, "metadata twice": dupMeta} {
		sess := m.NewSession()
		for i, snap := range [][]byte{first, base, base} {
			want, err := full.Reconcile(ctx, snap)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sess.Reconcile(ctx, snap)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, call %d: the session's plan differs\n got  %.300s\n want %.300s", name, i, got, want)
			}
		}
	}
}

// Regression (hostile probe, F3): a session shared by goroutines gave wrong plans; its calls are serialized.
func TestSessionSharedByGoroutines(t *testing.T) {
	ctx := context.Background()
	m := loadGuest(t, wasm.Config{})
	seq := simSequences(t)["sim-fresh-orderedready"]
	want := make([][]byte, len(seq))
	for i, snap := range seq {
		var err error
		if want[i], err = m.Reconcile(ctx, snap); err != nil {
			t.Fatal(err)
		}
	}
	sess := m.NewSession()
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for i := 0; i < 40; i++ {
				k := (g + i) % len(seq)
				got, err := sess.Reconcile(ctx, seq[k])
				if err == nil && !bytes.Equal(got, want[k]) {
					err = fmt.Errorf("goroutine %d call %d: the plan of step %d differs", g, i, k)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A world whose ids start again (the reference harness's, and the replay's tick model after an edit) gives a
// rollout's new pods the uids of live old ones. Each object of a shared uid whose resourceVersion the others
// have not is sent by reference (uid and resourceVersion name it), one whose resourceVersion they share too is
// sent whole, and the plans are the whole snapshot's, with no reference refused.
func TestSessionReferencesObjectsThatShareAUID(t *testing.T) {
	ctx := context.Background()
	seq := simSequences(t)["sim-fresh-orderedready"]
	snap := seq[len(seq)-1]
	shareUID := func(sameRV bool) []byte {
		var s map[string]any
		if err := json.Unmarshal(snap, &s); err != nil {
			t.Fatal(err)
		}
		pods := s["pods"].([]any)
		if len(pods) < 3 {
			t.Fatalf("%d pods: the case needs 3", len(pods))
		}
		md0, md1 := pods[0].(map[string]any)["metadata"].(map[string]any), pods[1].(map[string]any)["metadata"].(map[string]any)
		if md0["resourceVersion"] == md1["resourceVersion"] {
			t.Fatal("the case's first two pods have one resourceVersion")
		}
		md1["uid"] = md0["uid"]
		if sameRV {
			md1["resourceVersion"] = md0["resourceVersion"]
		}
		b, _ := json.Marshal(s)
		return b
	}
	full := loadGuest(t, wasm.Config{})
	m := loadGuest(t, wasm.Config{MaxInstances: 1})
	for _, c := range []struct {
		name   string
		sameRV bool
		whole  int // objects sent whole after the first call
	}{{"resourceVersions differ", false, 0}, {"resourceVersions too", true, 2}} {
		t.Run(c.name, func(t *testing.T) {
			b := shareUID(c.sameRV)
			var n struct{ Pods, Revisions, Claims []any }
			if err := json.Unmarshal(b, &n); err != nil {
				t.Fatal(err)
			}
			objects := len(n.Pods) + len(n.Revisions) + len(n.Claims)
			want, err := full.Reconcile(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			s := m.NewSession()
			for i := 0; i < 3; i++ {
				got, err := s.Reconcile(ctx, b)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("call %d: the session's plan differs from the whole snapshot's\n got  %.400s\n want %.400s", i, got, want)
				}
			}
			st := s.Stats()
			if st.Resent != 0 || st.Deltas != 0 {
				t.Errorf("%d calls resent after StaleReference, %d deltas (none builds on a uid twice)", st.Resent, st.Deltas)
			}
			if want := 2 * (objects - c.whole); st.References != want {
				t.Errorf("%d objects sent by reference in the two calls after the first, want %d of %d", st.References, want, 2*objects)
			}
		})
	}
}

package wasm_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/host/wasm"
)

// trackingHost lays out each snapshot as a host that tracks its writes does (wasm.Layout.Next, Changed,
// Removed): here by comparing each object with the previous layout's object of its name (a host knows its
// objects by name; conformance worlds can give two objects one uid). skip leaves the first change of each
// layout out, as a host that missed a write would.
type trackingHost struct {
	layout wasm.Layout
	prev   map[wasm.LaidKey]laid // by list and name
	skip   bool
}

type laid struct {
	uid    string
	digest [32]byte
}

func (h *trackingHost) lay(t *testing.T, snap []byte) *wasm.Layout {
	t.Helper()
	l := &h.layout
	l.Next()
	seen := map[wasm.LaidKey]laid{}
	root := gjson.ParseBytes(snap)
	for _, list := range []string{"claims", "pods", "revisions"} {
		v := root.Get(list)
		if !v.IsArray() {
			t.Fatalf("snapshot without %s", list)
		}
		n := 0
		v.ForEach(func(_, e gjson.Result) bool {
			k := wasm.LaidKey{List: list, UID: e.Get("metadata.name").Str}
			now := laid{e.Get("metadata.uid").Str, sha256.Sum256([]byte(e.Raw))}
			old, had := h.prev[k]
			if had && old.uid != now.uid {
				l.Removed = append(l.Removed, wasm.LaidKey{List: list, UID: old.uid})
			}
			if !had || old != now {
				l.Changed = append(l.Changed, wasm.LaidChange{Index: len(l.Objects), Replaces: had && old.uid == now.uid})
			}
			seen[k] = now
			l.Objects = append(l.Objects, wasm.LaidObject{List: list, From: e.Index, To: e.Index + len(e.Raw),
				UID: now.uid, RV: e.Get("metadata.resourceVersion").Str, Digest: now.digest})
			n++
			return true
		})
		l.Lists = append(l.Lists, wasm.LaidList{List: list, From: v.Index + 1, To: v.Index + len(v.Raw) - 1, Count: n})
	}
	for k, o := range h.prev {
		if _, ok := seen[k]; !ok {
			l.Removed = append(l.Removed, wasm.LaidKey{List: k.List, UID: o.uid})
		}
	}
	if h.skip && len(l.Changed) > 0 {
		l.Changed = l.Changed[1:]
	}
	h.prev = seen
	return l
}

// A session given a host's changes sends the delta they make, and the plan is the whole snapshot's at every
// step of every simulated rollout; the deltas are built from the changes (Tracked), none is refused as stale.
func TestSessionTrackedChanges(t *testing.T) {
	ctx := context.Background()
	defer func(v bool) { wasm.VerifyTrackedChanges = v }(wasm.VerifyTrackedChanges)
	wasm.VerifyTrackedChanges = true
	full, m := loadGuest(t, wasm.Config{}), loadGuest(t, wasm.Config{MaxInstances: 1})
	tracked := 0
	for name, seq := range simSequences(t) {
		s, h := m.NewSession(), &trackingHost{}
		for i, snap := range seq {
			snap = compactLists(t, snap)
			want, err := full.Reconcile(ctx, snap)
			if err != nil {
				t.Fatal(err)
			}
			got, err := wasm.LaidOut{Session: s, Snapshot: snap, Layout: h.lay(t, snap)}.Reconcile(ctx, snap)
			if err != nil {
				t.Fatalf("%s step %d: %v", name, i, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s step %d: the tracked session's plan differs from the whole snapshot's\n got  %.400s\n want %.400s", name, i, got, want)
			}
		}
		st := s.Stats()
		if st.Resent != 0 {
			t.Errorf("%s: %d of %d calls refused as stale", name, st.Resent, st.Calls)
		}
		tracked += st.Tracked
	}
	if tracked == 0 {
		t.Fatal("no delta was built from the host's changes")
	}
}

// A host's changes that leave out a write are caught where tests verify them (VerifyTrackedChanges), not
// sent: the digests say what changed.
func TestSessionTrackedChangesVerified(t *testing.T) {
	ctx := context.Background()
	defer func(v bool) { wasm.VerifyTrackedChanges = v }(wasm.VerifyTrackedChanges)
	wasm.VerifyTrackedChanges = true
	m := loadGuest(t, wasm.Config{MaxInstances: 1})
	for name, seq := range simSequences(t) {
		s, h := m.NewSession(), &trackingHost{skip: true}
		for i, snap := range seq {
			snap = compactLists(t, snap)
			msg := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg = fmt.Sprint(r)
					}
				}()
				_, _ = wasm.LaidOut{Session: s, Snapshot: snap, Layout: h.lay(t, snap)}.Reconcile(ctx, snap)
				return ""
			}()
			if msg != "" {
				if !strings.Contains(msg, "the digests say") {
					t.Fatalf("%s step %d: %s", name, i, msg)
				}
				return
			}
		}
	}
	t.Fatal("no missed write was caught")
}

// compactLists is snapshot as a host writes it: no white space between list elements (the layout's lists
// are their elements separated by single commas).
func compactLists(t *testing.T, snap []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, snap); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

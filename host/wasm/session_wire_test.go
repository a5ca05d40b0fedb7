package wasm

import (
	"bytes"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
)

// A delta is written over the buffer of the session's previous one, and says the same as one written into a
// new buffer: the splice no longer allocates a wire per sync.
func TestSpliceDeltaWritesOverItsBuffer(t *testing.T) {
	snap := []byte(`{"abi":1,"pods":[{"a":1},  {"b":2},{"c":3}],"statefulSet":{}}`)
	from := bytes.IndexByte(snap, '[') + 1
	to := bytes.IndexByte(snap, ']')
	b := bytes.Index(snap, []byte(`{"b"`))
	region := func() []*deltaRegion {
		return []*deltaRegion{{list: "pods", from: from, to: to, keep: []snapshotObject{{from: b, to: b + 7}}}}
	}
	d := abi.Delta{Removed: abi.ObjectLists[[]string]{Pods: []string{"u-a"}, Revisions: []string{}, Claims: []string{}}}
	want := spliceDelta(nil, snap, region(), d)
	if want == nil || !bytes.Contains(want, []byte(`"pods":[{"b":2}]`)) || !bytes.Contains(want, []byte(`,"delta":{"removed":{"pods":["u-a"]`)) {
		t.Fatalf("delta %s", want)
	}
	buf := make([]byte, 0, 4096)
	buf = append(buf, "left over from the previous delta"...)
	got := spliceDelta(buf, snap, region(), d)
	if !bytes.Equal(got, want) {
		t.Fatalf("over a used buffer: %s, want %s", got, want)
	}
	if &got[0] != &buf[:1][0] {
		t.Fatal("the delta was written into a new buffer, not over the one given")
	}
	regions := region()
	fresh := testing.AllocsPerRun(20, func() { _ = spliceDelta(nil, snap, regions, d) })
	over := testing.AllocsPerRun(20, func() { got = spliceDelta(got, snap, regions, d) })
	if over >= fresh {
		t.Errorf("a splice over a buffer with room allocated %v times, into a new one %v", over, fresh)
	}
}

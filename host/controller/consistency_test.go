package controller

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

type fakeRV struct{ rv string }

func (f *fakeRV) LastStoreSyncResourceVersion() string { return f.rv }

func TestConsistencyStore(t *testing.T) {
	pods, sets := &fakeRV{"100"}, &fakeRV{"100"}
	now := time.Unix(1000, 0)
	c := newConsistencyStore(map[schema.GroupResource]rvGetter{
		podResource: pods, StatefulSetTarget.GroupResource(): sets,
	}, 30*time.Second)
	c.now = func() time.Time { return now }
	owner := types.NamespacedName{Namespace: "ns", Name: "web"}

	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("no writes: %v", err)
	}
	c.WroteAt(owner, "uid1", podResource, "105")
	c.WroteAt(owner, "uid1", podResource, "103") // older: keeps 105
	c.WroteAt(owner, "uid1", StatefulSetTarget.GroupResource(), "106")
	_, err := c.EnsureReady(owner)
	var se *staleError
	if !errors.As(err, &se) {
		t.Fatalf("want staleError, got %v", err)
	}
	pods.rv = "104"
	sets.rv = "200"
	if _, err := c.EnsureReady(owner); err == nil {
		t.Fatal("pods at 104 < 105: want stale")
	}
	pods.rv = "105"
	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("caught up: %v", err)
	}
	if c.Len() != 0 {
		t.Fatal("record not cleared once ready")
	}

	// A new owner UID (the set was recreated) replaces the old record.
	c.WroteAt(owner, "uid1", podResource, "300")
	c.WroteAt(owner, "uid2", podResource, "150")
	if _, err := c.EnsureReady(owner); err == nil {
		t.Fatal("150 > 105: want stale")
	}
	pods.rv = "150"
	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("uid2 record at 150: %v", err)
	}

	// Timeout: a write the informers never see stops blocking after the timeout.
	c.WroteAt(owner, "uid2", podResource, "999")
	now = now.Add(29 * time.Second)
	if exp, err := c.EnsureReady(owner); err == nil || exp {
		t.Fatalf("before timeout: expired=%v err=%v", exp, err)
	}
	now = now.Add(2 * time.Second)
	if exp, err := c.EnsureReady(owner); err == nil || !exp {
		t.Fatalf("after timeout: expired=%v err=%v", exp, err)
	}
	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("expired record must be gone: %v", err)
	}

	// Unknown store version ("" = AtomicFIFO off) or unparsable: cannot tell, go ahead (as upstream).
	c.WroteAt(owner, "uid2", podResource, "5000")
	pods.rv = ""
	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("unknown read version: %v", err)
	}
	// Clear.
	c.WroteAt(owner, "uid2", podResource, "6000")
	pods.rv = "1"
	c.Clear(owner, "other-uid")
	if c.Len() != 1 {
		t.Fatal("Clear with another uid must keep the record")
	}
	c.Clear(owner, "")
	if c.Len() != 0 {
		t.Fatal("Clear with empty uid must drop the record")
	}
}

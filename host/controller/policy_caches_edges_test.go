package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
)

// A cache that does not sync before the sync's context ends (the budgets cannot be listed: RBAC, an API
// server down) fails the sync, and the next sync starts another informer: the first keeps running — its
// reflector listing and retrying until the manager stops — so each failed sync leaves one more behind.
func TestAnUnsyncedCacheIsStartedOnce(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "poddisruptionbudgets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "", nil)
	})
	pc := newPolicyCaches(client, "", func(string) {})
	defer pc.Stop()
	// Judged by which informer each sync used, not by counting lists after a pause: a loaded machine may not
	// have listed yet, and a second informer may not have either.
	var first *policyCache
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		if _, err := pc.get(ctx, abi.ContextPodDisruptionBudgets); err == nil {
			t.Fatal("a cache that cannot list synced")
		}
		cancel()
		pc.mu.Lock()
		c, n := pc.informer[abi.ContextPodDisruptionBudgets], len(pc.informer)
		pc.mu.Unlock()
		if i == 0 {
			first = c
		}
		if c == nil || c != first || n != 1 {
			t.Fatalf("failed sync %d left %d informers, this one %p (the first's %p): want the first kept, one informer", i+1, n, c, first)
		}
	}
	// and that informer is the one running: its reflector reports the API server's refusal
	for end := time.Now().Add(time.Minute); !apierrors.IsForbidden(first.lastErr()); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the informer kept never listed (last error %v)", first.lastErr())
		}
	}
}

// A sync's context has no deadline (the manager's): a cache that cannot list (a namespaced install whose Role
// cannot list nodes, RBAC without the new verbs) never syncs, and the sync waits for it forever. Each worker
// that syncs a set naming such a policy is lost, until every worker is and no set at all is synced. Before
// the caches, the list's error failed the sync, retried with backoff.
func TestACacheThatCannotListFailsTheSync(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", nil)
	})
	pc := newPolicyCaches(client, "", func(string) {})
	defer pc.Stop()
	pods := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "prod"}, Spec: corev1.PodSpec{NodeName: "n1"}}}
	ctx, cancel := context.WithCancel(context.Background()) // as the manager's: ended only at shutdown
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := pc.context(ctx, "prod", pods, []policy.Module{asking(abi.ContextNodes)})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the nodes cannot be listed, yet the context was served")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sync still waits for a cache that cannot list, 10s on: its worker is lost")
	}
}

package controller

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ordinal-dev/ordinal/abi"
)

// A cache that does not sync before the sync's context ends (the budgets cannot be listed: RBAC, an API
// server down) fails the sync, and the next sync starts another informer: the first keeps running — its
// reflector listing and retrying until the manager stops — so each failed sync leaves one more behind.
func TestReviewAnUnsyncedCacheIsStartedOnce(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "poddisruptionbudgets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "", nil)
	})
	pc := newPolicyCaches(client, "", func(string) {})
	defer pc.Stop()
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		if _, err := pc.get(ctx, abi.ContextPodDisruptionBudgets); err == nil {
			t.Fatal("a cache that cannot list synced")
		}
		cancel()
	}
	time.Sleep(200 * time.Millisecond) // a reflector lists again only after its backoff (at least 800ms)
	lists := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" && a.GetResource().Resource == "poddisruptionbudgets" {
			lists++
		}
	}
	if lists != 1 {
		t.Fatalf("%d lists of the budgets within 350ms of three failed syncs: one informer per failed sync (want one informer, one list)", lists)
	}
}

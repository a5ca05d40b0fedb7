//go:build e2e

package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var yieldedRE = regexp.MustCompile(`ordinal_syncs_total\{result="yielded"\} (\d+)`)

// Issue 13 item 2: a set whose status another controller writes (kube-controller-manager's field manager
// here, writing counts as it does) is left alone: a Warning event says why, syncs count as yielded, and a
// template edit then changes no pod. The controller's own writes carry its field manager, so its status
// writes before that never count.
func TestControllerLeavesASetAnotherControllerActsOn(t *testing.T) {
	t.Parallel()
	ctx, ns, c, _ := begin(t, "fight", false)
	createSet(t, ctx, ns, newSet("fight", 2))
	set := waitRolledOut(t, ctx, ns, "fight", 2)
	for _, e := range set.ManagedFields {
		if e.Subresource == "status" && e.Manager != "ordinal" {
			t.Fatalf("status written by %q before any other controller ran: %+v", e.Manager, set.ManagedFields)
		}
	}
	podsBefore := podsNow(ns)

	// Another controller writes the status, again and again as kube-controller-manager would: counts it
	// computed from its own view of the pods (each write a change: an identical write is a no-op the API
	// server does not record). managedFields times have one-second resolution, so a write in the same
	// second as the controller's own is told apart only by a later one.
	deadline := time.Now().Add(time.Minute) // a hang guard: the event comes with a sync a write triggers
	for i := 0; ; i++ {
		cur := getSet(t, ctx, ns, "fight")
		cur.Status.ReadyReplicas, cur.Status.AvailableReplicas = int32(i%2), int32(i%2)
		if _, err := cfg.kc.AppsV1().StatefulSets(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{FieldManager: "kube-controller-manager"}); err != nil && !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
		l, err := cfg.kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=OtherControllerActive"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) > 0 {
			if msg := l.Items[0].Message; !strings.Contains(msg, `its status was written by "kube-controller-manager"`) {
				t.Errorf("event message: %s", msg)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no OtherControllerActive event; events:\n%s\ncontroller log:\n%s", eventLog(ns), c.logTail(20))
		}
		time.Sleep(300 * time.Millisecond)
	}
	yielded := func() int {
		m := yieldedRE.FindStringSubmatch(c.metricsText(t))
		if m == nil {
			t.Fatalf("no ordinal_syncs_total{result=\"yielded\"} in /metrics")
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	n0 := yielded()
	if n0 < 1 {
		t.Errorf("yielded syncs %d, want at least 1", n0)
	}
	// A template edit: the controller would replace both pods, but must not. Its sync is over once the
	// yielded count moves past n0.
	patchSet(t, ctx, ns, "fight", setVersion("v2"))
	for yielded() <= n0 {
		if time.Now().After(deadline) {
			t.Fatalf("no yielded sync after the edit; controller log:\n%s", c.logTail(20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := c.logLines(`"Leaving the StatefulSet alone: another controller acts on it"`); len(got) == 0 {
		t.Error("no log line says why the set is left alone")
	}
	if after := podsNow(ns); after != podsBefore {
		t.Errorf("pods changed while another controller acts on the set:\nbefore %s\nafter  %s", podsBefore, after)
	}
}

// A client that adds a condition to a set's status (upstream's Conformance spec "should validate Statefulset
// Status endpoints": an UpdateStatus, then a merge patch of /status) is not another controller: the set is
// still acted on, so scaling it to 0 (the spec's cleanup) removes its pods. Ordinal used to leave such a set
// alone for good.
func TestControllerActsAfterAClientWritesStatus(t *testing.T) {
	t.Parallel()
	ctx, ns, c, _ := begin(t, "client-status", false)
	createSet(t, ctx, ns, newSet("client-status", 2))
	waitRolledOut(t, ctx, ns, "client-status", 2)

	sets := cfg.kc.AppsV1().StatefulSets(ns)
	for {
		cur := getSet(t, ctx, ns, "client-status")
		cur.Status.Conditions = append(cur.Status.Conditions, appsv1.StatefulSetCondition{Type: "StatusUpdate",
			Status: corev1.ConditionTrue, Reason: "E2E", Message: "Set from e2e test"})
		_, err := sets.UpdateStatus(ctx, cur, metav1.UpdateOptions{FieldManager: "e2e.test"})
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	if _, err := sets.Patch(ctx, "client-status", types.MergePatchType, []byte(`{"status":{"conditions":[{"type":"StatusPatched","status":"True"}]}}`),
		metav1.PatchOptions{FieldManager: "e2e.test"}, "status"); err != nil {
		t.Fatal(err)
	}
	patchSet(t, ctx, ns, "client-status", `{"spec":{"replicas":0}}`)
	waitSet(t, ctx, ns, "client-status", "scaled to 0", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.Replicas == 0
	})
	if l, err := eventsOf(ctx, ns, "client-status", "OtherControllerActive"); err != nil {
		t.Fatal(err)
	} else if len(l.Items) > 0 {
		t.Errorf("left alone after a client wrote its status: %s\ncontroller log:\n%s", l.Items[0].Message, c.logTail(20))
	}
}

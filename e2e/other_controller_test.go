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
)

var yieldedRE = regexp.MustCompile(`ordinal_syncs_total\{result="yielded"\} (\d+)`)

// Issue 13 item 2: a set whose status another controller writes (kube-controller-manager's field manager
// here, written as it writes it) is left alone: a Warning event says why, syncs count as yielded, and a
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

	// Another controller writes the status, again and again as kube-controller-manager would (each write a
	// change: an identical write is a no-op the API server does not record). managedFields times have
	// one-second resolution, so a write in the same second as the controller's own is told apart only by
	// a later one.
	deadline := time.Now().Add(time.Minute) // a hang guard: the event comes with a sync a write triggers
	for i := 0; ; i++ {
		cur := getSet(t, ctx, ns, "fight")
		cur.Status.Conditions = []appsv1.StatefulSetCondition{{Type: "WrittenElsewhere", Status: corev1.ConditionTrue,
			Reason: "OtherController", Message: "write " + strconv.Itoa(i), LastTransitionTime: metav1.Now()}}
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

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

// TestBenchInPlace is part of `make bench-cluster` (ORDINAL_BENCH_CLUSTER=inplace runs it alone): the same
// image rollout of a 100-pod OrderedReady set, once recreating its pods (upstream's way) and once with
// pod-update-policy InPlaceIfPossible, alternating, on kwok with paced pods (each pod Running 500 ms after its
// creation or restart and Ready 500 ms after that, gone 500 ms after its deletion). Per row: the rollout's
// wall time, the pods deleted and created, and the controller's pod writes per pod updated (ordinal_actions_total),
// and the in-place row's wall time as a ratio of the recreating one's from the same alternation. Figures
// only: nothing here is a pass/fail budget.
func TestBenchInPlace(t *testing.T) {
	mode := os.Getenv("ORDINAL_BENCH_CLUSTER")
	if mode == "" || mode == "policies" {
		t.Skip("make bench-cluster runs this (ORDINAL_BENCH_CLUSTER=1, small or inplace)")
	}
	requireController(t)
	const replicas = 100
	rounds := 1
	if v := os.Getenv("ORDINAL_BENCH_IN_PLACE_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ORDINAL_BENCH_IN_PLACE_ROUNDS=%q", v)
		}
		rounds = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Minute)
	t.Cleanup(cancel)
	type row struct {
		policy           string
		wall             time.Duration
		deleted, created int
		podWrites        map[string]float64 // by verb
	}
	run := func(policy string) row {
		ns := newNamespace(t, ctx)
		c := startController(t, ns, ctrlOpts{})
		c.waitReady(ctx)
		defer c.stop()
		name := "bip"
		tr := trackPods(t, ctx, ns, name, false)
		set := newSet(name, replicas, inPlace(policy))
		for k, v := range map[string]string{annStartDelay: "500ms", annReadyDelay: "500ms", annTerminationDelay: "500ms"} {
			set.Spec.Template.Annotations[k] = v
		}
		createSet(t, ctx, ns, set)
		first := waitSet(t, ctx, ns, name, "created", 30*time.Minute, rolledOut(replicas))
		before := podActions(t, c)
		mark := tr.mark()
		t0 := time.Now()
		patchContainer(t, ctx, ns, name, `{"name":"app","image":"`+inPlaceImage+`"}`)
		waitSet(t, ctx, ns, name, "rolled out", 30*time.Minute, func(s *appsv1.StatefulSet) bool {
			return rolledOut(replicas)(s) && s.Status.UpdateRevision != first.Status.CurrentRevision
		})
		r := row{policy: policy, wall: time.Since(t0), deleted: len(tr.stepsOf(stepTerminating, mark)),
			created: len(tr.stepsOf(stepCreated, mark)), podWrites: map[string]float64{}}
		for verb, n := range podActions(t, c) {
			r.podWrites[verb] = (n - before[verb]) / replicas
		}
		t.Logf("%s: %s, %d pods deleted, %d created, pod writes per pod %v", policy, r.wall.Round(time.Millisecond), r.deleted, r.created, r.podWrites)
		return r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n== bench-cluster, in-place updates: an image rollout of a %d-pod OrderedReady set (kwok: Running 500ms after creation or restart, Ready 500ms later, gone 500ms after deletion)\n", replicas)
	fmt.Fprintf(&b, "%-6s %-18s %10s %8s %8s %-34s %8s\n", "round", "pod-update-policy", "wall", "deleted", "created", "pod writes per pod", "x-wall")
	for i := 1; i <= rounds; i++ {
		re := run("ReCreate")
		ip := run("InPlaceIfPossible")
		for _, r := range []row{re, ip} {
			ratio := ""
			if r.policy != "ReCreate" {
				ratio = fmt.Sprintf("%.2fx", r.wall.Seconds()/re.wall.Seconds())
			}
			fmt.Fprintf(&b, "%-6d %-18s %9.1fs %8d %8d %-34s %8s\n", i, r.policy, r.wall.Seconds(), r.deleted, r.created, writesString(r.podWrites), ratio)
		}
	}
	t.Log(b.String())
	fmt.Println(b.String())
}

var actionsRE = regexp.MustCompile(`(?m)^ordinal_actions_total\{kind="Pod",result="ok",verb="([^"]+)"\} (\S+)$`)

// podActions are the controller's successful pod writes so far, by verb (ordinal_actions_total).
func podActions(t *testing.T, c *controllerProc) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range actionsRE.FindAllStringSubmatch(c.metricsText(t), -1) {
		n, _ := strconv.ParseFloat(m[2], 64)
		out[m[1]] += n
	}
	return out
}

func writesString(m map[string]float64) string {
	var parts []string
	total := 0.0
	for _, verb := range []string{"create", "delete", "update", "resize", "patch"} {
		if n := m[verb]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f", verb, n))
			total += n
		}
	}
	return fmt.Sprintf("%.2f (%s)", total, strings.Join(parts, ", "))
}

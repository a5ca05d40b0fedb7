//go:build e2e

package e2e

// The chaos scenarios of a set's policies (docs/policy-modules.md), the outcomes host/replay's
// policy_chaos_test.go replays, on the real control plane and under the seed's faults:
//
//   - policy-trap: the set's policy (host/wasm/testdata/badpolicy.wasm, "bad", given with --policy) answers
//     the rollout's first delete, then traps at every call (the set's annotation misbehave: trap, made with the
//     partition lowered: the rollout stops at its first pod until then). A policy that fails holds nothing
//     back: the rollout completes, the set never says it holds anything, and the controller tells it (a
//     Warning PolicyFailed event, ordinal_policy_failures_total{reason="trap"}).
//   - policy-release: the shipped window policy holds every delete (a window closed for hours); once the
//     seed's faults are over, the operator opens the window: no pod is replaced while held, the rollout
//     completes, PolicyHold goes False and PolicyReleased says what was let go.
//   - policy-restart: the shipped handoff policy holds the primary's delete (a 10m timeout); the controller
//     is SIGKILLed while it holds, and once the restarted controller holds in turn, the operator shortens the
//     timeout to end the hold 5 s on, counted from when it began. The restarted controller keeps the hold
//     (PolicyHold stays True, the set's record of since when it holds keeps its first time) and lets the
//     delete through at that time plus the timeout, never before; each pod is replaced once.
//
// Each is a chaosScenario (chaos_test.go) with a policyOutcome; the steps here run on chaosRun's schedule and
// the invariants are the same watch's.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
)

// policyOutcome is what a scenario's policy does mid-rollout.
type policyOutcome int

const (
	policyNone      policyOutcome = iota
	policyTraps                   // policy-trap: the policy starts trapping mid-rollout
	policyReleased                // policy-release: a hold released mid-rollout by the operator's edit
	policyRestarted               // policy-restart: the controller restarted while the policy holds
)

func (o policyOutcome) String() string {
	return [...]string{"none", "trapped mid-rollout", "hold released mid-rollout", "controller restarted while held"}[o]
}

const (
	trapPolicy    = "bad" // host/wasm/testdata/badpolicy.wasm: traps when its input says "trap"
	trapPartition = 2     // the trap scenario's rollout stops after its top pod until the trap is on
	// the handoff's timeout at first: longer than any run, so that a restarted controller holds in turn
	// however slow the machine; once it has, the operator shortens it to end the hold a few seconds on
	handoffTimeout    = 10 * time.Minute
	handoffLeft       = 5 * time.Second // what the shortened timeout leaves of the hold
	annHandoffTimeout = "handoff.ordinal.dev/timeout"
	handoffPrimary    = "chaos-1" // the pod the restart scenario labels role=primary
	annWindowAllow    = "window.ordinal.dev/allow"
	windowOpenAllDay  = "00:00-24:00"
)

// policyScenarioAnnotations are the set's annotations of a policy scenario at creation, beside sc.annotations:
// the release scenario's window, closed from now for hours (UTC, every day).
func policyScenarioAnnotations(sc chaosScenario, now time.Time) map[string]string {
	if sc.policy != policyReleased {
		return nil
	}
	from := now.UTC().Add(6 * time.Hour)
	return map[string]string{annWindowAllow: from.Format("15:04") + "-" + from.Add(time.Hour).Format("15:04")}
}

// policyControllerArgs are the controller's flags a policy scenario needs: the trapping policy's module.
func policyControllerArgs(sc chaosScenario) []string {
	if sc.policy != policyTraps {
		return nil
	}
	return []string{"--policy", cfg.root + "/host/wasm/testdata/badpolicy.wasm"}
}

// policyChange is the scenario's change patch as a policy scenario makes it: the trap scenario's with the
// partition that stops the rollout after its top pod.
func policyChange(sc chaosScenario, patch map[string]any) {
	if sc.policy != policyTraps {
		return
	}
	spec, _ := patch["spec"].(map[string]any)
	spec["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": trapPartition}}
}

// policyWatch is what the invariant watch knows of a policy scenario's set and pods (all under its mu).
type policyWatch struct {
	outcome     policyOutcome
	set         *appsv1.StatefulSet // the set as last seen
	holdOn      int                 // times PolicyHold turned True (a status write with it True after none or False)
	holdReasons map[string]bool     // the reasons PolicyHold True gave
	holdNow     bool                // PolicyHold is True now
	since       map[string]string   // held write ("policy verb kind name"): the since its first record gave
	uids        map[int]map[types.UID]bool
	reported    map[string]bool
	primaryGone time.Time     // the handoff's pod marked for deletion (deletionTimestamp), or seen deleted
	timeout     time.Duration // the handoff's timeout as the set says it

	// the run's counts, for the summary
	killsHeld int               // controller SIGKILLs while PolicyHold was True
	restarted []*controllerProc // the controllers started after those
	traps     int               // ordinal_policy_failures_total{policy="bad",reason="trap"}, summed over the controllers' lives
}

func newPolicyWatch(o policyOutcome) *policyWatch {
	return &policyWatch{outcome: o, holdReasons: map[string]bool{}, since: map[string]string{},
		uids: map[int]map[types.UID]bool{}, reported: map[string]bool{}, timeout: handoffTimeout}
}

// followPolicySet starts judging a policy scenario's set (onPolicySet) and pods (onPolicyPod). Call
// before the change.
func followPolicySet(t *testing.T, ctx context.Context, ns string, w *invariantWatch) {
	t.Helper()
	w.mu.Lock()
	w.policy = newPolicyWatch(w.sc.policy)
	w.mu.Unlock()
	sets := cfg.kc.AppsV1().StatefulSets(ns)
	withAPI(func() {
		l, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.mu.Lock()
		for _, p := range l.Items {
			if !w.canaries["Pod/"+p.Name] {
				w.onPolicyPod(&p, false)
			}
		}
		w.mu.Unlock()
		informer(t, ctx, &appsv1.StatefulSet{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return sets.List(ctx, o) },
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return sets.Watch(ctx, o) },
			func(s *appsv1.StatefulSet, del bool) { w.onPolicySet(s, del) })
	})
}

func (pw *policyWatch) once(w *invariantWatch, key, format string, args ...any) {
	if !pw.reported[key] {
		pw.reported[key] = true
		w.violate(format, args...)
	}
}

// onPolicySet judges every update of a policy scenario's set. A failing policy holds nothing: the trap
// scenario's set never has PolicyHold nor a record of holds. What the set records of a held write keeps the
// time of its first record while the hold lasts (a controller restarted while it holds goes on from it), and
// a hold, once on, is not seen off and on again (the restart scenario's: the restarted controller keeps it).
func (w *invariantWatch) onPolicySet(s *appsv1.StatefulSet, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pw := w.policy
	if pw == nil || deleted || s.Name != chaosSet {
		return
	}
	pw.set = s
	record := s.Annotations[policy.AnnotationHeld]
	c := holdCondition(s)
	if pw.outcome == policyTraps {
		if c != nil {
			pw.once(w, "hold condition", "a failing policy held something: PolicyHold %s %s %q", c.Status, c.Reason, c.Message)
		}
		if record != "" {
			pw.once(w, "hold record", "a failing policy held something: %s %s", policy.AnnotationHeld, record)
		}
	}
	on := c != nil && c.Status == corev1.ConditionTrue
	if on && !pw.holdNow {
		pw.holdOn++
		pw.holdReasons[c.Reason] = true
		if pw.outcome == policyRestarted && pw.holdOn > 1 {
			pw.once(w, "hold again", "PolicyHold True again (%s %q) after it was False: the restarted controller did not keep the hold", c.Reason, c.Message)
		}
	}
	pw.holdNow = on
	if record == "" {
		return
	}
	var held map[string][]abi.HeldWrite
	if err := json.Unmarshal([]byte(record), &held); err != nil {
		pw.once(w, "record "+record, "%s %q is not the host's record: %v", policy.AnnotationHeld, record, err)
		return
	}
	for p, writes := range held {
		for _, h := range writes {
			key := strings.Join([]string{p, h.Verb, h.Kind, h.Name}, " ")
			first, seen := pw.since[key]
			switch {
			case !seen:
				pw.since[key] = h.Since
			case first != h.Since:
				pw.once(w, "since "+key+h.Since, "the set's record of %s: held since %s, first recorded since %s: the hold was timed afresh", key, h.Since, first)
			}
		}
	}
}

// onPolicyPod judges one event of a policy scenario's pod (mu held): each ordinal is replaced at most once
// (no write repeated: a pod at the new revision is never deleted again), and the handoff's primary is not
// deleted before its hold's time is up.
func (w *invariantWatch) onPolicyPod(p *corev1.Pod, deleted bool) {
	pw := w.policy
	o := podOrdinal(p.Name)
	if pw.uids[o] == nil {
		pw.uids[o] = map[types.UID]bool{}
	}
	pw.uids[o][p.UID] = true
	if n := len(pw.uids[o]); n > 2 {
		pw.once(w, fmt.Sprint("replaced ", o, n), "pod %s: %d pods at its ordinal since the change (uids %v): replaced more than once", p.Name, n, pw.uids[o])
	}
	if pw.outcome != policyRestarted || p.Name != handoffPrimary || !pw.primaryGone.IsZero() || (!deleted && p.DeletionTimestamp == nil) {
		return
	}
	gone := time.Now() // seen deleted: it was marked before now
	if p.DeletionTimestamp != nil {
		gone = p.DeletionTimestamp.Time // now + its grace period, in whole seconds: later than the delete
	}
	pw.primaryGone = gone
	since, err := time.Parse(time.RFC3339Nano, pw.since[strings.Join([]string{"handoff", abi.VerbDelete, abi.KindPod, handoffPrimary}, " ")])
	switch {
	case err != nil:
		pw.once(w, "primary unheld", "pod %s marked for deletion (%s) without the set's record of its hold", p.Name, gone.Format(time.RFC3339))
	case gone.Before(since.Add(pw.timeout)):
		pw.once(w, "primary early", "pod %s marked for deletion at %s, before its hold's timeout (held since %s, timeout %s)",
			p.Name, gone.Format(time.RFC3339Nano), since.Format(time.RFC3339Nano), pw.timeout)
	}
}

// holding reports whether the set's PolicyHold is True, as the watch last saw it.
func (w *invariantWatch) holding() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.policy != nil && w.policy.holdNow
}

// beforeKill is called just before a SIGKILL of c: the trap scenario's count of traps in c's life (its
// /metrics, the fault proxy's faults are not on it), and a SIGKILL while held counted (held: PolicyHold True).
func (w *invariantWatch) beforeKill(t *testing.T, c *controllerProc) (held bool) {
	if w.sc.policy == policyNone {
		return false
	}
	n := 0
	if w.sc.policy == policyTraps {
		n = trapsOf(t, c)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.policy == nil {
		return false
	}
	w.policy.traps += n
	if w.policy.holdNow {
		w.policy.killsHeld++
	}
	return w.policy.holdNow
}

// afterKill is called with the controller started after a SIGKILL.
func (w *invariantWatch) afterKill(c *controllerProc, wasHeld bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.policy != nil && wasHeld {
		w.policy.restarted = append(w.policy.restarted, c)
	}
}

// trapsOf is ordinal_policy_failures_total{policy="bad",reason="trap"} of c's /metrics.
func trapsOf(t *testing.T, c *controllerProc) int {
	v := metricOf(c.metricsText(t), `ordinal_policy_failures_total{policy="`+trapPolicy+`",reason="`+policy.FailTrap+`"}`)
	n, _ := strconv.ParseFloat(v, 64) // "-": none
	return int(n)
}

// policySteps are a policy scenario's steps after the change (chaosRun runs them in order): quiet says when
// the seed's SIGKILLs and etcd restart are all done; kill restarts the controller, current is the one running.
func policySteps(t *testing.T, ctx context.Context, ns string, sc chaosScenario, faulted bool, w *invariantWatch, rev1 string,
	quiet func() bool, kill func(), current func() *controllerProc) []chaosStep {
	set := func() *appsv1.StatefulSet {
		s, err := getChaosSet(ctx, kindApps, ns)
		if err != nil {
			return nil
		}
		return s
	}
	heldBy := func(reason string) func() bool {
		return func() bool {
			s := set()
			c := (*appsv1.StatefulSetCondition)(nil)
			if s != nil {
				c = holdCondition(s)
			}
			return c != nil && c.Status == corev1.ConditionTrue && c.Reason == reason && s.Annotations[policy.AnnotationHeld] != ""
		}
	}
	switch sc.policy {
	case policyTraps:
		// the top pod replaced at the new revision and Ready, the rollout stopped at the partition: then the
		// policy traps from the next delete on, and the partition goes
		atPartition := func() bool {
			s := set()
			return s != nil && s.Status.ObservedGeneration == s.Generation && s.Status.UpdateRevision != rev1 &&
				s.Status.UpdatedReplicas == sc.replicas-trapPartition && s.Status.ReadyReplicas == sc.replicas
		}
		return []chaosStep{{desc: "the policy trapping, the partition lowered", when: atPartition, do: func() {
			withAPI(func() {
				patchSet(t, ctx, ns, chaosSet, `{"metadata":{"annotations":{"misbehave":"trap"}},"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}`)
			})
		}}}
	case policyReleased:
		// held (every delete, outside the window) through the seed's faults: nothing is replaced meanwhile;
		// then the operator opens the window
		held := heldBy("OutsideWindow")
		return []chaosStep{
			{desc: "the window policy holding the rollout", when: held, do: func() { w.freeze("the window policy holds the rollout") }},
			{desc: "the window opened", when: quiet, do: func() {
				w.thaw()
				withAPI(func() {
					patchSet(t, ctx, ns, chaosSet, fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, annWindowAllow, windowOpenAllDay))
				})
			}},
		}
	case policyRestarted:
		// held, and recorded in the set: a SIGKILL then; once the controller running holds the set in turn
		// (the restarted one, or one the seed's SIGKILLs started since), the timeout shortened
		// and the set's record of the hold seen by the watch, which shortenHandoff counts from (the hold can
		// be seen in the controller's log or the condition before the watch sees the record's annotation)
		restartedHolds := func() bool {
			return w.handoffRecorded() && (!faulted || strings.Contains(current().log(), `"result":"held"`))
		}
		return []chaosStep{
			{desc: "the primary's delete held", when: heldBy("RoleNotHandedOff"), do: func() {
				if faulted {
					kill()
				}
			}},
			{desc: "the restarted controller holding the primary's delete in turn", when: restartedHolds, do: func() {
				shortenHandoff(t, ctx, ns, w)
			}},
		}
	}
	return nil
}

// handoffHoldKey is the watch's key (policy.since) of the handoff policy's hold of the primary's delete.
func handoffHoldKey() string {
	return strings.Join([]string{"handoff", abi.VerbDelete, abi.KindPod, handoffPrimary}, " ")
}

// handoffRecorded reports whether the watch has seen the set's record of the handoff's hold.
func (w *invariantWatch) handoffRecorded() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.policy.since[handoffHoldKey()] != ""
}

// shortenHandoff sets the handoff's timeout to end the hold handoffLeft from now, counted from the time the
// set records it began (the watch judges the primary's delete by it from then on).
func shortenHandoff(t *testing.T, ctx context.Context, ns string, w *invariantWatch) {
	t.Helper()
	key := handoffHoldKey()
	w.mu.Lock()
	since, err := time.Parse(time.RFC3339Nano, w.policy.since[key])
	w.mu.Unlock()
	if err != nil {
		t.Fatalf("the set's record of the handoff's hold: %v", err)
	}
	timeout := (time.Since(since) + handoffLeft).Round(time.Second)
	w.mu.Lock()
	w.policy.timeout = timeout
	w.mu.Unlock()
	withAPI(func() {
		patchSet(t, ctx, ns, chaosSet, fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, annHandoffTimeout, timeout.String()))
	})
}

// labelPrimary labels the restart scenario's primary (role=primary, the handoff's default label) before the
// change.
func labelPrimary(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	withAPI(func() {
		if _, err := cfg.kc.CoreV1().Pods(ns).Patch(ctx, handoffPrimary, types.MergePatchType, []byte(`{"metadata":{"labels":{"role":"primary"}}}`),
			metav1.PatchOptions{}); err != nil {
			t.Fatalf("label %s: %v", handoffPrimary, err)
		}
	})
}

// checkPolicy judges the settled set of a policy scenario: nothing held any more (PolicyHold False, or
// never there for a failing policy; no record), and the outcome told as the controller tells it. Its events
// are checked in the fault-free run: through the fault proxy, client-go's recorder drops an event the
// server refused (a 500, a 409) without retrying, as it does with any Kubernetes controller's.
func checkPolicy(t *testing.T, ctx context.Context, ns string, faulted bool, w *invariantWatch, last *controllerProc, res *chaosResult) {
	t.Helper()
	sc := w.sc
	s := waitChaosSet(t, ctx, kindApps, ns, "nothing held", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		c := holdCondition(s)
		none := c == nil
		if sc.policy != policyTraps {
			none = c != nil && c.Status == corev1.ConditionFalse && c.Reason == policy.ReasonNothingHeld
		}
		return none && s.Annotations[policy.AnnotationHeld] == ""
	})
	lastTraps := trapsOf(t, last)
	w.mu.Lock()
	pw := w.policy
	pw.traps += lastTraps
	res.policy = policyResult{outcome: sc.policy, killsHeld: pw.killsHeld, traps: pw.traps, holdOn: pw.holdOn}
	for _, c := range pw.restarted {
		if strings.Contains(c.log(), `"result":"held"`) {
			res.policy.heldAfter++
		}
	}
	holdOn, reasons := pw.holdOn, slices.Sorted(maps.Keys(pw.holdReasons))
	w.mu.Unlock()
	events := func(reason, prefix string) []string {
		var out []string
		withAPI(func() {
			l, err := eventsOf(ctx, ns, chaosSet, reason)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range l.Items {
				if strings.HasPrefix(e.Message, prefix) {
					out = append(out, e.Message)
				}
			}
		})
		return out
	}
	switch sc.policy {
	case policyTraps:
		// each controller's count was read before its SIGKILL: a trap lost to the count would have been made
		// between that read and the kill
		if res.policy.traps == 0 {
			t.Errorf("ordinal_policy_failures_total{policy=%q,reason=%q}: 0 over the controllers' lives: no trap counted", trapPolicy, policy.FailTrap)
		}
		want := "policy " + trapPolicy + ": "
		if !faulted {
			waitFor(t, ctx, "a Warning PolicyFailed event of the last controller's traps", 2*time.Minute, func() bool {
				return len(events(policy.EventFailed, want)) > 0
			})
		}
		got := events(policy.EventFailed, want)
		res.policy.failedEvents = len(got)
		for _, m := range got {
			if !strings.HasSuffix(m, "; it held nothing back") {
				t.Errorf("PolicyFailed %q: want it to say it held nothing back", m)
			}
		}
		t.Logf("policy %s trapped %d times (last controller: %d); PolicyFailed events: %q", trapPolicy, res.policy.traps, lastTraps, got)
	case policyReleased, policyRestarted:
		reason, released := "OutsideWindow", "policy window no longer holds delete Pod "
		if sc.policy == policyRestarted {
			reason, released = "RoleNotHandedOff", "policy handoff no longer holds delete Pod "+handoffPrimary+" "
		}
		if holdOn == 0 || !slices.Equal(reasons, []string{reason}) {
			t.Errorf("PolicyHold turned True %d times, reasons %v: want it held (%s)", holdOn, reasons, reason)
		}
		if !faulted {
			waitFor(t, ctx, "a PolicyReleased event", 2*time.Minute, func() bool { return len(events(policy.EventReleased, released)) > 0 })
		}
		t.Logf("PolicyHold: %s; released: %q; SIGKILLs while held: %d", conditionsString(s), events(policy.EventReleased, released), res.policy.killsHeld)
	}
	if sc.policy == policyRestarted {
		w.mu.Lock()
		gone := w.policy.primaryGone
		w.mu.Unlock()
		if gone.IsZero() {
			t.Errorf("the primary %s was never deleted", handoffPrimary)
		}
	}
}

// policyResult is a policy scenario's outcome, for the summary.
type policyResult struct {
	outcome      policyOutcome
	killsHeld    int // controller SIGKILLs while PolicyHold was True
	heldAfter    int // the controllers started after those that held the set in turn (not once the hold was over)
	traps        int // the policy's traps the controllers counted
	failedEvents int // PolicyFailed events on the set
	holdOn       int // times PolicyHold turned True
}

// policySummary is the summary's section of the policy scenarios' outcomes ("" when none ran).
func policySummary(results []*chaosResult) string {
	type row struct{ runs, failed, killsHeld, heldAfter, traps, failedEvents int }
	rows := map[policyOutcome]*row{}
	for _, r := range results {
		if r.policy.outcome == policyNone {
			continue
		}
		if rows[r.policy.outcome] == nil {
			rows[r.policy.outcome] = &row{}
		}
		x := rows[r.policy.outcome]
		x.runs++
		if r.failed {
			x.failed++
		}
		x.killsHeld += r.policy.killsHeld
		x.heldAfter += r.policy.heldAfter
		x.traps += r.policy.traps
		x.failedEvents += r.policy.failedEvents
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	// kills held: SIGKILLs while PolicyHold was True; held again: the controllers started after those that
	// held the set in turn; traps: the policy's, as the controllers counted them; events: PolicyFailed events
	fmt.Fprintf(&b, "\n%-34s %6s %8s %11s %11s %7s %8s\n", "policy outcome", "runs", "failed", "kills held", "held again", "traps", "events")
	for o := policyTraps; o <= policyRestarted; o++ {
		if x := rows[o]; x != nil {
			fmt.Fprintf(&b, "%-34s %6d %8d %11d %11d %7d %8d\n", o, x.runs, x.failed, x.killsHeld, x.heldAfter, x.traps, x.failedEvents)
		}
	}
	return b.String()
}

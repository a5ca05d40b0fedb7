//go:build e2e

package e2e

// Chaos: randomized fault runs of the controller on the real control plane (the Sieve/Acto line of work).
// Each run is one seed: a scenario (rollouts, scale-downs under each retention policy, a hot swap, and
// those of chaos_steps_test.go: an ordinal.dev set, migrate both ways, the extensions, a supplied module
// swapped, the webhook, a broken rollout rolled back at its progress deadline, image rollouts in place; and
// those of chaos_policy_test.go: a policy trapping mid-rollout, a hold released mid-rollout, the controller
// restarted while a policy holds) and
// a fault plan drawn from the seed: the fault proxy's rates (faultproxy_test.go), SIGKILLs of the
// controller at random moments, and for some seeds an etcd restart. Invariants are checked continuously by
// watchers that talk to kube-apiserver directly, never through the controller's view, and the final state
// is compared with a fault-free run of the same scenario.
//
// `make test` runs ORDINAL_CHAOS_RUNS (default 16, one per scenario) seeds; `make chaos` runs 200 and
// prints the table. ORDINAL_CHAOS_SEEDS=17,42 replays given seeds. The table and the failing seeds are
// written to build/e2e/chaos-summary.txt and build/e2e/chaos-failing-seeds.txt.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
)

const chaosSet = "chaos"

// chaosScenario is what a run does to its StatefulSet once the set is rolled out.
type chaosScenario struct {
	name     string
	replicas int32
	target   int32 // replicas after the change
	opts     []setOpt
	bump     bool // change the template (a rolling update)
	swap     bool // hot-swap the module in the middle of the rollout
	// claims the retention policy lets be deleted: ordinals >= target after a scale-down with whenScaled=Delete
	scaledDelete bool
	// maxDown is how many of the set's pods may be down (not Ready, or terminating) at once during the
	// change: 1 for OrderedReady (one pod at a time, upstream's monotonic update and scale-down), the
	// set's maxUnavailable for a Parallel rollout; 0 for no bound (a Parallel scale-down deletes at once).
	maxDown int

	// The scenarios of chaos_steps_test.go:
	crd         bool              // an ordinal.dev/v1 set, the controller in CRD mode (no --apps-v1)
	migrate     bool              // `migrate --to ordinal` before the change, `--to apps --allow-rollout` mid-rollout
	annotations map[string]string // the set's annotations (ordinal.dev/module: extended turns the extensions on)
	pause       bool              // the change is made paused (ordinal.dev/paused), then resumed after a SIGKILL
	reserve     string            // ordinal.dev/reserve-ordinals added with the change: no pod is created there
	supplied    bool              // the set names a module of the ConfigMap, swapped mid-rollout
	webhook     bool              // reviews of a claim-deleting scale-down, to a webhook behind its own fault proxy
	// the change is a revision whose pods run but never become Ready (annNeverReady): the set's progress
	// deadline (ordinal.dev/on-progress-deadline: Rollback) must put the first template back
	broken bool
	// the change is an image of container "app" (and the template's version annotation), which extension
	// in-place-update (ordinal.dev/pod-update-policy: InPlaceIfPossible) rolls without deleting a pod: every
	// pod keeps its uid and restarts its container once
	inPlace bool
	// what the set's policy does mid-rollout (chaos_policy_test.go): trap, a hold released by the operator,
	// a hold the controller is restarted during
	policy policyOutcome
}

var chaosScenarios = []chaosScenario{
	{name: "rollout-ordered", replicas: 3, target: 3, bump: true, maxDown: 1, opts: []setOpt{withClaims("", "")}},
	{name: "rollout-parallel", replicas: 4, target: 4, bump: true, maxDown: 2, opts: []setOpt{parallel, maxUnavailable(2)}},
	{name: "scale-retain", replicas: 4, target: 1, maxDown: 1, opts: []setOpt{withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)}},
	{name: "scale-delete", replicas: 4, target: 1, scaledDelete: true, opts: []setOpt{parallel,
		withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}},
	{name: "hot-swap", replicas: 4, target: 4, bump: true, swap: true, maxDown: 1, opts: []setOpt{minReady(1),
		withClaims(appsv1.DeletePersistentVolumeClaimRetentionPolicyType, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)}},
	{name: "crd-rollout", replicas: 3, target: 3, bump: true, maxDown: 1, crd: true, opts: []setOpt{withClaims("", "")}},
	{name: "migrate", replicas: 3, target: 3, bump: true, maxDown: 1, migrate: true, opts: []setOpt{withClaims("", "")}},
	// its progress deadline is longer than a run can last (chaosRun's context: 6 minutes): however slow the
	// machine, a run that passes cannot see it pass, so the rollout must end RolloutComplete, never rolled back
	{name: "extensions", replicas: 3, target: 3, bump: true, maxDown: 1, pause: true, reserve: "1",
		annotations: map[string]string{"ordinal.dev/module": "extended", "ordinal.dev/recover-stuck-after": "10m", "ordinal.dev/resize-claims": "true",
			annProgressDeadline: "3600", annOnProgressDeadline: "Rollback"},
		opts: []setOpt{withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)}},
	{name: "supplied-swap", replicas: 4, target: 4, bump: true, maxDown: 2, supplied: true,
		annotations: map[string]string{"ordinal.dev/module": suppliedModule}, opts: []setOpt{maxUnavailable(2)}},
	{name: "webhook", replicas: 4, target: 4, bump: true, maxDown: 2, webhook: true, opts: []setOpt{parallel, maxUnavailable(2),
		withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}},
	// a short deadline (from the last progress: a slow machine only makes the rollback later) with the
	// controller's SIGKILLs around it; every path (the rollback before or after the broken pod exists, the
	// rollback's own roll past the deadline too) ends in the same state
	{name: "deadline-rollback", replicas: 3, target: 3, bump: true, broken: true, maxDown: 1,
		annotations: map[string]string{"ordinal.dev/module": "extended", annProgressDeadline: "3", annOnProgressDeadline: "Rollback"},
		opts:        []setOpt{withClaims("", "")}},
	// in place: one pod at a time under OrderedReady (with claims), two at a time under Parallel with
	// maxUnavailable 2; besides the seed's SIGKILLs, the controller is killed once the first pod is moved
	{name: "in-place-ordered", replicas: 3, target: 3, bump: true, inPlace: true, maxDown: 1,
		annotations: inPlaceAnnotations(), opts: []setOpt{withClaims("", "")}},
	{name: "in-place-parallel", replicas: 4, target: 4, bump: true, inPlace: true, maxDown: 2,
		annotations: inPlaceAnnotations(), opts: []setOpt{parallel, maxUnavailable(2)}},
	// policies (chaos_policy_test.go): one that traps mid-rollout, a hold of every delete the operator
	// releases mid-rollout (two at a time then), a hold of the primary's delete the controller is restarted
	// in, which ends at its timeout
	{name: "policy-trap", replicas: 3, target: 3, bump: true, maxDown: 1, policy: policyTraps,
		annotations: map[string]string{abi.AnnotationPolicies: trapPolicy}},
	{name: "policy-release", replicas: 4, target: 4, bump: true, maxDown: 2, policy: policyReleased,
		annotations: map[string]string{abi.AnnotationPolicies: "window"}, opts: []setOpt{parallel, maxUnavailable(2)}},
	{name: "policy-restart", replicas: 3, target: 3, bump: true, maxDown: 1, policy: policyRestarted,
		annotations: map[string]string{abi.AnnotationPolicies: "handoff", annHandoffTimeout: handoffTimeout.String()}},
}

// chaosPlan is everything a seed decides.
type chaosPlan struct {
	seed     int64
	scenario chaosScenario
	rates    faultRates
	kills    []time.Duration // SIGKILLs of the controller, at these delays after the change
	etcd     time.Duration   // etcd restart at this delay after the change (0: none)
}

func planFor(seed int64) chaosPlan {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc4a05))
	p := chaosPlan{seed: seed, scenario: chaosScenarios[int(seed%int64(len(chaosScenarios)))]}
	p.rates = faultRates{
		conflict:   rng.Float64() * 0.15,
		throttle:   rng.Float64() * 0.08,
		error:      rng.Float64() * 0.10,
		lostReply:  rng.Float64() * 0.10,
		watchGone:  rng.Float64() * 0.30,
		watchDrop:  rng.Float64() * 0.50,
		watchDelay: rng.Float64() * 0.50,
		maxDelay:   300*time.Millisecond + time.Duration(rng.Int64N(int64(1200*time.Millisecond))),
	}
	for range rng.IntN(3) {
		p.kills = append(p.kills, 200*time.Millisecond+time.Duration(rng.Int64N(int64(4*time.Second))))
	}
	slices.Sort(p.kills)
	// one seed in six, and every scenario's in turn: seed % len picks the scenario (16 of them), and each
	// round of len seeds shifts which residue of 6 restarts etcd, or with a len sharing a factor with 6 only
	// some scenarios would ever see one (the first round, the default run's seeds, is seed%6 == 3 as before)
	if (seed+seed/int64(len(chaosScenarios)))%6 == 3 {
		p.etcd = 500*time.Millisecond + time.Duration(rng.Int64N(int64(2500*time.Millisecond)))
	}
	return p
}

// chaosResult is one run's row.
type chaosResult struct {
	seed       int64
	scenario   string
	faults     *faultCounts
	violations []string
	peakDown   int // most of the set's pods down at once during the change
	maxDown    int // the scenario's bound on it (0: none)
	equal      bool
	failed     bool
	reviews    map[reviewOutcome]int // the webhook scenario's reviews by outcome
	migrations int                   // the migrate scenario's migrations, and the attempts they took
	attempts   int
	policy     policyResult // a policy scenario's outcome
}

// ---------------------------------------------------------------------------------------------- invariants

// invariantWatch follows the namespace's pods, claims and revisions from kube-apiserver directly and
// records every violation as it happens. Events of one resource arrive in etcd's order, so the pods it
// holds are the set's pods at one real moment, never a mix of moments.
type invariantWatch struct {
	sc         chaosScenario
	canaries   map[string]bool // "Kind/name" of objects the set does not own
	mu         sync.Mutex
	down       map[string]bool // the set's pods (not canaries) by name: true when not Ready or terminating
	changed    bool            // the change was requested: the bound on pods down applies
	scaledDown bool            // the scale-down was requested (claims >= target may go, if the policy says so)
	peakDown   int             // most pods down at once during the change
	violations []string
	claimsGone []string

	terminating map[string]bool // the set's pods marked for deletion
	deadline    deadlineWatch   // the set of a scenario with a progress deadline (onSet)
	inPlace     inPlaceWatch    // the pods of an in-place scenario, from just before its change (onInPlacePod)
	frozen      map[string]bool // while the set is paused: its pods then (terminating or not); nil when not
	frozenWhy   string
	reviews     map[reviewOutcome]int
	policy      *policyWatch // a policy scenario's set and pods (followPolicySet)
}

func (w *invariantWatch) violate(format string, args ...any) {
	w.violations = append(w.violations, time.Now().Format("15:04:05.000")+": "+fmt.Sprintf(format, args...))
}

func (w *invariantWatch) onPod(p *corev1.Pod, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.canaries["Pod/"+p.Name] {
		w.canary(p, deleted)
		return
	}
	if w.frozen != nil {
		w.onFrozenPod(p, deleted)
	}
	if w.inPlace.pods != nil {
		w.onInPlacePod(p, deleted)
	}
	if w.policy != nil {
		w.onPolicyPod(p, deleted)
	}
	if deleted {
		delete(w.down, p.Name)
		delete(w.terminating, p.Name)
		return
	}
	if _, known := w.down[p.Name]; !known && w.changed && reservedOrdinals(w.sc)[podOrdinal(p.Name)] {
		w.violate("pod %s created at a reserved ordinal (ordinal.dev/reserve-ordinals: %s)", p.Name, w.sc.reserve)
	}
	w.down[p.Name] = !podReady(p) || p.DeletionTimestamp != nil
	w.terminating[p.Name] = p.DeletionTimestamp != nil
	// at most one pod per ordinal: every pod here but the canary is the set's, and "chaos-01" would be
	// ordinal 1 too (the API server keeps names unique; a controller could still spell one twice)
	byOrdinal := map[int][]string{}
	for n := range w.down {
		byOrdinal[podOrdinal(n)] = append(byOrdinal[podOrdinal(n)], n)
	}
	for o, names := range byOrdinal {
		if len(names) > 1 {
			sort.Strings(names)
			w.violate("ordinal %d has %d pods at once: %v", o, len(names), names)
		}
	}
	if !w.changed {
		return
	}
	var down []string
	for n, d := range w.down {
		if d {
			down = append(down, n)
		}
	}
	w.peakDown = max(w.peakDown, len(down))
	if w.sc.maxDown > 0 && len(down) > w.sc.maxDown {
		sort.Strings(down)
		w.violate("%d pods down at once (at most %d may be): %v", len(down), w.sc.maxDown, down)
	}
}

// canary judges an event on an object the set does not own: deleted, or written by the controller (its
// field manager, "ordinal", in managedFields; kwok and the cluster's own controllers may write to it).
func (w *invariantWatch) canary(o metav1.Object, deleted bool) {
	kind := fmt.Sprintf("%T", o)
	if deleted {
		w.violate("%s %s, which the set does not own, was deleted", kind, o.GetName())
		return
	}
	for _, m := range o.GetManagedFields() {
		if m.Manager == controllerFieldManager {
			w.violate("%s %s, which the set does not own, was written by the controller (%s at %s)", kind, o.GetName(), m.Operation, m.Time)
		}
	}
}

// controllerFieldManager is the field manager of `ordinal controller`'s writes (its user agent's first part).
const controllerFieldManager = "ordinal"

func (w *invariantWatch) onClaim(c *corev1.PersistentVolumeClaim, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.canaries["PersistentVolumeClaim/"+c.Name] {
		w.canary(c, deleted)
		return
	}
	if !deleted {
		return
	}
	o := podOrdinal(c.Name)
	allowed := w.sc.scaledDelete && w.scaledDown && o >= int(w.sc.target) && c.Name == fmt.Sprintf("data-%s-%d", chaosSet, o)
	if !allowed {
		w.violate("claim %s deleted; the retention policy keeps it", c.Name)
	}
	w.claimsGone = append(w.claimsGone, c.Name)
}

func (w *invariantWatch) onRevision(r *appsv1.ControllerRevision, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.canaries["ControllerRevision/"+r.Name] {
		w.canary(r, deleted)
	}
}

// informer starts an informer on one resource of ns whose handler gets every add, update and delete.
func informer[T runtime.Object](t *testing.T, ctx context.Context, obj T, list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	wat func(context.Context, metav1.ListOptions) (watch.Interface, error), on func(T, bool)) {
	t.Helper()
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: &cache.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: wat},
		ObjectType:    obj,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { on(o.(T), false) },
			UpdateFunc: func(old, o any) { on(o.(T), false) },
			DeleteFunc: func(o any) {
				if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
					o = d.Obj
				}
				if v, ok := o.(T); ok {
					on(v, true)
				}
			},
		},
	})
	ictx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go ctrl.RunWithContext(ictx)
	if !cache.WaitForCacheSync(ictx.Done(), ctrl.HasSynced) {
		t.Fatalf("invariant watch: informer did not sync")
	}
}

// watchInvariants creates the canaries (objects that look like the set's but are not its own) and starts
// the independent watchers. Call before the set exists.
func watchInvariants(t *testing.T, ctx context.Context, ns string, sc chaosScenario) *invariantWatch {
	t.Helper()
	w := &invariantWatch{sc: sc, canaries: map[string]bool{}, down: map[string]bool{}, terminating: map[string]bool{}}
	// the canaries' owner: a real object, so that the garbage collector leaves them alone
	owner, err := cfg.kc.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other-owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	ref := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &yes}}
	setLabels := map[string]string{"app": chaosSet}
	// a pod with the set's labels and name pattern, controlled by another owner; no scheduler binds it
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: chaosSet + "-9", Labels: setLabels, OwnerReferences: ref},
		Spec: corev1.PodSpec{SchedulerName: "e2e-no-scheduler", Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}
	if _, err := cfg.kc.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// a claim with the name a template would give ordinal 9, owned by no one
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-" + chaosSet + "-9", Labels: setLabels},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: mustQuantity("1Mi")}}}}
	if _, err := cfg.kc.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// a revision with the set's labels, controlled by another owner
	rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: chaosSet + "-other", Labels: setLabels, OwnerReferences: ref},
		Data: runtime.RawExtension{Raw: []byte(`{}`)}, Revision: 1}
	if _, err := cfg.kc.AppsV1().ControllerRevisions(ns).Create(ctx, rev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	core, apps := cfg.kc.CoreV1(), cfg.kc.AppsV1()
	informer(t, ctx, &corev1.Pod{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return core.Pods(ns).List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return core.Pods(ns).Watch(ctx, o)
		},
		func(p *corev1.Pod, del bool) { w.onPod(p, del) })
	informer(t, ctx, &corev1.PersistentVolumeClaim{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return core.PersistentVolumeClaims(ns).List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return core.PersistentVolumeClaims(ns).Watch(ctx, o)
		},
		func(c *corev1.PersistentVolumeClaim, del bool) { w.onClaim(c, del) })
	informer(t, ctx, &appsv1.ControllerRevision{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return apps.ControllerRevisions(ns).List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return apps.ControllerRevisions(ns).Watch(ctx, o)
		},
		func(r *appsv1.ControllerRevision, del bool) { w.onRevision(r, del) })
	// the canaries' own creation events came with the initial list: only what follows counts
	w.mu.Lock()
	w.canaries["Pod/"+pod.Name], w.canaries["PersistentVolumeClaim/"+claim.Name], w.canaries["ControllerRevision/"+rev.Name] = true, true, true
	delete(w.down, pod.Name)
	delete(w.terminating, pod.Name)
	w.violations = nil
	w.mu.Unlock()
	return w
}

// markChanged is called just before the change is requested: from then on the bound on pods down
// applies, and for a scale-down, the retention policy may delete claims.
func (w *invariantWatch) markChanged() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.changed = true
	w.scaledDown = w.sc.target < w.sc.replicas
}

func (w *invariantWatch) result() ([]string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.violations), w.peakDown
}

// ---------------------------------------------------------------------------------------------- final state

// finalState is what must not depend on the faults: the set's pods, revisions and claims, and its status.
type finalState struct {
	Status    string
	Pods      []string
	Revisions []string
	Claims    []string
}

func (s finalState) String() string {
	return fmt.Sprintf("status: %s\n  pods: %v\n  revisions: %v\n  claims: %v", s.Status, s.Pods, s.Revisions, s.Claims)
}

func (s finalState) equal(o finalState) bool {
	return s.Status == o.Status && slices.Equal(s.Pods, o.Pods) && slices.Equal(s.Revisions, o.Revisions) && slices.Equal(s.Claims, o.Claims)
}

func ownerKinds(refs []metav1.OwnerReference) string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Kind+"/"+r.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func readFinalState(t *testing.T, ctx context.Context, kind chaosKind, ns string) finalState {
	t.Helper()
	var fs finalState
	s, err := getChaosSet(ctx, kind, ns)
	if err != nil {
		t.Fatal(err)
	}
	st := s.Status
	fs.Status = fmt.Sprintf("replicas=%d ready=%d available=%d current=%d updated=%d currentRevision=%s updateRevision=%s collisions=%d observed=%v",
		st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas, st.CurrentRevision,
		st.UpdateRevision, ptrVal(st.CollisionCount), st.ObservedGeneration == s.Generation)
	pods, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		fs.Pods = append(fs.Pods, fmt.Sprintf("%s rev=%s ready=%v owner=%s", p.Name, podRevision(&p), podReady(&p), ownerKinds(p.OwnerReferences)))
	}
	revs, err := cfg.kc.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range revs.Items {
		fs.Revisions = append(fs.Revisions, fmt.Sprintf("%s revision=%d owner=%s", r.Name, r.Revision, ownerKinds(r.OwnerReferences)))
	}
	claims, err := cfg.kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims.Items {
		fs.Claims = append(fs.Claims, fmt.Sprintf("%s owner=%s", c.Name, ownerKinds(c.OwnerReferences)))
	}
	sort.Strings(fs.Pods)
	sort.Strings(fs.Revisions)
	sort.Strings(fs.Claims)
	return fs
}

func ptrVal[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// ---------------------------------------------------------------------------------------------- one run

// etcdGate keeps etcd restarts (write lock, one at a time) out of the stretches where a run's test code
// itself calls kube-apiserver and cannot retry (read lock: setting up, changing the set, reading the final
// state): the restarts are faults for the controllers, not for the test. Everything else the test does
// (its informers, its waits on watches) rides a restart out. Never nest withAPI.
var etcdGate sync.RWMutex

func withAPI(f func()) {
	etcdGate.RLock()
	defer etcdGate.RUnlock()
	f()
}

func restartEtcd(t *testing.T) error {
	etcdGate.Lock()
	defer etcdGate.Unlock()
	out, err := exec.Command(filepath.Join(cfg.root, "scripts", "cluster-etcd.sh"), "restart", "1").CombinedOutput()
	if err != nil {
		return fmt.Errorf("scripts/cluster-etcd.sh restart: %v\n%s", err, out)
	}
	t.Logf("etcd restarted:\n%s", strings.TrimSpace(string(out)))
	return nil
}

// customSection appends a custom section to a module: other bytes (another digest, so a swap), same code.
func customSection(code []byte, payload string) []byte {
	name := "ordinal.e2e.chaos"
	body := append([]byte{byte(len(name))}, name...)
	body = append(body, payload...)
	out := append(slices.Clone(code), 0)
	for n := len(body); ; { // LEB128 size
		b := byte(n & 0x7f)
		n >>= 7
		if n != 0 {
			out = append(out, b|0x80)
			continue
		}
		out = append(out, b)
		break
	}
	return append(out, body...)
}

// chaosRun runs one scenario; with faults, under the seed's plan. It returns the final state.
func chaosRun(t *testing.T, plan chaosPlan, faulted bool, res *chaosResult) finalState {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	t.Cleanup(cancel)
	sc := plan.scenario
	if sc.migrate || sc.webhook {
		requireHookEnv(t) // the kubectl plugin, the webhook's certificates
	}
	var ns string
	var w *invariantWatch
	withAPI(func() {
		ns = newNamespace(t, ctx)
		w = watchInvariants(t, ctx, ns, sc)
	})
	t.Cleanup(func() { res.violations, res.peakDown = w.result() })

	dir := filepath.Join(cfg.artifacts, dirSanitize.ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := embeddedModule(t)
	modPath := moduleFile(t, base)
	extra := append([]string{"--module", modPath, "--module-poll-interval", "200ms"}, policyControllerArgs(sc)...)
	if sc.supplied {
		extra = append(extra, "--module-configmap", ns+"/modules")
	}
	if faulted {
		t.Logf("seed %d: %s; faults: %s; kills at %v; etcd restart at %v", plan.seed, sc.name, plan.rates, plan.kills, plan.etcd)
		proxy := startFaultProxy(t, plan.seed, plan.rates, res.faults)
		extra = append(extra, "--kubeconfig", proxy.kubeconfig(t, dir))
	}
	n := 0
	start := func() *controllerProc {
		n++
		c := startController(t, ns, ctrlOpts{identity: fmt.Sprintf("chaos-%d", n), crdOnly: sc.crd, extraArgs: extra})
		c.waitReady(ctx)
		return c
	}
	c := start()
	var wh *webhookProc
	if sc.webhook {
		// its reads go through a fault proxy of their own (other draws of the same rates)
		args := []string{"--deny-pvc-deletion", "--failure-policy=closed"}
		if faulted {
			proxy := startFaultProxy(t, plan.seed+1<<32, plan.rates, res.faults)
			whDir := filepath.Join(dir, "webhook")
			if err := os.MkdirAll(whDir, 0o755); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--kubeconfig", proxy.kubeconfig(t, whDir))
		}
		wh = startWebhookProc(t, ns, args...)
	}
	var swapped []byte
	if sc.supplied {
		suppliedModules(t, ctx, ns, oneAtATimeModule(t))
		swapped = customSection(base, strconv.FormatInt(plan.seed, 10))
	}

	kind := kindApps
	if sc.crd {
		kind = kindOrdinal
	}
	set := newSet(chaosSet, sc.replicas, sc.opts...)
	set.Annotations = maps.Clone(sc.annotations)
	maps.Copy(set.Annotations, policyScenarioAnnotations(sc, time.Now()))
	withAPI(func() {
		if sc.crd {
			createOrdinalSet(t, ctx, chaosDynamic(t), ns, set)
		} else {
			createSet(t, ctx, ns, set)
		}
	})
	first := waitChaosSet(t, ctx, kind, ns, "created and rolled out", 3*time.Minute, rolledOut(sc.replicas))
	rev1 := first.Status.UpdateRevision
	var firstPods map[string]types.UID
	if hasDeadline(sc) {
		firstPods = followDeadlineSet(t, ctx, ns, w, first)
	}
	var inPlacePods map[string]types.UID
	if sc.inPlace {
		inPlacePods = holdInPlace(t, ctx, ns, w, sc)
	}
	if sc.policy == policyRestarted {
		labelPrimary(t, ctx, ns)
	}
	if sc.policy != policyNone {
		followPolicySet(t, ctx, ns, w)
	}

	// The change runs; meanwhile the schedule: SIGKILLs and the etcd restart at their times, and the
	// scenario's steps (each once its condition holds, in order). All on this goroutine.
	rolloutBegun := func() bool {
		p, err := cfg.kc.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("%s-%d", chaosSet, sc.replicas-1), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true
		}
		return err == nil && (p.DeletionTimestamp != nil || podRevision(p) != rev1) // other errors: ask again
	}
	kill := func() {
		held := w.beforeKill(t, c)
		c.kill()
		res.faults.add(faultKill, 1)
		c = start()
		w.afterKill(c, held)
	}
	var steps []chaosStep
	if sc.migrate {
		backups := filepath.Join(dir, "migrate-backups")
		steps = append(steps, chaosStep{desc: "migrate --to ordinal", do: func() {
			w.markChanged() // a migration takes no pod down: the bound applies from here
			res.attempts += migrateSet(t, ctx, ns, "ordinal", backups)
			res.migrations++
			kind = kindOrdinal
		}})
	}
	steps = append(steps, chaosStep{desc: "the change", do: func() {
		w.markChanged()
		var patch string
		switch {
		case sc.inPlace:
			withAPI(func() { patchSetStrategic(t, ctx, ns, inPlaceChange) })
			return
		case sc.broken:
			patch = fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:"v2",%q:"true"}}}}}`, annVersion, annNeverReady)
		case sc.bump:
			patch = setVersion("v2")
		case sc.target != sc.replicas:
			patch = fmt.Sprintf(`{"spec":{"replicas":%d}}`, sc.target)
		}
		if sc.pause || sc.reserve != "" || sc.policy != policyNone {
			var m map[string]any
			_ = json.Unmarshal([]byte(patch), &m)
			ann := map[string]any{}
			if sc.pause {
				ann["ordinal.dev/paused"] = "true"
			}
			if sc.reserve != "" {
				ann["ordinal.dev/reserve-ordinals"] = sc.reserve
			}
			if len(ann) > 0 {
				m["metadata"] = map[string]any{"annotations": ann}
			}
			policyChange(sc, m)
			b, _ := json.Marshal(m)
			patch = string(b)
		}
		withAPI(func() { patchChaosSet(t, ctx, kind, ns, patch) })
	}})
	if sc.pause {
		// paused: once a sync saw the edit (its status: a new revision, nothing updated) no pod changes,
		// through a SIGKILL and the restarted controller's first sync of the set
		paused := func() bool {
			s, err := getChaosSet(ctx, kind, ns)
			return err == nil && s.Status.ObservedGeneration == s.Generation && s.Status.UpdateRevision != rev1 && s.Status.UpdatedReplicas == 0
		}
		steps = append(steps, chaosStep{desc: "paused", when: paused, do: func() {
			if faulted {
				w.freeze("the set is paused")
				kill()
				c.waitLog(ctx, "the restarted controller's sync of the paused set", 2*time.Minute, `"set":"`+ns+`/`+chaosSet+`"`, `"result"`)
				w.thaw()
			}
			withAPI(func() { patchChaosSet(t, ctx, kind, ns, `{"metadata":{"annotations":{"ordinal.dev/paused":null}}}`) })
		}})
	}
	if sc.broken && faulted {
		// a SIGKILL once the status records the rollback (it is written before the rollback's patch): the
		// restarted controller goes on from what the set records (its RolledBack condition: the broken pod
		// is replaced once not Ready for the deadline), the patch perhaps not yet written
		rolledBack := func() bool {
			s, err := getChaosSet(ctx, kind, ns)
			return err == nil && setCondition(s, "RolledBack") != nil
		}
		steps = append(steps, chaosStep{desc: "rolled back", when: rolledBack, do: kill})
	}
	if sc.inPlace && faulted {
		// a SIGKILL once the top pod is at the update revision (its in-place update committed, its restart
		// perhaps not yet seen): the restarted controller must neither update it again nor restart it twice
		steps = append(steps, chaosStep{desc: "the first pod moved in place", when: rolloutBegun, do: kill})
	}
	switch {
	case sc.swap:
		swapped = customSection(base, strconv.FormatInt(plan.seed, 10))
		steps = append(steps, chaosStep{desc: "the hot swap", when: rolloutBegun, do: func() { replaceModule(t, modPath, swapped) }})
	case sc.supplied:
		steps = append(steps, chaosStep{desc: "the supplied module's swap", when: rolloutBegun, do: func() { swapSuppliedModule(t, ctx, ns, swapped) }})
	case sc.migrate:
		steps = append(steps, chaosStep{desc: "migrate --to apps mid-rollout", when: rolloutBegun, do: func() {
			res.attempts += migrateSet(t, ctx, ns, "apps", filepath.Join(dir, "migrate-backups"), "--allow-rollout")
			res.migrations++
			kind = kindApps
		}})
	case sc.webhook:
		for i := range 3 {
			steps = append(steps, chaosStep{desc: fmt.Sprintf("review %d", i+1), when: func() bool { return i == 0 || rolloutBegun() }, do: func() {
				resp, took, err := reviewScaleDown(t, ctx, wh, ns, i+1)
				w.onReview(i+1, resp, took, err)
			}})
		}
	}
	faultsLeft := 0 // the seed's SIGKILLs and etcd restart not yet made
	steps = append(steps, policySteps(t, ctx, ns, sc, faulted, w, rev1, func() bool { return faultsLeft == 0 }, kill,
		func() *controllerProc { return c })...)
	t0 := time.Now()
	type event struct {
		at   time.Duration
		kill bool
	}
	var events []event
	if faulted {
		for _, k := range plan.kills {
			events = append(events, event{at: k, kill: true})
		}
		if plan.etcd > 0 {
			events = append(events, event{at: plan.etcd})
		}
		slices.SortFunc(events, func(a, b event) int { return int(a.at - b.at) })
	}
	faultsLeft = len(events)
	stepDeadline := time.Now().Add(3 * time.Minute)
	for len(events) > 0 || len(steps) > 0 {
		if len(steps) > 0 && (steps[0].when == nil || steps[0].when()) {
			steps[0].do()
			steps = steps[1:]
			stepDeadline = time.Now().Add(3 * time.Minute)
			continue
		}
		if len(steps) > 0 && time.Now().After(stepDeadline) {
			t.Fatalf("%s: its condition did not hold within 3m", steps[0].desc)
		}
		if len(events) == 0 || time.Now().Before(t0.Add(events[0].at)) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		e := events[0]
		events = events[1:]
		if e.kill {
			kill()
		} else {
			if err := restartEtcd(t); err != nil {
				t.Fatal(err)
			}
			res.faults.add(faultEtcdRestart, 1)
		}
		faultsLeft = len(events)
	}
	if sc.broken {
		// the broken revision's pods never become Ready: what rolls out is the rollback (a spec write after
		// the change's) to the first revision
		waitChaosSet(t, ctx, kind, ns, "the broken change rolled back", 4*time.Minute, func(s *appsv1.StatefulSet) bool {
			return s.Generation > first.Generation+1 && rolledOut(sc.target)(s) && s.Status.UpdateRevision == rev1
		})
	}
	s := waitChaosSet(t, ctx, kind, ns, "the change rolled out", 4*time.Minute, rolledOut(sc.target))
	if sc.bump && !sc.broken && s.Status.UpdateRevision == rev1 {
		t.Errorf("the template change made no new revision")
	}
	switch {
	case sc.swap:
		c.waitModule(t, "the swapped module active", 2*time.Minute, func(st moduleStatus) bool { return st.Active.Digest == digestOf(swapped) })
	case sc.supplied:
		c.waitLog(ctx, "a sync of the set on the swapped supplied module", 2*time.Minute, `"set":"`+ns+`/`+chaosSet+`"`, `"module":"`+strings.TrimPrefix(digestOf(swapped), "sha256:")[:12]+`"`) // the log's short digest
	}
	res.reviews = w.reviewSummary()
	// pods, claims and revisions settle (the garbage collector deletes a scaled-down claim after its pod)
	var fs finalState
	waitFor(t, ctx, "pods and claims to settle", 2*time.Minute, func() bool {
		withAPI(func() { fs = readFinalState(t, ctx, kind, ns) })
		want := int(sc.target) + 1 // and the canary
		claims := 0
		for _, c := range fs.Claims {
			if !strings.HasPrefix(c, "data-"+chaosSet+"-9 ") {
				claims++
			}
		}
		wantClaims := 0
		if hasClaims(sc) {
			wantClaims = int(sc.replicas)
			if sc.scaledDelete {
				wantClaims = int(sc.target)
			}
			wantClaims += len(reservedOrdinals(sc)) // the reserved ordinals' claims are kept, their pods made past the top

		}
		ready := true
		for _, p := range fs.Pods {
			if !strings.HasPrefix(p, chaosSet+"-9 ") && !strings.Contains(p, "ready=true") {
				ready = false
			}
		}
		// and every revision of the set's adopted (a migration orphans them; the next sync adopts them)
		adopted := !slices.ContainsFunc(fs.Revisions, func(r string) bool {
			return !strings.HasPrefix(r, chaosSet+"-other ") && strings.HasSuffix(r, " owner=")
		})
		return len(fs.Pods) == want && claims == wantClaims && ready && adopted
	})
	if hasDeadline(sc) {
		checkProgressDeadline(t, ctx, ns, sc, first, firstPods)
	}
	if sc.inPlace {
		checkInPlace(t, ctx, ns, inPlacePods)
	}
	if sc.policy != policyNone {
		checkPolicy(t, ctx, ns, faulted, w, c, res)
	}
	return fs
}

func hasClaims(sc chaosScenario) bool {
	s := newSet(chaosSet, sc.replicas, sc.opts...)
	return len(s.Spec.VolumeClaimTemplates) > 0
}

// waitFor polls cond every 200 ms until it holds, failing the test after timeout.
func waitFor(t *testing.T, ctx context.Context, desc string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("timed out after %s waiting for %s", timeout, desc)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// ---------------------------------------------------------------------------------------------- the test

func chaosSeeds(t *testing.T) []int64 {
	return seedsFromEnv(t, "ORDINAL_CHAOS", len(chaosScenarios)) // one per scenario: each run is short
}

// seedsFromEnv reads a seeded test's seeds: PREFIX_SEEDS=3,9 replays those, else PREFIX_RUNS (default runs)
// seeds from PREFIX_FIRST_SEED (default 1).
func seedsFromEnv(t *testing.T, prefix string, runs int) []int64 {
	if s := os.Getenv(prefix + "_SEEDS"); s != "" {
		var out []int64
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				t.Fatalf("%s_SEEDS: %q is not a seed", prefix, f)
			}
			out = append(out, v)
		}
		return out
	}
	first := int64(1)
	if s := os.Getenv(prefix + "_RUNS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			t.Fatalf("%s_RUNS: %q is not a count", prefix, s)
		}
		runs = v
	}
	if s := os.Getenv(prefix + "_FIRST_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s_FIRST_SEED: %q is not a seed", prefix, s)
		}
		first = v
	}
	out := make([]int64, runs)
	for i := range out {
		out[i] = first + int64(i)
	}
	return out
}

// TestChaos is not parallel: it runs alone (its etcd restarts would disturb other tests), its runs in
// parallel with each other (up to go test's -parallel).
func TestChaos(t *testing.T) {
	requireController(t)
	seeds := chaosSeeds(t)
	if len(seeds) == 0 {
		t.Skip("ORDINAL_CHAOS_RUNS=0")
	}
	// the fault-free run of each scenario the seeds use
	baselines := map[string]*finalState{}
	t.Run("fault-free", func(t *testing.T) {
		for _, seed := range seeds {
			sc := planFor(seed).scenario
			if baselines[sc.name] != nil {
				continue
			}
			fs := &finalState{}
			baselines[sc.name] = fs
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				res := &chaosResult{faults: &faultCounts{}}
				// registered first, so it runs after chaosRun's cleanups have collected the violations
				t.Cleanup(func() {
					if len(res.violations) > 0 {
						t.Errorf("invariants violated without faults: %v", res.violations)
					}
				})
				*fs = chaosRun(t, chaosPlan{seed: seed, scenario: sc}, false, res)
			})
		}
	})
	if t.Failed() {
		t.Fatalf("a fault-free run failed: no baseline to compare with")
	}

	var mu sync.Mutex
	var results []*chaosResult
	t.Run("faults", func(t *testing.T) {
		for _, seed := range seeds {
			plan := planFor(seed)
			t.Run(fmt.Sprintf("seed-%d-%s", seed, plan.scenario.name), func(t *testing.T) {
				t.Parallel()
				res := &chaosResult{seed: seed, scenario: plan.scenario.name, maxDown: plan.scenario.maxDown, faults: &faultCounts{}}
				mu.Lock()
				results = append(results, res)
				mu.Unlock()
				t.Cleanup(func() {
					res.failed = t.Failed()
					for _, v := range res.violations {
						t.Errorf("invariant violated: %s", v)
					}
					t.Logf("seed %d: faults injected: %s", seed, res.faults)
				})
				fs := chaosRun(t, plan, true, res)
				want := *baselines[plan.scenario.name]
				if res.equal = fs.equal(want); !res.equal {
					t.Errorf("final state differs from the fault-free run:\n got %s\nwant %s", fs, want)
				}
			})
		}
	})
	summary := chaosSummary(results)
	t.Logf("\n%s", summary)
	_ = os.WriteFile(filepath.Join(cfg.artifacts, "chaos-summary.txt"), []byte(summary), 0o644)
	var failing []string
	for _, r := range results {
		if r.failed {
			failing = append(failing, strconv.FormatInt(r.seed, 10))
		}
	}
	_ = os.WriteFile(filepath.Join(cfg.artifacts, "chaos-failing-seeds.txt"), []byte(strings.Join(failing, ",")+"\n"), 0o644)
	if len(failing) > 0 {
		t.Errorf("failing seeds: %s (replay: make chaos CHAOS_SEEDS=%s)", strings.Join(failing, ","), strings.Join(failing, ","))
	}
}

// chaosSummary is the table `make chaos` prints.
func chaosSummary(results []*chaosResult) string {
	sort.Slice(results, func(i, j int) bool { return results[i].seed < results[j].seed })
	var b strings.Builder
	total := map[faultKind]int{}
	runsWith := map[faultKind]int{}
	violations, equal, failed := 0, 0, 0
	type row struct{ runs, failed, peakDown, maxDown int }
	reviews := map[reviewOutcome]int{}
	migrations, attempts := 0, 0
	byScenario := map[string]*row{}
	for _, r := range results {
		for _, k := range allFaultKinds {
			if n := r.faults.get(k); n > 0 {
				total[k] += n
				runsWith[k]++
			}
		}
		violations += len(r.violations)
		for k, v := range r.reviews {
			reviews[k] += v
		}
		migrations, attempts = migrations+r.migrations, attempts+r.attempts
		if r.equal {
			equal++
		}
		if r.failed {
			failed++
		}
		if byScenario[r.scenario] == nil {
			byScenario[r.scenario] = &row{}
		}
		byScenario[r.scenario].runs++
		byScenario[r.scenario].peakDown = max(byScenario[r.scenario].peakDown, r.peakDown)
		byScenario[r.scenario].maxDown = r.maxDown
		if r.failed {
			byScenario[r.scenario].failed++
		}
	}
	fmt.Fprintf(&b, "chaos: %d runs, %d failed, %d invariant violations, %d/%d final states equal to the fault-free run\n\n",
		len(results), failed, violations, equal, len(results))
	fmt.Fprintf(&b, "%-22s %10s %14s\n", "fault", "injected", "runs with it")
	for _, k := range allFaultKinds {
		fmt.Fprintf(&b, "%-22s %10d %14d\n", k, total[k], runsWith[k])
	}
	fmt.Fprintf(&b, "\n%-22s %10s %14s %20s\n", "scenario", "runs", "failed", "most pods down")
	var names []string
	for n := range byScenario {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := byScenario[n]
		bound := "unbounded"
		if r.maxDown > 0 {
			bound = fmt.Sprintf("bound %d", r.maxDown)
		}
		fmt.Fprintf(&b, "%-22s %10d %14d %20s\n", n, r.runs, r.failed, fmt.Sprintf("%d (%s)", r.peakDown, bound))
	}
	if migrations > 0 {
		fmt.Fprintf(&b, "\nmigrations: %d, in %d attempts (a set changed after the checks: nothing deleted, run again)\n", migrations, attempts)
	}
	if len(reviews) > 0 {
		fmt.Fprintf(&b, "\n%-22s %10s\n", "webhook review", "reviews")
		for _, o := range sortedOutcomes(reviews) {
			fmt.Fprintf(&b, "%-22s %10d\n", o, reviews[o])
		}
	}
	b.WriteString(policySummary(results))
	return b.String()
}

// The invariant watch itself, fed made-up events (no cluster writes): each invariant must be able to fail.
func TestChaosInvariantsCatchViolations(t *testing.T) {
	t.Parallel()
	pod := func(name string, ready, terminating bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if terminating {
			now := metav1.Now()
			p.DeletionTimestamp = &now
		}
		return p
	}
	claim := func(name string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	newWatch := func(sc chaosScenario) *invariantWatch {
		w := &invariantWatch{sc: sc, canaries: map[string]bool{"Pod/chaos-9": true, "PersistentVolumeClaim/data-chaos-9": true,
			"ControllerRevision/chaos-other": true}, down: map[string]bool{}, terminating: map[string]bool{}}
		for i := range int(sc.replicas) {
			w.onPod(pod(fmt.Sprintf("chaos-%d", i), true, false), false)
		}
		return w
	}
	ordered, parallelSet, scaleDelete := chaosScenarios[0], chaosScenarios[1], chaosScenarios[3]
	scenario := func(name string) chaosScenario {
		i := slices.IndexFunc(chaosScenarios, func(sc chaosScenario) bool { return sc.name == name })
		if i < 0 {
			t.Fatalf("no scenario %s", name)
		}
		return chaosScenarios[i]
	}
	ext, hook, rollback := scenario("extensions"), scenario("webhook"), scenario("deadline-rollback")
	// the set with a progress deadline as onSet sees it: rolled out at revision chaos-1 (generation 1)
	follow := func(w *invariantWatch) {
		w.deadline = deadlineWatch{rev1: "chaos-1", generation: 1, rolledBack: map[string]bool{}, reported: map[string]bool{}}
	}
	set := func(generation int64, conds ...string) *appsv1.StatefulSet { // conds: type, status, reason, message, ...
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: chaosSet, Generation: generation}}
		for i := 0; i+3 < len(conds); i += 4 {
			s.Status.Conditions = append(s.Status.Conditions, appsv1.StatefulSetCondition{Type: appsv1.StatefulSetConditionType(conds[i]),
				Status: corev1.ConditionStatus(conds[i+1]), Reason: conds[i+2], Message: conds[i+3]})
		}
		return s
	}
	const rolledBack21 = `StatefulSet "chaos" is rolled back to revision chaos-1 from revision chaos-2: no progress for 3s.`
	inPlaceSet := scenario("in-place-ordered")
	trap, restart := scenario("policy-trap"), scenario("policy-restart")
	// the watch of a policy scenario's set, its pods before the change as newWatch made them (no uids)
	followPolicy := func(w *invariantWatch) {
		w.policy = newPolicyWatch(w.sc.policy)
		for n := range w.down {
			w.onPolicyPod(pod(n, true, false), false)
		}
	}
	// s with the host's record of handoff's hold of name's delete since then
	heldSet := func(s *appsv1.StatefulSet, name, since string) *appsv1.StatefulSet {
		b, _ := json.Marshal(map[string][]abi.HeldWrite{"handoff": {{Verb: abi.VerbDelete, Kind: abi.KindPod, Name: name, Since: since}}})
		s.Annotations = map[string]string{policy.AnnotationHeld: string(b)}
		return s
	}
	// the pods before an in-place change, as holdInPlace reads them (newWatch's pods have no uids)
	hold := func(w *invariantWatch) {
		w.inPlace = inPlaceWatch{pods: map[string]types.UID{}, reported: map[string]bool{}}
		for n := range w.down {
			w.inPlace.pods[n] = ""
		}
	}
	restarted := func(p *corev1.Pod, n int32) *corev1.Pod {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: inPlaceImage, RestartCount: n}}
		return p
	}
	denied := &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "ordinal: edit of StatefulSet chaos denied by --deny-pvc-deletion: ..."}}
	closed := &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "ordinal: no rollout preview (...); the webhook runs with --failure-policy=closed"}}
	cases := []struct {
		name  string
		sc    chaosScenario
		steps func(w *invariantWatch)
		want  string // a violation containing this; "" for none
	}{
		{"one pod down under OrderedReady", ordered, func(w *invariantWatch) {
			w.onPod(pod("chaos-2", true, true), false)
			w.onPod(pod("chaos-2", true, true), true)
			w.onPod(pod("chaos-2", false, false), false)
			w.onPod(pod("chaos-2", true, false), false)
			w.onPod(pod("chaos-1", true, true), false)
		}, ""},
		{"two pods down under OrderedReady", ordered, func(w *invariantWatch) {
			w.onPod(pod("chaos-2", true, true), false)
			w.onPod(pod("chaos-1", false, false), false)
		}, "2 pods down at once (at most 1 may be): [chaos-1 chaos-2]"},
		{"unready before the change is not counted", ordered, func(w *invariantWatch) {}, ""},
		{"three down under maxUnavailable 2", parallelSet, func(w *invariantWatch) {
			w.onPod(pod("chaos-3", true, true), false)
			w.onPod(pod("chaos-2", true, true), false)
			w.onPod(pod("chaos-0", false, false), false)
		}, "3 pods down at once (at most 2 may be)"},
		{"an ordinal spelled twice", parallelSet, func(w *invariantWatch) {
			w.onPod(pod("chaos-01", true, false), false)
		}, "ordinal 1 has 2 pods at once: [chaos-01 chaos-1]"},
		{"a retained claim deleted", ordered, func(w *invariantWatch) {
			w.onClaim(claim("data-chaos-0"), true)
		}, "claim data-chaos-0 deleted"},
		{"a scaled-down claim deleted under whenScaled=Delete", scaleDelete, func(w *invariantWatch) {
			w.onClaim(claim("data-chaos-3"), true)
		}, ""},
		{"the kept claim deleted under whenScaled=Delete", scaleDelete, func(w *invariantWatch) {
			w.onClaim(claim("data-chaos-0"), true)
		}, "claim data-chaos-0 deleted"},
		{"a canary claim deleted", scaleDelete, func(w *invariantWatch) {
			w.onClaim(claim("data-chaos-9"), true)
		}, "data-chaos-9, which the set does not own, was deleted"},
		{"a canary pod written by the controller", ordered, func(w *invariantWatch) {
			p := pod("chaos-9", false, false)
			p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-scheduler"}, {Manager: controllerFieldManager, Operation: metav1.ManagedFieldsOperationUpdate}}
			w.onPod(p, false)
		}, "chaos-9, which the set does not own, was written by the controller"},
		{"a canary revision deleted", ordered, func(w *invariantWatch) {
			w.onRevision(&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "chaos-other"}}, true)
		}, "chaos-other, which the set does not own, was deleted"},
		{"a paused set's pods left alone, then rolled", ext, func(w *invariantWatch) {
			w.freeze("the set is paused")
			w.onPod(pod("chaos-2", false, false), false) // a status change: not a write of the controller's
			w.thaw()
			w.onPod(pod("chaos-2", false, true), false)
			w.onPod(pod("chaos-2", false, true), true)
			w.onPod(pod("chaos-3", true, false), false)
		}, ""},
		{"a pod marked for deletion while paused", ext, func(w *invariantWatch) {
			w.freeze("the set is paused")
			w.onPod(pod("chaos-2", true, true), false)
		}, "pod chaos-2 marked for deletion while the set is paused"},
		{"a pod deleted while paused", ext, func(w *invariantWatch) {
			w.freeze("the set is paused")
			w.onPod(pod("chaos-0", true, false), true)
		}, "pod chaos-0 deleted while the set is paused"},
		{"a pod created while paused", ext, func(w *invariantWatch) {
			w.freeze("the set is paused")
			w.onPod(pod("chaos-3", false, false), false)
		}, "pod chaos-3 created while the set is paused"},
		{"a reserved ordinal's pod replaced", ext, func(w *invariantWatch) {
			w.onPod(pod("chaos-1", true, true), false)
			w.onPod(pod("chaos-1", true, true), true)
			w.onPod(pod("chaos-1", false, false), false)
		}, "pod chaos-1 created at a reserved ordinal (ordinal.dev/reserve-ordinals: 1)"},
		{"reviews denied, by the policy or failing closed", hook, func(w *invariantWatch) {
			w.onReview(1, denied, time.Second, nil)
			w.onReview(2, closed, time.Second, nil)
		}, ""},
		{"a review of a claim-deleting scale-down allowed", hook, func(w *invariantWatch) {
			w.onReview(1, &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"no rollout preview (...); the edit was not checked"}}, time.Second, nil)
		}, "review 1 of a scale-down deleting claims was allowed"},
		{"a healthy rollout with a deadline, progressing then complete", ext, func(w *invariantWatch) {
			follow(w)
			w.onSet(set(2, "Progressing", "Unknown", "RolloutPaused", "paused", "Available", "True", "MinimumReplicasAvailable", "."), false)
			w.onSet(set(2, "Progressing", "True", "NewRevisionProgressing", "progressing", "Available", "False", "MinimumReplicasUnavailable", "."), false)
			w.onSet(set(2, "Progressing", "True", "RolloutComplete", "done"), false)
		}, ""},
		{"a healthy rollout reported past its deadline", ext, func(w *invariantWatch) {
			follow(w)
			w.onSet(set(2, "Progressing", "False", "ProgressDeadlineExceeded", "timed out"), false)
		}, "Progressing False ProgressDeadlineExceeded"},
		{"a healthy rollout rolled back", ext, func(w *invariantWatch) {
			follow(w)
			w.onSet(set(3, "RolledBack", "True", "ProgressDeadlineExceeded", rolledBack21), false)
		}, "a healthy rollout rolled back"},
		{"a broken rollout rolled back once", rollback, func(w *invariantWatch) {
			follow(w)
			w.onSet(set(2, "Progressing", "False", "ProgressDeadlineExceeded", "timed out", "RolledBack", "True", "ProgressDeadlineExceeded", rolledBack21), false)
			w.onSet(set(3, "Progressing", "True", "RolloutComplete", "done", "RolledBack", "True", "ProgressDeadlineExceeded", rolledBack21), false)
		}, ""},
		{"a broken rollout rolled back twice", rollback, func(w *invariantWatch) {
			follow(w)
			w.onSet(set(3, "RolledBack", "True", "ProgressDeadlineExceeded", rolledBack21), false)
			w.onSet(set(3, "RolledBack", "True", "ProgressDeadlineExceeded", strings.Replace(rolledBack21, "chaos-2", "chaos-3", 1)), false)
		}, "rolled back more than once"},
		{"the first revision's rollout rolled back", rollback, func(w *invariantWatch) {
			follow(w)
			w.onSet(set(3, "RolledBack", "True", "ProgressDeadlineExceeded", `StatefulSet "chaos" is rolled back to revision chaos-2 from revision chaos-1: no progress for 3s.`), false)
		}, "rolled back elsewhere than to the first revision chaos-1"},
		{"the spec written after the rollback", rollback, func(w *invariantWatch) {
			follow(w)
			w.onSet(set(4), false)
		}, "the set's spec written 3 times since its first rollout (generation 4), more than the change and its rollback"},
		{"pods moved in place, each restarted once", inPlaceSet, func(w *invariantWatch) {
			hold(w)
			for _, n := range []string{"chaos-2", "chaos-1", "chaos-0"} {
				w.onPod(restarted(pod(n, true, false), 0), false) // its update: image, revision, record
				w.onPod(restarted(pod(n, false, false), 1), false)
				w.onPod(restarted(pod(n, true, false), 1), false)
			}
		}, ""},
		{"a pod deleted during an in-place rollout", inPlaceSet, func(w *invariantWatch) {
			hold(w)
			w.onPod(pod("chaos-2", true, false), true)
		}, "pod chaos-2 (uid ) deleted during an in-place rollout"},
		{"a pod marked for deletion during an in-place rollout", inPlaceSet, func(w *invariantWatch) {
			hold(w)
			w.onPod(pod("chaos-1", true, true), false)
		}, "pod chaos-1 (uid ) marked for deletion during an in-place rollout"},
		{"a pod recreated during an in-place rollout", inPlaceSet, func(w *invariantWatch) {
			hold(w)
			p := pod("chaos-0", false, false)
			p.UID = "other"
			w.onPod(p, false)
		}, `pod chaos-0 created (uid other; before the change: "")`},
		{"a pod created during an in-place rollout", inPlaceSet, func(w *invariantWatch) {
			hold(w)
			w.onPod(pod("chaos-3", false, false), false)
		}, "pod chaos-3 created"},
		{"a container restarted twice by an in-place rollout", inPlaceSet, func(w *invariantWatch) {
			hold(w)
			w.onPod(restarted(pod("chaos-2", false, false), 1), false)
			w.onPod(restarted(pod("chaos-2", false, false), 2), false)
		}, "pod chaos-2: container app restarted 2 times"},
		{"a failing policy's set says it holds something", trap, func(w *invariantWatch) {
			followPolicy(w)
			w.onPolicySet(set(2, "PolicyHold", "True", "Whatever", "policy bad holds delete Pod chaos-2: ..."), false)
		}, "a failing policy held something: PolicyHold True Whatever"},
		{"a failing policy's set records a hold", trap, func(w *invariantWatch) {
			followPolicy(w)
			w.onPolicySet(heldSet(set(2), handoffPrimary, "2026-11-29T09:00:00Z"), false)
		}, "a failing policy held something: ordinal.dev/policy-held"},
		{"a hold kept through a restart, released at its timeout", restart, func(w *invariantWatch) {
			followPolicy(w)
			since := time.Now().UTC().Add(-handoffTimeout - 2*time.Second)
			held := heldSet(set(2, "PolicyHold", "True", "RoleNotHandedOff", "..."), handoffPrimary, since.Format(time.RFC3339Nano))
			w.onPolicySet(held, false)
			w.onPolicySet(held, false) // the restarted controller's status write: the same record
			p := pod(handoffPrimary, true, true)
			p.DeletionTimestamp = &metav1.Time{Time: since.Add(handoffTimeout).Add(time.Second).Truncate(time.Second)}
			w.onPod(p, false)
			w.onPod(p, true)
			w.onPod(pod(handoffPrimary, false, false), false)
			w.onPolicySet(set(2, "PolicyHold", "False", "NothingHeld", "..."), false)
		}, ""},
		{"a hold timed afresh by the restarted controller", restart, func(w *invariantWatch) {
			followPolicy(w)
			w.onPolicySet(heldSet(set(2, "PolicyHold", "True", "RoleNotHandedOff", "..."), handoffPrimary, "2026-11-29T09:00:00.5Z"), false)
			w.onPolicySet(heldSet(set(2, "PolicyHold", "True", "RoleNotHandedOff", "..."), handoffPrimary, "2026-11-29T09:00:07.5Z"), false)
		}, "held since 2026-11-29T09:00:07.5Z, first recorded since 2026-11-29T09:00:00.5Z: the hold was timed afresh"},
		{"a hold off and on again", restart, func(w *invariantWatch) {
			followPolicy(w)
			w.onPolicySet(set(2, "PolicyHold", "True", "RoleNotHandedOff", "..."), false)
			w.onPolicySet(set(2, "PolicyHold", "False", "NothingHeld", "..."), false)
			w.onPolicySet(set(2, "PolicyHold", "True", "RoleNotHandedOff", "..."), false)
		}, "PolicyHold True again (RoleNotHandedOff"},
		{"the primary deleted before its hold's timeout", restart, func(w *invariantWatch) {
			followPolicy(w)
			since := time.Now().UTC()
			w.onPolicySet(heldSet(set(2, "PolicyHold", "True", "RoleNotHandedOff", "..."), handoffPrimary, since.Format(time.RFC3339Nano)), false)
			p := pod(handoffPrimary, true, true)
			p.DeletionTimestamp = &metav1.Time{Time: since.Add(handoffTimeout / 2).Truncate(time.Second)}
			w.onPod(p, false)
		}, "marked for deletion at"},
		{"a pod replaced twice", trap, func(w *invariantWatch) {
			followPolicy(w)
			for _, uid := range []types.UID{"old", "new", "again"} {
				p := pod("chaos-2", true, false)
				p.UID = uid
				w.onPod(p, false)
			}
		}, "pod chaos-2: 3 pods at its ordinal since the change"},
		{"a review unanswered within its timeout", hook, func(w *invariantWatch) {
			w.onReview(2, nil, reviewTimeout, context.DeadlineExceeded)
		}, "review 2 of a scale-down deleting claims: no answer within its timeout of 5s"},
	}
	for _, tc := range cases {
		w := newWatch(tc.sc)
		if tc.name != "unready before the change is not counted" {
			w.markChanged()
		} else {
			w.onPod(pod("chaos-1", false, false), false)
			w.onPod(pod("chaos-2", false, false), false)
		}
		tc.steps(w)
		got, _ := w.result()
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: violations %q, want none", tc.name, got)
		case tc.want != "" && !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }):
			t.Errorf("%s: violations %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}

//go:build e2e

package e2e

// The chaos scenarios for what landed after the first 200-run figure (issue 32, "Also"): an ordinal.dev
// set (CRD mode), `migrate` both ways in the middle of a rollout, the extended module's annotations, a
// supplied module swapped mid-rollout, the webhook behind its own fault proxy, and (since) a broken
// rollout that extension progress-deadline rolls back (deadline-rollback) and image rollouts that extension
// in-place-update makes without deleting a pod (in-place-ordered, in-place-parallel). Each is a chaosScenario
// (chaos_test.go) plus the steps and invariants here: the steps run on chaosRun's schedule, between the
// controller's SIGKILLs and the etcd restart, and the invariants are checked by the same watch.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// chaosKind is the kind a scenario's set is at a moment: apps/v1 or ordinal.dev/v1.
type chaosKind bool

const (
	kindApps    chaosKind = false
	kindOrdinal chaosKind = true
)

func chaosDynamic(t *testing.T) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// getChaosSet reads the set of either kind as apps/v1's type (the same spec and status).
func getChaosSet(ctx context.Context, kind chaosKind, ns string) (*appsv1.StatefulSet, error) {
	if kind == kindApps {
		return cfg.kc.AppsV1().StatefulSets(ns).Get(ctx, chaosSet, metav1.GetOptions{})
	}
	dyn, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		return nil, err
	}
	u, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Get(ctx, chaosSet, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var s appsv1.StatefulSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// waitChaosSet waits until the set of that kind meets cond (apps/v1 by watch, ordinal.dev by polling).
func waitChaosSet(t *testing.T, ctx context.Context, kind chaosKind, ns, desc string, timeout time.Duration, cond func(*appsv1.StatefulSet) bool) *appsv1.StatefulSet {
	t.Helper()
	if kind == kindApps {
		return waitSet(t, ctx, ns, chaosSet, desc, timeout, cond)
	}
	var last *appsv1.StatefulSet
	waitFor(t, ctx, "ordinal.dev set: "+desc, timeout, func() bool {
		s, err := getChaosSet(ctx, kindOrdinal, ns)
		if err == nil {
			last = s
		}
		return err == nil && cond(s)
	})
	return last
}

func patchChaosSet(t *testing.T, ctx context.Context, kind chaosKind, ns, patch string) {
	t.Helper()
	if kind == kindApps {
		patchSet(t, ctx, ns, chaosSet, patch)
		return
	}
	patchOrdinalSet(t, ctx, chaosDynamic(t), ns, chaosSet, patch)
}

// chaosStep is one action of a scenario's change, taken once when is true (nil: at once), in order.
type chaosStep struct {
	desc string
	when func() bool
	do   func()
}

// migrateSet runs `kubectl ordinal migrate` (the real plugin, talking to kube-apiserver directly, with
// the controller under its faults meanwhile) and fails the test unless it succeeds. Mid-rollout the
// controller writes the set's status all the time, and a migration that finds the set changed after its
// checks deletes nothing and says to run it again: so does this, up to migrateAttempts times.
func migrateSet(t *testing.T, ctx context.Context, ns, to, backups string, extra ...string) (attempts int) {
	t.Helper()
	args := append([]string{"migrate", "statefulset/" + chaosSet, "-n", ns, "--to", to, "--wait=false", "--backup-dir", backups}, extra...)
	for attempts = 1; ; attempts++ {
		var out, perr string
		var code int
		withAPI(func() { out, perr, code = plugin(t, ctx, args...) })
		if code == 0 {
			t.Logf("kubectl ordinal migrate --to %s (attempt %d): %s", to, attempts, strings.TrimSpace(out))
			return attempts
		}
		if attempts == migrateAttempts || !strings.Contains(perr, "run the command again") {
			t.Fatalf("kubectl ordinal %s: exit %d (attempt %d)\n%s%s", strings.Join(args, " "), code, attempts, out, perr)
		}
	}
}

const migrateAttempts = 50

// suppliedModules creates the module ConfigMap a supplied-module scenario's controller watches, with
// code under the key the set names (annSupplied).
func suppliedModules(t *testing.T, ctx context.Context, ns string, code []byte) {
	t.Helper()
	withAPI(func() {
		if _, err := cfg.kc.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "modules"},
			BinaryData: map[string][]byte{suppliedModule + ".wasm": code}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// swapSuppliedModule replaces the supplied module's code in the ConfigMap (the controller swaps it in
// once it passes the gate).
func swapSuppliedModule(t *testing.T, ctx context.Context, ns string, code []byte) {
	t.Helper()
	withAPI(func() {
		cm, err := cfg.kc.CoreV1().ConfigMaps(ns).Get(ctx, "modules", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.BinaryData[suppliedModule+".wasm"] = code
		if _, err := cfg.kc.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("supplied module %s swapped to %s", suppliedModule, digestOf(code))
}

const suppliedModule = "chaos-supplied"

// oneAtATimeModule is the real guest built with MaxUnavailableStatefulSet off (host/controller/testdata).
func oneAtATimeModule(t *testing.T) []byte {
	return readModule(t, filepath.Join(modulesDir(), "ordinal-maxunavailable-off.wasm"))
}

// ---------------------------------------------------------------------------------------------- webhook

// reviewTimeout is the timeout the API server would put in a review's URL (the shipped timeoutSeconds).
const reviewTimeout = 5 * time.Second

// reviewScaleDown posts to the webhook, as kube-apiserver would, the review of an edit scaling the set
// down to 1 replica; under whenScaled=Delete and --deny-pvc-deletion it must never be allowed. The client
// gives up at the review's own timeout: a later answer is one the API server would not have waited for.
func reviewScaleDown(t *testing.T, ctx context.Context, wh *webhookProc, ns string, n int) (*admissionv1.AdmissionResponse, time.Duration, error) {
	t.Helper()
	var cur *appsv1.StatefulSet
	var err error
	withAPI(func() { cur, err = getChaosSet(ctx, kindApps, ns) })
	if err != nil {
		return nil, 0, fmt.Errorf("read the set to review an edit of: %w", err)
	}
	cur.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	edit := cur.DeepCopy()
	one := int32(1)
	edit.Spec.Replicas = &one
	oldRaw, _ := json.Marshal(cur)
	newRaw, _ := json.Marshal(edit)
	review := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID(fmt.Sprintf("chaos-review-%d", n)),
			Kind:     metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"},
			Resource: metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"},
			Name:     chaosSet, Namespace: ns, Operation: admissionv1.Update,
			UserInfo: authenticationv1.UserInfo{Username: "chaos"},
			Object:   runtime.RawExtension{Raw: newRaw}, OldObject: runtime.RawExtension{Raw: oldRaw}}}
	body, _ := json.Marshal(review)
	client := wh.httpClient(t)
	client.Timeout = reviewTimeout
	start := time.Now()
	resp, err := client.Post(fmt.Sprintf("https://%s/validate?timeout=%s", wh.addr, reviewTimeout), "application/json", bytes.NewReader(body))
	took := time.Since(start)
	if err != nil {
		return nil, took, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out admissionv1.AdmissionReview
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || out.Response == nil {
		return nil, took, fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, b)
	}
	return out.Response, took, nil
}

// reviewOutcome is what one review of a claim-deleting scale-down came to.
type reviewOutcome int

const (
	reviewDenied       reviewOutcome = iota // denied by --deny-pvc-deletion, after a preview
	reviewFailedClosed                      // no preview (faults), denied by --failure-policy=closed
	reviewAllowed                           // let through: a violation
	reviewUnanswered                        // no answer within the review's timeout, or not an answer: a violation
)

// onReview judges one review of the scale-down: only a denial is right; without a preview the failure
// policy (closed) must deny it too.
func (w *invariantWatch) onReview(n int, resp *admissionv1.AdmissionResponse, took time.Duration, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var o reviewOutcome
	switch {
	case err != nil || resp == nil:
		o = reviewUnanswered
		w.violate("review %d of a scale-down deleting claims: no answer within its timeout of %s (%s): %v", n, reviewTimeout, took.Round(time.Millisecond), err)
	case resp.Allowed:
		o = reviewAllowed
		w.violate("review %d of a scale-down deleting claims was allowed (--deny-pvc-deletion, --failure-policy=closed); warnings %q", n, resp.Warnings)
	case resp.Result != nil && strings.Contains(resp.Result.Message, "--deny-pvc-deletion"):
		o = reviewDenied
	default:
		o = reviewFailedClosed
	}
	if w.reviews == nil {
		w.reviews = map[reviewOutcome]int{}
	}
	w.reviews[o]++
}

// ---------------------------------------------------------------------------------------------- pause

// freeze records the set's pods as they are: until thaw, any pod of the set created, deleted or marked
// for deletion is a violation (a paused set's sync writes no pod).
func (w *invariantWatch) freeze(why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.frozen = map[string]bool{}
	w.frozenWhy = why
	for n, down := range w.down {
		w.frozen[n] = down && w.terminating[n]
	}
}

func (w *invariantWatch) thaw() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.frozen = nil
}

// onFrozenPod judges one event of a set's pod while frozen (mu held).
func (w *invariantWatch) onFrozenPod(p *corev1.Pod, deleted bool) {
	was, known := w.frozen[p.Name]
	switch {
	case !known:
		w.violate("pod %s created while %s", p.Name, w.frozenWhy)
	case deleted:
		w.violate("pod %s deleted while %s", p.Name, w.frozenWhy)
	case p.DeletionTimestamp != nil && !was:
		w.violate("pod %s marked for deletion while %s", p.Name, w.frozenWhy)
	}
}

// reservedOrdinals reads ordinal.dev/reserve-ordinals ("1,3") of a scenario's change.
func reservedOrdinals(sc chaosScenario) map[int]bool {
	out := map[int]bool{}
	for _, f := range strings.Split(sc.reserve, ",") {
		var o int
		if _, err := fmt.Sscanf(strings.TrimSpace(f), "%d", &o); err == nil {
			out[o] = true
		}
	}
	return out
}

// reviewSummary is one run's reviews, for the table ("" when it reviewed nothing).
func (w *invariantWatch) reviewSummary() map[reviewOutcome]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[reviewOutcome]int{}
	for k, v := range w.reviews {
		out[k] = v
	}
	return out
}

func (o reviewOutcome) String() string {
	return [...]string{"denied (policy)", "denied (failed closed)", "allowed", "unanswered"}[o]
}

func sortedOutcomes(m map[reviewOutcome]int) []reviewOutcome {
	var out []reviewOutcome
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ---------------------------------------------------------------------------------------------- progress deadline

// The annotations of extension progress-deadline (guest/statefulset/progress_deadline.go).
const (
	annProgressDeadline   = "ordinal.dev/progress-deadline-seconds"
	annOnProgressDeadline = "ordinal.dev/on-progress-deadline"
)

func hasDeadline(sc chaosScenario) bool {
	_, ok := sc.annotations[annProgressDeadline]
	return ok
}

// deadlineWatch is what onSet knows of a scenario's set with a progress deadline.
type deadlineWatch struct {
	rev1       string          // the first revision (rolled out before the change); "" until followDeadlineSet
	generation int64           // the set's generation then
	rolledBack map[string]bool // the RolledBack conditions' messages seen
	reported   map[string]bool // the violations of onSet already recorded (every update of the set repeats them)
}

// followDeadlineSet starts judging the set (onSet) from its first rollout on, and returns its pods then
// (name: UID). The set is an apps/v1 one (no scenario with a deadline is of the CRD).
func followDeadlineSet(t *testing.T, ctx context.Context, ns string, w *invariantWatch, first *appsv1.StatefulSet) map[string]types.UID {
	t.Helper()
	w.mu.Lock()
	w.deadline = deadlineWatch{rev1: first.Status.UpdateRevision, generation: first.Generation, rolledBack: map[string]bool{}, reported: map[string]bool{}}
	w.mu.Unlock()
	pods := map[string]types.UID{}
	withAPI(func() {
		l, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Items {
			pods[p.Name] = p.UID
		}
		sets := cfg.kc.AppsV1().StatefulSets(ns)
		informer(t, ctx, &appsv1.StatefulSet{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return sets.List(ctx, o) },
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return sets.Watch(ctx, o) },
			func(s *appsv1.StatefulSet, del bool) { w.onSet(s, del) })
	})
	return pods
}

// onSet judges every update of a scenario's set with a progress deadline. A healthy change (a deadline
// longer than any run) is never reported past its deadline nor rolled back. A broken one is rolled back
// once, to the first revision (so never the first revision's rollout rolled back). And nothing writes the
// spec but the change and that one rollback.
func (w *invariantWatch) onSet(s *appsv1.StatefulSet, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := &w.deadline
	if deleted || s.Name != chaosSet || d.rev1 == "" {
		return
	}
	once := func(key, format string, args ...any) {
		if !d.reported[key] {
			d.reported[key] = true
			w.violate(format, args...)
		}
	}
	writes, what := int64(1), "the change"
	if w.sc.broken {
		writes, what = 2, "the change and its rollback"
	}
	if s.Generation > d.generation+writes {
		once("generation", "the set's spec written %d times since its first rollout (generation %d), more than %s",
			s.Generation-d.generation, s.Generation, what)
	}
	for _, c := range s.Status.Conditions {
		switch {
		case c.Type == "Progressing" && c.Status == "False" && !w.sc.broken:
			once("progressing", "Progressing False %s (%q) on a rollout that cannot have stalled for its deadline (%ss, longer than a run)",
				c.Reason, c.Message, w.sc.annotations[annProgressDeadline])
		case c.Type == "RolledBack" && !w.sc.broken:
			once("rolled back", "a healthy rollout rolled back: RolledBack %s %s %q", c.Status, c.Reason, c.Message)
		case c.Type == "RolledBack":
			d.rolledBack[c.Message] = true
			if !strings.Contains(c.Message, " to revision "+d.rev1+" from revision ") {
				once("rolled back elsewhere "+c.Message, "rolled back elsewhere than to the first revision %s: %q", d.rev1, c.Message)
			}
			if len(d.rolledBack) > 1 {
				msgs := slices.Sorted(maps.Keys(d.rolledBack))
				once(fmt.Sprint("rolled back twice ", len(msgs)), "rolled back more than once: %q", msgs)
			}
		}
	}
}

// checkProgressDeadline judges the settled set of a scenario with a progress deadline: Progressing True
// RolloutComplete at the update revision, Available True; a healthy change neither rolled back nor its spec
// written by anyone else; a broken one rolled back once: the first template back (as the API server stores
// it), every pod at the first revision, RolledBack naming both revisions, and the pods below the broken one
// never replaced (the rollout stopped at the pod that never became Ready, and the rollback replaced only
// that one).
func checkProgressDeadline(t *testing.T, ctx context.Context, ns string, sc chaosScenario, first *appsv1.StatefulSet, firstPods map[string]types.UID) {
	t.Helper()
	var s *appsv1.StatefulSet
	var pods *corev1.PodList
	var revs *appsv1.ControllerRevisionList
	var err error
	withAPI(func() {
		if s, err = getChaosSet(ctx, kindApps, ns); err != nil {
			return
		}
		if pods, err = cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
			return
		}
		revs, err = cfg.kc.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	rev := s.Status.UpdateRevision
	if c := setCondition(s, "Progressing"); c == nil || c.Status != "True" || c.Reason != "RolloutComplete" ||
		!strings.Contains(c.Message, " progressed to revision "+rev+".") {
		t.Errorf("Progressing %+v, want True RolloutComplete at the update revision %s", c, rev)
	}
	if c := setCondition(s, "Available"); c == nil || c.Status != "True" || c.Reason != "MinimumReplicasAvailable" {
		t.Errorf("Available %+v, want True MinimumReplicasAvailable", c)
	}
	rb := setCondition(s, "RolledBack")
	defer func() {
		t.Logf("progress deadline %ss: generation %d (first rollout at %d), update revision %s; conditions %s", sc.annotations[annProgressDeadline],
			s.Generation, first.Generation, rev, conditionsString(s))
	}()
	if !sc.broken {
		if rb != nil {
			t.Errorf("a healthy rollout rolled back: RolledBack %+v", rb)
		}
		if s.Generation != first.Generation+1 {
			t.Errorf("generation %d after the change, want %d: the spec written by someone else than the change", s.Generation, first.Generation+1)
		}
		return
	}
	rev1 := first.Status.UpdateRevision
	if rev != rev1 || s.Status.CurrentRevision != rev1 {
		t.Errorf("update revision %s, current %s after the rollback, want the first revision %s", rev, s.Status.CurrentRevision, rev1)
	}
	if s.Generation != first.Generation+2 {
		t.Errorf("generation %d, want %d: the change and one rollback", s.Generation, first.Generation+2)
	}
	if !apiequality.Semantic.DeepEqual(s.Spec.Template, first.Spec.Template) {
		got, _ := json.Marshal(s.Spec.Template)
		want, _ := json.Marshal(first.Spec.Template)
		t.Errorf("the template after the rollback is not the first one:\n got %s\nwant %s", got, want)
	}
	var broken []string
	for _, r := range revs.Items {
		if r.Name != rev1 && metav1.IsControlledBy(&r, s) {
			broken = append(broken, r.Name)
		}
	}
	if len(broken) != 1 {
		t.Fatalf("the set's revisions other than the first: %v, want one (the broken one)", broken)
	}
	if rb == nil || rb.Status != "True" || rb.Reason != "ProgressDeadlineExceeded" ||
		!strings.Contains(rb.Message, " rolled back to revision "+rev1+" from revision "+broken[0]+": ") {
		t.Errorf("RolledBack %+v, want True ProgressDeadlineExceeded, from revision %s to %s", rb, broken[0], rev1)
	}
	for _, p := range pods.Items {
		o := podOrdinal(p.Name)
		if o < 0 || o >= int(sc.replicas)-1 { // the broken pod's ordinal (the top), and the canary's (9)
			continue
		}
		if p.UID != firstPods[p.Name] {
			t.Errorf("pod %s replaced (uid %s, was %s): the rollout went past the pod that never became Ready, or the rollback replaced a pod it had not reached",
				p.Name, p.UID, firstPods[p.Name])
		}
	}
}

func conditionsString(s *appsv1.StatefulSet) string {
	var out []string
	for _, c := range s.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(out, "; ")
}

// ---------------------------------------------------------------------------------------------- in place

// inPlaceAnnotations turns extension in-place-update on (the extended module, InPlaceIfPossible).
func inPlaceAnnotations() map[string]string {
	return map[string]string{"ordinal.dev/module": "extended", "ordinal.dev/pod-update-policy": "InPlaceIfPossible"}
}

// inPlaceChange is an in-place scenario's change, a strategic merge patch (containers merge by name, as with
// `kubectl set image`): container app's image and the template's version annotation, both of which a pod
// can change in place.
var inPlaceChange = fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:"v2"}},"spec":{"containers":[{"name":"app","image":%q}]}}}}`,
	annVersion, inPlaceImage)

// annInPlaceUpdate is the record an in-place update leaves on the pod: the revision it moved it to.
const annInPlaceUpdate = "ordinal.dev/in-place-update"

func patchSetStrategic(t *testing.T, ctx context.Context, ns, patch string) {
	t.Helper()
	out, err := cfg.kc.AppsV1().StatefulSets(ns).Patch(ctx, chaosSet, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch StatefulSet %s with %s: %v", chaosSet, patch, err)
	}
	t.Logf("patched StatefulSet %s: %s (generation %d)", chaosSet, patch, out.Generation)
}

// inPlaceWatch is what onInPlacePod knows of an in-place scenario's pods.
type inPlaceWatch struct {
	pods     map[string]types.UID // the set's pods just before the change (name: uid); nil until holdInPlace
	reported map[string]bool      // the violations already recorded (every update of a pod would repeat them)
}

// holdInPlace reads the set's pods, rolled out at the first revision and none restarted, as the API server
// has them, and from then on holds each to its uid (onInPlacePod). It returns them (name: uid).
func holdInPlace(t *testing.T, ctx context.Context, ns string, w *invariantWatch, sc chaosScenario) map[string]types.UID {
	t.Helper()
	var l *corev1.PodList
	var err error
	withAPI(func() { l, err = cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]types.UID{}
	for _, p := range l.Items {
		if p.Name == chaosSet+"-9" { // the canary
			continue
		}
		pods[p.Name] = p.UID
		for _, cs := range p.Status.ContainerStatuses {
			if cs.RestartCount != 0 {
				t.Fatalf("pod %s: container %s restarted %d times before the change", p.Name, cs.Name, cs.RestartCount)
			}
		}
	}
	if len(pods) != int(sc.replicas) {
		t.Fatalf("the set's pods before the change: %v, want %d", slices.Sorted(maps.Keys(pods)), sc.replicas)
	}
	w.mu.Lock()
	w.inPlace = inPlaceWatch{pods: pods, reported: map[string]bool{}}
	w.mu.Unlock()
	return pods
}

// onInPlacePod judges one event of an in-place scenario's pod (mu held): none is created, deleted or marked
// for deletion (each ordinal keeps its uid from before the change on), and no container restarts more than
// once (the containers of every pod had not restarted before the change, which restarts each once).
func (w *invariantWatch) onInPlacePod(p *corev1.Pod, deleted bool) {
	once := func(key, format string, args ...any) {
		if !w.inPlace.reported[key] {
			w.inPlace.reported[key] = true
			w.violate(format, args...)
		}
	}
	uid, known := w.inPlace.pods[p.Name]
	switch {
	case !known || uid != p.UID:
		once("created "+string(p.UID), "pod %s created (uid %s; before the change: %q) during an in-place rollout", p.Name, p.UID, uid)
	case deleted:
		once("deleted "+string(p.UID), "pod %s (uid %s) deleted during an in-place rollout", p.Name, p.UID)
	case p.DeletionTimestamp != nil:
		once("terminating "+string(p.UID), "pod %s (uid %s) marked for deletion during an in-place rollout", p.Name, p.UID)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.RestartCount > 1 {
			once(fmt.Sprintf("restarts %s %s %d", p.UID, cs.Name, cs.RestartCount), "pod %s: container %s restarted %d times (image %s), an in-place update restarts it once",
				p.Name, cs.Name, cs.RestartCount, cs.Image)
		}
	}
}

// checkInPlace judges the settled set of an in-place scenario: the same pods as before the change (uids),
// each at the update revision by its in-place update (the record names it), with the new image in its spec
// and its container's status, the new template's version annotation, its container restarted exactly once,
// and Ready.
func checkInPlace(t *testing.T, ctx context.Context, ns string, before map[string]types.UID) {
	t.Helper()
	var s *appsv1.StatefulSet
	var l *corev1.PodList
	var err error
	withAPI(func() {
		if s, err = getChaosSet(ctx, kindApps, ns); err != nil {
			return
		}
		l, err = cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	rev := s.Status.UpdateRevision
	after := map[string]types.UID{}
	for _, p := range l.Items {
		if p.Name == chaosSet+"-9" {
			continue
		}
		after[p.Name] = p.UID
		if p.UID != before[p.Name] {
			t.Errorf("pod %s: uid %s, was %q before the change: not the same pod", p.Name, p.UID, before[p.Name])
		}
		var image string
		if len(p.Spec.Containers) == 1 {
			image = p.Spec.Containers[0].Image
		}
		cs := p.Status.ContainerStatuses
		if image != inPlaceImage || len(cs) != 1 || cs[0].Image != inPlaceImage || cs[0].RestartCount != 1 || !cs[0].Ready {
			t.Errorf("pod %s: spec image %q, container statuses %+v: want %s, restarted once, ready", p.Name, image, cs, inPlaceImage)
		}
		if podRevision(&p) != rev || p.Annotations[annInPlaceUpdate] != rev || p.Annotations[annVersion] != "v2" {
			t.Errorf("pod %s: revision %s, in-place record %q, version %q: want the update revision %s in both, version v2",
				p.Name, podRevision(&p), p.Annotations[annInPlaceUpdate], p.Annotations[annVersion], rev)
		}
	}
	if !maps.Equal(after, before) {
		t.Errorf("the set's pods %v, before the change %v", after, before)
	}
	if s.Spec.Template.Spec.Containers[0].Image != inPlaceImage || s.Status.CurrentRevision != rev {
		t.Errorf("the set: template image %s, current revision %s, update revision %s", s.Spec.Template.Spec.Containers[0].Image, s.Status.CurrentRevision, rev)
	}
}

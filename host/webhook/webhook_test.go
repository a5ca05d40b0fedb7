package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

var testModule *wasm.Module

// boundedLoad is the modules' configuration here: Timeout bounds each compile and call, and its 30 s
// default is a wall-clock budget that compiling a module under -race on a loaded machine misses
// ("compile exceeded 30s timeout"). Ten minutes: a hang guard. Tests of the timeouts set their own.
var boundedLoad = wasm.Config{Timeout: 10 * time.Minute}

func TestMain(m *testing.M) {
	ctx := context.Background()
	mod, err := wasm.Load(ctx, embedded.Module(), boundedLoad)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loading the embedded module:", err)
		os.Exit(1)
	}
	testModule = mod
	code := m.Run()
	mod.Close(ctx)
	os.Exit(code)
}

// world is a live cluster state: a StatefulSet and its objects, as a settled replay leaves them.
type world struct {
	set *appsv1.StatefulSet
	src *StaticSource
}

const setTemplate = `name: %[1]s
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: prod, labels: {app: web}}
    spec:
      replicas: %[2]d
      serviceName: web
      podManagementPolicy: %[3]s
      updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: %[4]d}}
      persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: %[5]s}
      selector: {matchLabels: {app: web}}
      template:
        metadata:
          labels: {app: web}
        spec:
          containers:
            - name: nginx
              image: registry.k8s.io/nginx-slim:0.27
              volumeMounts: [{name: data, mountPath: /data}]
      volumeClaimTemplates:
        - metadata: {name: data}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
%[6]s`

// newWorld replays the set's creation (plus extra events) to a settled state and decodes the result.
func newWorld(t testing.TB, replicas int, policy string, maxUnavailable int, whenScaled, events string) world {
	t.Helper()
	sc, err := replay.ParseScenario([]byte(fmt.Sprintf(setTemplate, t.Name(), replicas, policy, maxUnavailable, whenScaled, events)))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := replay.Run(context.Background(), sc, replay.Options{Module: testModule})
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		StatefulSet json.RawMessage   `json:"statefulSet"`
		Pods        []json.RawMessage `json:"pods"`
		Revisions   []json.RawMessage `json:"revisions"`
		Claims      []json.RawMessage `json:"claims"`
	}
	if err := json.Unmarshal(tl.Final, &snap); err != nil {
		t.Fatal(err)
	}
	w := world{set: &appsv1.StatefulSet{}, src: &StaticSource{}}
	mustUnmarshal(t, snap.StatefulSet, w.set)
	for _, b := range snap.Pods {
		p := &corev1.Pod{}
		mustUnmarshal(t, b, p)
		w.src.Pods = append(w.src.Pods, p)
	}
	for _, b := range snap.Revisions {
		r := &appsv1.ControllerRevision{}
		mustUnmarshal(t, b, r)
		w.src.Revisions = append(w.src.Revisions, r)
	}
	for _, b := range snap.Claims {
		c := &corev1.PersistentVolumeClaim{}
		mustUnmarshal(t, b, c)
		w.src.Claims = append(w.src.Claims, c)
	}
	return w
}

func mustUnmarshal(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// edit returns the object the API server would admit for an update: the edit applied, generation bumped,
// status kept.
func (w world) edit(f func(s *appsv1.StatefulSet)) *appsv1.StatefulSet {
	s := w.set.DeepCopy()
	f(s)
	s.Generation++
	return s
}

func raw(t testing.TB, o any) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

var setKind = metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}

func reviewOf(t testing.TB, op admissionv1.Operation, old, cur *appsv1.StatefulSet, dryRun bool) *admissionv1.AdmissionReview {
	req := &admissionv1.AdmissionRequest{
		UID: types.UID(fmt.Sprintf("req-%d", time.Now().UnixNano())), Kind: setKind,
		Resource: metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"},
		Name:     cur.Name, Namespace: cur.Namespace, Operation: op, DryRun: ptr.To(dryRun),
		Object: raw(t, cur),
	}
	if old != nil {
		req.OldObject = raw(t, old)
	}
	return &admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req}
}

type fixture struct {
	srv    *Server
	events *record.FakeRecorder
	http   *httptest.Server
}

func newFixture(t testing.TB, src Source, mod hostplan.Reconciler, mutate func(*Config)) *fixture {
	t.Helper()
	if mod == nil {
		mod = testModule
	}
	f := &fixture{events: record.NewFakeRecorder(10)}
	// The review budget is a bound here, not a measurement: the default 3 s made TestSummaryBatchesElided
	// fail on a loaded machine. Tests of the budget itself set their own.
	cfg := Config{Module: mod, Source: src, Events: f.events, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Timeout: 10 * time.Minute}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = s
	f.http = httptest.NewServer(s.Handler())
	t.Cleanup(f.http.Close)
	return f
}

// post sends a review over HTTP and decodes the answer (failing the test on a non-200 status).
func (f *fixture) post(t testing.TB, review any) *admissionv1.AdmissionResponse {
	t.Helper()
	code, body := f.postRaw(t, mustJSON(t, review))
	if code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", code, body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || out.Response == nil {
		t.Fatalf("not an AdmissionReview response: %s", body)
	}
	if rv, ok := review.(*admissionv1.AdmissionReview); ok && out.Response.UID != rv.Request.UID {
		t.Fatalf("response uid %q, want %q", out.Response.UID, rv.Request.UID)
	}
	checkLimits(t, out.Response.Warnings)
	return out.Response
}

func (f *fixture) postRaw(t testing.TB, body []byte) (int, string) {
	t.Helper()
	// No ?timeout= (the API server's own, which lowers the review's deadline to 80% of it: 10s made every
	// review here race 8 s of wall clock): the fixture's Timeout is the bound. TestConnectionFloodBudget-
	// CountsFromArrival pins what the parameter does.
	resp, err := http.Post(f.http.URL+"/validate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkLimits: what the API server accepts without truncating or dropping anything.
func checkLimits(t testing.TB, warnings []string) {
	t.Helper()
	total := 0
	if len(warnings) > MaxWarnings {
		t.Errorf("%d warnings, more than %d", len(warnings), MaxWarnings)
	}
	for _, w := range warnings {
		n := utf8.RuneCountInString(w)
		total += n
		if n > 256 {
			t.Errorf("warning of %d runes (the API server truncates past 256 once the total exceeds 4096): %q", n, w)
		}
		if strings.ContainsAny(w, "\n\r\t") {
			t.Errorf("warning with a control character (the API server drops it): %q", w)
		}
		if !strings.HasPrefix(w, WarningPrefix) {
			t.Errorf("warning without the %q prefix: %q", WarningPrefix, w)
		}
	}
	if total > MaxTotalWarningRunes {
		t.Errorf("warnings total %d runes, more than %d", total, MaxTotalWarningRunes)
	}
}

func wantWarning(t *testing.T, warnings []string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		found := false
		for _, w := range warnings {
			found = found || strings.Contains(w, s)
		}
		if !found {
			t.Errorf("no warning contains %q; warnings:\n  %s", s, strings.Join(warnings, "\n  "))
		}
	}
}

func (f *fixture) eventCount() int { return len(f.events.Events) }

func TestCreate(t *testing.T) {
	f := newFixture(t, &StaticSource{}, nil, nil)
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	cur := w.set.DeepCopy()
	cur.Status = appsv1.StatefulSetStatus{}
	cur.ResourceVersion, cur.Generation = "", 1
	resp := f.post(t, reviewOf(t, admissionv1.Create, nil, cur, false))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "create StatefulSet web: 3 pods web-0..web-2, one at a time", "OrderedReady", "revision web-")
	if f.eventCount() != 1 {
		t.Errorf("%d events, want 1 (the preview)", f.eventCount())
	}
	// the generation the create gives the set, in the message and as an annotation kubectl ordinal status reads,
	// with the digest of the spec previewed
	if ev := <-f.events.Events; !strings.Contains(ev, EventReason+" generation 1: create StatefulSet web") ||
		!strings.HasSuffix(ev, " map["+rollout.AnnotationPreviewedGeneration+":1 "+rollout.AnnotationPreviewedSpec+":"+rollout.SpecDigest(&cur.Spec)+"]") {
		t.Errorf("event %q", ev)
	}
}

func TestUpdateTemplateMaxUnavailable(t *testing.T) {
	w := newWorld(t, 5, "Parallel", 2, "Retain", "")
	f := newFixture(t, w.src, nil, nil)
	cur := w.edit(func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.28"
	})
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "rolling update of 5 pods to revision web-", "maxUnavailable 2: [web-4 web-3] then [web-2 web-1] then [web-0]; 3 steps")
	if len(resp.Warnings) != 1 {
		t.Errorf("want just the headline, got %q", resp.Warnings)
	}
	// the full preview is on /preview
	res, err := http.Get(f.http.URL + "/preview/prod/web")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "pods taken down, in batches: [web-4 web-3] -> [web-2 web-1] -> [web-0]") ||
		!strings.Contains(string(b), "UPDATE prod/web") {
		t.Errorf("/preview/prod/web: %d\n%s", res.StatusCode, b)
	}
	if f.eventCount() != 1 {
		t.Errorf("%d events, want 1", f.eventCount())
	}
}

func TestNoSpecChangeIsSkipped(t *testing.T) {
	w := newWorld(t, 2, "OrderedReady", 1, "Retain", "")
	f := newFixture(t, w.src, nil, nil)
	cur := w.set.DeepCopy()
	cur.Labels["team"] = "a"
	cur.Annotations = map[string]string{"example.com/owner": "b"}
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed || len(resp.Warnings) != 0 || f.eventCount() != 0 {
		t.Fatalf("metadata-only edit: allowed %v, warnings %q, %d events", resp.Allowed, resp.Warnings, f.eventCount())
	}
	// the controller's record of its policies' holds is its own write, not an edit to preview
	cur.Annotations[policy.AnnotationHeld] = `{"handoff":[{"verb":"delete","kind":"Pod","name":"web-1","since":"2026-11-26T10:00:00Z"}]}`
	cur.Annotations[abi.AnnotationModule] = "extended" // as below: previewed, it would warn
	old := w.set.DeepCopy()
	old.Annotations = map[string]string{abi.AnnotationModule: "extended"}
	if resp := f.post(t, reviewOf(t, admissionv1.Update, old, cur, false)); !resp.Allowed || len(resp.Warnings) != 0 || f.eventCount() != 0 {
		t.Fatalf("the controller's %s write: allowed %v, warnings %q, %d events", policy.AnnotationHeld, resp.Allowed, resp.Warnings, f.eventCount())
	}
	delete(cur.Annotations, policy.AnnotationHeld)
	delete(cur.Annotations, abi.AnnotationModule)
	// an ordinal.dev/ annotation is the controller's input: previewed (here: a module name it lacks)
	cur.Annotations[abi.AnnotationModule] = "extended"
	if resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false)); len(resp.Warnings) == 0 {
		t.Fatalf("an %s edit was skipped", abi.AnnotationModule)
	}
}

func TestScaleDownRetentionPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   []string
		claims []string
	}{
		{"Retain", []string{"scaling 5→3 deletes web-4, web-3 (highest ordinal first, one at a time)", "whenScaled=Retain: the PVCs data-web-3, data-web-4 are kept"}, nil},
		{"Delete", []string{"scaling 5→3 deletes web-4, web-3", "whenScaled=Delete: scaling 5→3 deletes PVCs data-web-3, data-web-4 and their data"}, []string{"data-web-3", "data-web-4"}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			w := newWorld(t, 5, "OrderedReady", 1, tc.policy, "")
			cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](3) })
			f := newFixture(t, w.src, nil, nil)
			resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			wantWarning(t, resp.Warnings, tc.want...)
			// with --deny-pvc-deletion only the Delete policy is denied
			fd := newFixture(t, w.src, nil, func(c *Config) { c.DenyPVCDeletion = true })
			resp = fd.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
			if tc.claims == nil {
				if !resp.Allowed {
					t.Fatalf("Retain denied: %v", resp.Result)
				}
				return
			}
			if resp.Allowed || resp.Result == nil || resp.Result.Code != 403 {
				t.Fatalf("whenScaled=Delete allowed with --deny-pvc-deletion: %+v", resp)
			}
			for _, s := range []string{"--deny-pvc-deletion", "data-web-3, data-web-4", "whenScaled: Retain"} {
				if !strings.Contains(resp.Result.Message, s) {
					t.Errorf("denial %q does not mention %q", resp.Result.Message, s)
				}
			}
			if fd.eventCount() != 0 {
				t.Errorf("a denied edit recorded an event")
			}
		})
	}
}

func TestPartitionChange(t *testing.T) {
	w := newWorld(t, 5, "OrderedReady", 1, "Retain", "")
	f := newFixture(t, w.src, nil, nil)
	cur := w.edit(func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](3)
		s.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.28"
	})
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	wantWarning(t, resp.Warnings, "rolling update of 2 pods", "[web-4] then [web-3]; 2 steps",
		"partition 3 holds web-0..web-2 at "+w.set.Status.CurrentRevision)
}

func TestNotReadyOrderedReady(t *testing.T) {
	w := newWorld(t, 5, "OrderedReady", 1, "Retain", "events:\n  - settled: true\n    unreadyPod: web-2\n")
	cur := w.edit(func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.28"
	})
	f := newFixture(t, w.src, nil, nil)
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed {
		t.Fatalf("denied without the policy: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "web-2 is not Ready: with OrderedReady this rollout will")
	fd := newFixture(t, w.src, nil, func(c *Config) { c.DenyStuckRollouts = true })
	resp = fd.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "--deny-stuck-rollouts: web-2 is not Ready") {
		t.Fatalf("stuck rollout not denied: %+v", resp.Result)
	}
	// Parallel pods are not blocked by a pod that is not Ready: no denial
	wp := newWorld(t, 3, "Parallel", 1, "Retain", "events:\n  - settled: true\n    unreadyPod: web-0\n")
	curp := wp.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
	fp := newFixture(t, wp.src, nil, func(c *Config) { c.DenyStuckRollouts = true })
	if resp := fp.post(t, reviewOf(t, admissionv1.Update, wp.set, curp, false)); !resp.Allowed {
		t.Fatalf("Parallel edit denied: %v", resp.Result)
	}
}

// The forced-rollback trap reaches kubectl apply: an OrderedReady image change whose new revision, were it
// never Ready, would stall on the top pod with no way back but deleting it is warned, naming that pod (the
// preview's Unrecoverable warning, within the API server's warning limits); a Parallel set with the default
// maxUnavailable, whose revert replaces the stuck pod, is not.
func TestUnrecoverableRolloutNamesThePod(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.28"
	})
	f := newFixture(t, w.src, nil, nil)
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "rolling update of 3 pods", "if the new revision never becomes Ready, the rollout stalls on web-2", "kubectl delete pod web-2")

	wp := newWorld(t, 3, "Parallel", 1, "Retain", "")
	curp := wp.edit(func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.28"
	})
	fp := newFixture(t, wp.src, nil, nil)
	resp = fp.post(t, reviewOf(t, admissionv1.Update, wp.set, curp, false))
	if all := strings.Join(resp.Warnings, "\n"); !resp.Allowed || !strings.Contains(all, "rolling update of 3 pods") || strings.Contains(all, "never becomes Ready") {
		t.Fatalf("Parallel: allowed %v, warnings:\n%s", resp.Allowed, all)
	}
}

func TestDryRun(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	f := newFixture(t, w.src, nil, nil)
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, true))
	wantWarning(t, resp.Warnings, "rolling update of 3 pods", "[web-2] then [web-1] then [web-0]")
	if f.eventCount() != 0 {
		t.Errorf("a dry-run review recorded an event (sideEffects: NoneOnDryRun)")
	}
	res, err := http.Get(f.http.URL + "/preview/prod/web?format=json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var sp storedPreview
	if err := json.NewDecoder(res.Body).Decode(&sp); err != nil || !sp.DryRun || sp.Preview == nil || len(sp.Preview.Batches) != 3 {
		t.Fatalf("/preview JSON: %v %+v", err, sp)
	}
}

func TestMalformedReviews(t *testing.T) {
	f := newFixture(t, &StaticSource{}, nil, func(c *Config) { c.MaxBodyBytes = 64 << 10 })
	for name, body := range map[string]string{
		"not json":   `{"apiVersion":`,
		"no request": `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`,
		"no uid":     `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}`,
		"v1beta1":    `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}`,
	} {
		if code, msg := f.postRaw(t, []byte(body)); code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d %s, want 400", name, code, msg)
		}
	}
	if code, _ := f.postRaw(t, bytes.Repeat([]byte(" "), 65<<10)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize review: HTTP %d, want 413", code)
	}
	// a well-formed review whose object is not a StatefulSet: fail-open, with the review's uid
	rv := &admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u1", Kind: setKind, Operation: admissionv1.Create, Namespace: "prod", Name: "web",
			Object: runtime.RawExtension{Raw: []byte(`{"spec":{"replicas":"three"}}`)}}}
	resp := f.post(t, rv)
	if !resp.Allowed {
		t.Fatalf("bad object denied (fail-open expected)")
	}
	wantWarning(t, resp.Warnings, "no rollout preview (request.object is not a StatefulSet")
	// other kinds and subresources pass untouched
	rv.Request.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
	if resp := f.post(t, rv); !resp.Allowed || len(resp.Warnings) != 0 {
		t.Errorf("a Pod review: %+v", resp)
	}
}

func TestOversizeObject(t *testing.T) {
	w := newWorld(t, 2, "OrderedReady", 1, "Retain", "")
	f := newFixture(t, w.src, nil, func(c *Config) { c.MaxReplicas = 100 })
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](100000) })
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed {
		t.Fatal("denied")
	}
	wantWarning(t, resp.Warnings, "100000 replicas is more than this webhook previews (100)")
	// a large object within the limits: many env vars in the template
	cur = w.edit(func(s *appsv1.StatefulSet) {
		for i := range 100 {
			s.Spec.Template.Spec.Containers[0].Env = append(s.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: fmt.Sprintf("V%d", i), Value: strings.Repeat("x", 100)})
		}
	})
	resp = f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	wantWarning(t, resp.Warnings, "rolling update of 2 pods")
}

type failingModule struct{ delay time.Duration }

func (m failingModule) Reconcile(ctx context.Context, _ []byte) ([]byte, error) {
	if m.delay > 0 {
		select {
		case <-time.After(m.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, errors.New("module trapped")
}

func TestFailurePolicy(t *testing.T) {
	w := newWorld(t, 2, "OrderedReady", 1, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
	open := newFixture(t, w.src, failingModule{}, nil)
	resp := open.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed {
		t.Fatal("fail-open denied")
	}
	wantWarning(t, resp.Warnings, "no rollout preview (", "module trapped", "the edit was not checked")
	closed := newFixture(t, w.src, failingModule{}, func(c *Config) { c.FailClosed = true })
	resp = closed.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "--failure-policy=closed") {
		t.Fatalf("fail-closed: %+v", resp)
	}
	// a slow module: answered within the budget, fail-open
	slow := newFixture(t, w.src, failingModule{delay: time.Minute}, func(c *Config) { c.Timeout = 200 * time.Millisecond })
	resp = slow.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed {
		t.Fatalf("slow module: denied")
	}
	wantWarning(t, resp.Warnings, "timed out")
	// caches not synced yet
	ns := newFixture(t, &StaticSource{NotSynced: true}, nil, nil)
	resp = ns.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	wantWarning(t, resp.Warnings, "informer caches have not synced")
	if got := testCounter(open.srv.Metrics(), "UPDATE", DecisionFailedOpen); got != 1 {
		t.Errorf("failed_open counter %v, want 1", got)
	}
}

func testCounter(m *Metrics, op, decision string) float64 {
	mf, _ := m.Registry.Gather()
	for _, f := range mf {
		if f.GetName() != "ordinal_webhook_requests_total" {
			continue
		}
		for _, mm := range f.Metric {
			l := map[string]string{}
			for _, lp := range mm.Label {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["operation"] == op && l["decision"] == decision {
				return mm.Counter.GetValue()
			}
		}
	}
	return 0
}

func TestWarningLimits(t *testing.T) {
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("line %d\nwith a newline %s", i, strings.Repeat("é", 400)))
	}
	out := limitWarnings(lines)
	checkLimits(t, out)
	if !strings.Contains(out[len(out)-1], "more warnings") {
		t.Errorf("last warning %q does not say more were left out", out[len(out)-1])
	}
	if got := limitWarnings([]string{"a", "b"}); len(got) != 2 || got[0] != "ordinal: a" {
		t.Errorf("short warnings changed: %q", got)
	}
}

func TestSummaryBatchesElided(t *testing.T) {
	w := newWorld(t, 20, "OrderedReady", 1, "Retain", "")
	f := newFixture(t, w.src, nil, nil)
	cur := w.edit(func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Image = "x:2"
		s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("10%"))
	})
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	wantWarning(t, resp.Warnings, "rolling update of 20 pods", "maxUnavailable 10%: [web-19 web-18] then", "(5 more)", "10 steps")
}

func TestCertReload(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writePair := func(cn string) {
		c, k := selfSigned(t, cn)
		if err := os.WriteFile(cert, c, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, k, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writePair("first")
	m := NewMetrics()
	r, err := NewCertReloader(cert, key, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	cn := func() string {
		c, err := r.GetCertificate(nil)
		if err != nil || c.Leaf == nil {
			t.Fatalf("GetCertificate: %v", err)
		}
		return c.Leaf.Subject.CommonName
	}
	if got := cn(); got != "first" {
		t.Fatalf("CN %q", got)
	}
	writePair("second")
	future := time.Now().Add(2 * time.Second)
	_ = os.Chtimes(cert, future, future)
	r.mu.Lock()
	r.lastCheck = time.Time{}
	r.mu.Unlock()
	if got := cn(); got != "second" {
		t.Fatalf("after rotation CN %q, want second", got)
	}
	// a broken pair keeps the previous certificate
	_ = os.WriteFile(key, []byte("garbage"), 0o600)
	r.mu.Lock()
	r.lastCheck = time.Time{}
	r.mu.Unlock()
	if got := cn(); got != "second" {
		t.Fatalf("broken pair: CN %q, want second kept", got)
	}
}

// An ordinal.dev/v1 StatefulSet is previewed as Ordinal's kind: its create answers a preview, and a spec
// apps/v1 validation refuses (the CRD's schema lets it in) answers that no preview was made, with
// kube-apiserver's reason, where an apps/v1 request never gets that far.
func TestOrdinalDevSetIsPreviewed(t *testing.T) {
	f := newFixture(t, &StaticSource{}, nil, nil)
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	crdReview := func(cur *appsv1.StatefulSet) *admissionv1.AdmissionReview {
		cur.TypeMeta = metav1.TypeMeta{APIVersion: "ordinal.dev/v1", Kind: "StatefulSet"}
		rv := reviewOf(t, admissionv1.Create, nil, cur, false)
		rv.Request.Kind = metav1.GroupVersionKind{Group: "ordinal.dev", Version: "v1", Kind: "StatefulSet"}
		rv.Request.Resource = metav1.GroupVersionResource{Group: "ordinal.dev", Version: "v1", Resource: "statefulsets"}
		return rv
	}
	cur := w.set.DeepCopy()
	cur.Status = appsv1.StatefulSetStatus{}
	cur.ResourceVersion, cur.Generation = "", 1
	resp := f.post(t, crdReview(cur))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "create StatefulSet web: 3 pods web-0..web-2, one at a time")

	bad := cur.DeepCopy()
	bad.Spec.Template.Labels = map[string]string{"app": "other"}
	resp = f.post(t, crdReview(bad))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "no rollout preview", "`selector` does not match template `labels`")
}

// Extension reserve-ordinals, previewed as the extended module runs it: reserving ordinal 1 of 4 replicas
// creates web-4 and deletes web-1 and (whenScaled Delete) its claim; --deny-pvc-deletion denies it.
func TestReservedOrdinalsPreviewed(t *testing.T) {
	w := newWorld(t, 4, "OrderedReady", 1, "Delete", "")
	cur := w.edit(func(s *appsv1.StatefulSet) {
		s.Annotations = map[string]string{abi.AnnotationModule: "extended", abi.AnnotationReserveOrdinals: "1"}
	})
	extended, err := wasm.Load(context.Background(), embedded.ExtendedModule(), boundedLoad)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { extended.Close(context.Background()) })
	named := func(c *Config) {
		c.NamedModule = func(_ context.Context, name string) (hostplan.Reconciler, error) {
			if name != "extended" {
				return nil, fmt.Errorf("no module %q", name)
			}
			return extended, nil
		}
	}
	f := newFixture(t, w.src, nil, named)
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, `ordinal.dev/reserve-ordinals "1": creates web-4, deletes web-1`,
		"whenScaled=Delete: reserved ordinals deletes PVCs data-web-1 and their data")
	fd := newFixture(t, w.src, nil, func(c *Config) { named(c); c.DenyPVCDeletion = true })
	if resp := fd.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false)); resp.Allowed || !strings.Contains(resp.Result.Message, "data-web-1") {
		t.Fatalf("a reservation deleting data-web-1 allowed with --deny-pvc-deletion: %+v", resp)
	}
}

// Extension resize-claims, previewed on the create that follows kubectl delete --cascade=orphan: the set
// comes back with a 2Gi claim template over its 1Gi claims, adopts its pods and grows the claims from the
// highest ordinal down.
func TestResizeClaimsPreviewed(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	for _, p := range w.src.Pods { // what the garbage collector leaves of an orphaning delete
		p.OwnerReferences = nil
	}
	for _, r := range w.src.Revisions {
		r.OwnerReferences = nil
	}
	for _, c := range w.src.Claims {
		c.OwnerReferences = nil
	}
	cur := w.set.DeepCopy()
	cur.UID, cur.ResourceVersion, cur.Status = "", "", appsv1.StatefulSetStatus{}
	cur.Annotations = map[string]string{abi.AnnotationModule: "extended", abi.AnnotationResizeClaims: "true"}
	cur.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	extended, err := wasm.Load(context.Background(), embedded.ExtendedModule(), boundedLoad)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { extended.Close(context.Background()) })
	f := newFixture(t, w.src, nil, func(c *Config) {
		c.NamedModule = func(context.Context, string) (hostplan.Reconciler, error) { return extended, nil }
	})
	resp := f.post(t, reviewOf(t, admissionv1.Create, nil, cur, false))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "ordinal.dev/resize-claims grows claims one ordinal at a time, each once the one before is expanded: data-web-2 to 2Gi, data-web-1 to 2Gi, data-web-0 to 2Gi")
}

// On a module without reserve-ordinals (the default, faithful one), the annotation changes nothing, and
// the summary names the pods that module creates.
func TestReservedOrdinalsIgnoredByTheFaithfulModule(t *testing.T) {
	w := newWorld(t, 4, "OrderedReady", 1, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) {
		s.Annotations = map[string]string{abi.AnnotationReserveOrdinals: "1"}
		s.Spec.Replicas = ptr.To[int32](5)
	})
	f := newFixture(t, w.src, nil, nil)
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	wantWarning(t, resp.Warnings, "scaling 4→5 creates web-4,")
}

// Regression (issue 32, finding 5): an extension's annotation the module cannot read (ordinal.dev/paused:
// "True") was in the module's own Warning InvalidAnnotation event and not in the webhook's warnings. The
// preview repeats that event (by its reason, abi.EventInvalidAnnotation), so kubectl apply shows which
// annotation, its value and that no pod is written until it is fixed.
func TestWebhookWarnsOfAnInvalidExtensionAnnotation(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	extended, err := wasm.Load(context.Background(), embedded.ExtendedModule(), boundedLoad)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { extended.Close(context.Background()) })
	f := newFixture(t, w.src, nil, func(c *Config) {
		c.NamedModule = func(context.Context, string) (hostplan.Reconciler, error) { return extended, nil }
	})
	for _, value := range []string{"True", "yes"} {
		cur := w.edit(func(s *appsv1.StatefulSet) {
			s.Annotations = map[string]string{abi.AnnotationModule: "extended", abi.AnnotationPaused: value}
			s.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.28"
		})
		resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
		if !resp.Allowed {
			t.Fatalf("denied: %v", resp.Result)
		}
		wantWarning(t, resp.Warnings, `ordinal.dev/paused: "`+value+`" is neither "true" nor "false": no pod is created, deleted or updated until it is fixed`)
	}
}

// Extension in-place-update in the webhook's warnings (the summary `kubectl ordinal preview` prints too): an
// image bump under InPlaceIfPossible is a rolling update in place, batch by batch; a change a pod cannot take
// in place recreates each pod, and the warning says why in the module's words (its RecreatingPod event, the
// field); InPlaceOnly holds the rollout, and the warning names the pod and the field.
func TestInPlaceUpdatePreviewed(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	extended, err := wasm.Load(context.Background(), embedded.ExtendedModule(), boundedLoad)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { extended.Close(context.Background()) })
	f := newFixture(t, w.src, nil, func(c *Config) {
		c.NamedModule = func(context.Context, string) (hostplan.Reconciler, error) { return extended, nil }
	})
	edit := func(policy string, env bool) *appsv1.StatefulSet {
		return w.edit(func(s *appsv1.StatefulSet) {
			s.Annotations = map[string]string{abi.AnnotationModule: "extended", abi.AnnotationPodUpdatePolicy: policy}
			s.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.28"
			if env {
				s.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
			}
		})
	}
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, edit(abi.PodUpdateInPlaceIfPossible, false), false))
	wantWarning(t, resp.Warnings, " in place (the pods are kept, their containers restart) (ordinal.dev/pod-update-policy InPlaceIfPossible), maxUnavailable 1: [web-2] then [web-1] then [web-0]; 3 steps")

	t.Logf("in place:\n  %s", strings.Join(resp.Warnings, "\n  "))
	resp = f.post(t, reviewOf(t, admissionv1.Update, w.set, edit(abi.PodUpdateInPlaceIfPossible, true), false))
	wantWarning(t, resp.Warnings, ", each recreated (not in place) (ordinal.dev/pod-update-policy InPlaceIfPossible), maxUnavailable 1: [web-2] then [web-1] then [web-0]",
		"not in place, so recreated: web-0..web-2 (from web-", "): Recreating Pod web-2 of StatefulSet web to move it to revision ",
		": spec.containers[0].env changes, which a pod cannot change in place")

	t.Logf("recreated:\n  %s", strings.Join(resp.Warnings, "\n  "))
	resp = f.post(t, reviewOf(t, admissionv1.Update, w.set, edit(abi.PodUpdateInPlaceOnly, true), false))
	wantWarning(t, resp.Warnings, "no pod is replaced now: ordinal.dev/pod-update-policy InPlaceOnly holds the rollout at a pod it cannot update in place",
		`StatefulSet "web" holds Pod web-2 at revision `, "spec.containers[0].env changes, which a pod cannot change in place, and ordinal.dev/pod-update-policy is InPlaceOnly.")
	t.Logf("InPlaceOnly's warnings:\n  %s", strings.Join(resp.Warnings, "\n  "))
}

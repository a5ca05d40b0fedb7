// Package webhook is `ordinal webhook`: a validating admission webhook for StatefulSets (apps/v1 and
// Ordinal's ordinal.dev/v1) that tells the user, at `kubectl apply` time, what the edit will do to the
// running set. For each CREATE and UPDATE (and update of the scale subresource: scale.go) it builds the
// controller's snapshot (host/snapshot's SelectObjects + Build) from informer caches of the set's namespace
// with the object the API server is about to store, replays the edit with the preview engine (host/replay)
// on the reconcile module, and answers allowed with warnings that summarise the rollout (batches,
// partition, blocking pods, PVCs deleted). The summary goes to an Event on the set, the full preview to the
// /preview endpoint, never into the object. Optional policies deny known-dangerous edits. Any failure
// answers allowed with a warning (fail-open) unless FailClosed is set.
package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/preview"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// Source gives the objects of a namespace the snapshot is built from (informer caches in `ordinal webhook`).
// The objects are shared and must not be modified.
type Source interface {
	Namespace(ns string) ([]*corev1.Pod, []*appsv1.ControllerRevision, []*corev1.PersistentVolumeClaim, error)
	HasSynced() bool
}

// EventRecorder records the preview's summary on the StatefulSet (client-go's record.EventRecorder is one).
type EventRecorder interface {
	AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any)
}

// Config configures a Server.
type Config struct {
	// Module runs the syncs of the preview (a pooled *wasm.Module: safe for concurrent use).
	Module hostplan.Reconciler
	// NamedModule gives the module a set names with ordinal.dev/module (the controller's registry), safe for
	// concurrent use; nil: such a set's preview fails.
	NamedModule func(ctx context.Context, name string) (hostplan.Reconciler, error)
	// NamedPolicy gives the policies a set names (ordinal.dev/policies), as replay.Options.NamedPolicy.
	NamedPolicy func(ctx context.Context, name string) (policy.Module, error)
	// Client, when set, is the API server a set's policies' context is read from, for a set that names
	// policies (policy.ReadLiveContext, as `kubectl ordinal preview` reads it): the
	// PodDisruptionBudgets and nodes they ask for, and the signals of SignalsConfigMap. A review whose
	// context cannot be read is answered by the failure policy, as a sync does not run without it. Nil:
	// the policies run without budgets, nodes or signals.
	Client kubernetes.Interface
	// GetSet reads a set as the API server stores it, for a review of its scale subresource (kubectl scale,
	// an autoscaler), which carries only the new replica count. Nil: snapshot.GetSet through Client; with
	// neither, such a review is answered by the failure policy.
	GetSet func(ctx context.Context, t snapshot.Target, ns, name string) (*appsv1.StatefulSet, error)
	// SignalsConfigMap is NAMESPACE/NAME of the ConfigMap of signals the controller gives the sets'
	// policies (its --signals-configmap), read for each review of a set that names policies; "": none.
	SignalsConfigMap string
	// Source of pods, revisions and claims.
	Source Source
	// Features are feature-gate overrides put in every snapshot (as the controller's --feature-gates).
	Features map[string]bool
	// Model is the kubelet model of the replay ("delays" by default).
	Model string
	// Timeout bounds one review, preview included (default 3s), counted from when the request arrived
	// (its connection accepted, for the first request on one). The API server's own timeout for the
	// webhook (the `timeout` query parameter it sends, 10s by default) lowers it to 80% of that.
	Timeout time.Duration
	// PreviewSyncs, when > 0, is the most syncs one preview replays. Past it, or past 70% of the review's
	// time budget, the preview stops and answers with the steps it replayed and an estimate of the rest.
	PreviewSyncs int
	// FailClosed denies the edit when no preview can be made (default: allow with a warning).
	FailClosed bool
	// DenyStuckRollouts denies an edit that would block behind a pod that is not Ready under OrderedReady.
	DenyStuckRollouts bool
	// DenyPVCDeletion denies an edit that would delete PersistentVolumeClaims (whenScaled=Delete scale-down).
	DenyPVCDeletion bool
	// MaxConcurrent previews at once (default 4); more wait for a slot, first come first served, until
	// their deadline. Identical reviews at the same time share one preview.
	MaxConcurrent int
	// MaxWaiting reviews may wait for a preview at once (default 64 x MaxConcurrent; connections are capped
	// separately, ServeOptions.MaxConnections); beyond that a review
	// is answered by the failure policy at once, rather than holding a connection for nothing.
	MaxWaiting int
	// MaxBodyBytes of an AdmissionReview (default 8 MiB; the API server's limit for one object is 3 MiB,
	// a review of an UPDATE carries two).
	MaxBodyBytes int64
	// MaxReplicas previewed (default 5000): larger sets are allowed with a warning and not replayed.
	MaxReplicas int32
	// Events, when set, receives the summary of every non-dry-run review as an Event on the set.
	Events EventRecorder
	// Metrics (default: a fresh registry).
	Metrics *Metrics
	// Logger (default: slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Server answers AdmissionReviews on /validate and serves the recent previews on /preview.
type Server struct {
	cfg     Config
	sem     chan struct{} // preview slots; blocked senders are served in arrival order
	flight  singleflight.Group
	waiting atomic.Int64
	metrics *Metrics
	log     *slog.Logger
	now     func() time.Time
	store   *previewStore
}

// Defaults of Config.
const (
	DefaultTimeout       = 3 * time.Second
	DefaultMaxConcurrent = 4
	DefaultMaxBodyBytes  = 8 << 20
	DefaultMaxReplicas   = 5000
	// EventReason is the reason of the Event that carries a preview's summary.
	EventReason = rollout.PreviewEventReason
)

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Module == nil {
		return nil, errors.New("webhook: no module")
	}
	if cfg.Source == nil {
		return nil, errors.New("webhook: no object source")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.MaxWaiting <= 0 {
		cfg.MaxWaiting = 64 * cfg.MaxConcurrent
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxReplicas <= 0 {
		cfg.MaxReplicas = DefaultMaxReplicas
	}
	if client := cfg.Client; cfg.GetSet == nil && client != nil {
		cfg.GetSet = func(ctx context.Context, t snapshot.Target, ns, name string) (*appsv1.StatefulSet, error) {
			return snapshot.GetSet(ctx, client, t, ns, name)
		}
	}
	s := &Server{cfg: cfg, sem: make(chan struct{}, cfg.MaxConcurrent), metrics: cfg.Metrics, log: cfg.Logger,
		now: cfg.Now, store: newPreviewStore(256)}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Metrics returns the server's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Handler serves POST /validate, GET /preview/NAMESPACE/NAME, GET /preview (the recent previews),
// /healthz and /readyz (200 once the caches have synced).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/validate", s.serveValidate)
	mux.HandleFunc("/preview", s.servePreviewList)
	mux.HandleFunc("/preview/", s.servePreview)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.cfg.Source.HasSynced() {
			http.Error(w, "informer caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}

// Decisions, the `decision` label of ordinal_webhook_requests_total.
const (
	DecisionAllowed      = "allowed"       // previewed and allowed
	DecisionDenied       = "denied"        // previewed and denied by a policy
	DecisionSkipped      = "skipped"       // nothing to preview (not a StatefulSet, no spec change, ...)
	DecisionFailedOpen   = "failed_open"   // no preview; allowed with a warning
	DecisionFailedClosed = "failed_closed" // no preview; denied (FailClosed)
	DecisionBadRequest   = "bad_request"   // not an AdmissionReview: HTTP 400/413, the API server's failurePolicy applies
)

func (s *Server) serveValidate(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodPost {
		http.Error(w, "POST an admission.k8s.io/v1 AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
	if err != nil {
		s.badRequest(w, start, http.StatusBadRequest, fmt.Sprintf("reading the request: %v", err))
		return
	}
	if int64(len(body)) > s.cfg.MaxBodyBytes {
		s.badRequest(w, start, http.StatusRequestEntityTooLarge, fmt.Sprintf("AdmissionReview larger than %d bytes", s.cfg.MaxBodyBytes))
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		s.badRequest(w, start, http.StatusBadRequest, fmt.Sprintf("not an AdmissionReview: %v", err))
		return
	}
	if review.Request == nil || review.Request.UID == "" {
		s.badRequest(w, start, http.StatusBadRequest, "AdmissionReview without request or request.uid")
		return
	}
	if review.APIVersion != "" && review.APIVersion != admissionv1.SchemeGroupVersion.String() {
		s.badRequest(w, start, http.StatusBadRequest, fmt.Sprintf("AdmissionReview %s: only %s is supported (admissionReviewVersions: [v1])",
			review.APIVersion, admissionv1.SchemeGroupVersion))
		return
	}
	arrival := requestArrival(r.Context(), start)
	ctx, cancel := context.WithDeadline(r.Context(), reviewDeadline(arrival, s.cfg.Timeout, r.URL.Query().Get("timeout")))
	defer cancel()
	resp, decision := s.Review(ctx, review.Request)
	op := string(review.Request.Operation)
	s.metrics.observe(op, decision, time.Since(arrival))
	out := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: resp,
	}
	b, err := json.Marshal(&out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// reviewDeadline is when a review must be answered: budget (--preview-timeout) after the request
// arrived, or sooner, 80% of the API server's own timeout after it. kube-apiserver puts that timeout in
// the URL (`?timeout=5s`: what is left of timeoutSeconds when it builds the request, rounded up to a
// second); the other 20% is for that rounding, the connection and the answer's way back. Counting from
// the arrival, not from when the handler or the preview starts, keeps a review that waited for its
// handshake or a connection slot inside the API server's timeout: issue 32, finding 2, a review answered
// after 5.12 s where the API server waited 5 s and let the edit through unchecked.
func reviewDeadline(arrival time.Time, budget time.Duration, timeoutParam string) time.Time {
	d := arrival.Add(budget)
	if t, err := time.ParseDuration(timeoutParam); err == nil && t > 0 {
		if api := arrival.Add(t - t/5); api.Before(d) {
			d = api
		}
	}
	return d
}

// sameOrdinalAnnotations reports whether two sets carry the same ordinal.dev/ annotations: the module a
// set names and the extensions it turns on change what the controller does as a spec change would. The
// controller's own record of its policies' holds (policy.AnnotationHeld) is not an edit to preview.
func sameOrdinalAnnotations(a, b map[string]string) bool {
	for _, m := range [2][2]map[string]string{{a, b}, {b, a}} {
		for k, v := range m[0] {
			if w, ok := m[1][k]; strings.HasPrefix(k, abi.AnnotationPrefix) && k != policy.AnnotationHeld && (!ok || v != w) {
				return false
			}
		}
	}
	return true
}

func (s *Server) badRequest(w http.ResponseWriter, start time.Time, code int, msg string) {
	s.metrics.observe("", DecisionBadRequest, time.Since(start))
	s.log.Warn("Bad admission request", "status", code, "err", msg)
	http.Error(w, msg, code)
}

// Review answers one admission request. It never fails: a review that cannot be previewed is answered
// by the failure policy. The decision is the metrics label.
func (s *Server) Review(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, string) {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	target, scale, ok := reviewed(req)
	if !ok {
		return resp, DecisionSkipped
	}
	budget := s.cfg.Timeout // what the review has left from its arrival, for the answer to a timeout
	if d, ok := ctx.Deadline(); ok {
		budget = time.Until(d).Round(time.Millisecond)
	}
	var old, cur *appsv1.StatefulSet
	var skip bool
	var err error
	if scale {
		old, cur, skip, err = s.scaledSets(ctx, req, target)
	} else {
		old, cur, skip, err = editedSets(req)
	}
	switch {
	case err != nil:
		return s.noPreview(req, resp, err.Error())
	case skip:
		return resp, DecisionSkipped
	}
	if r := cur.Spec.Replicas; r != nil && *r > s.cfg.MaxReplicas {
		resp.Warnings = limitWarnings([]string{fmt.Sprintf("no rollout preview: %d replicas is more than this webhook previews (%d)", *r, s.cfg.MaxReplicas)})
		return resp, DecisionSkipped
	}
	t0 := time.Now()
	spec := rollout.SpecDigest(&cur.Spec) // of the set as the API server will store it, before the preview reads it
	res, why := s.previewReview(ctx, req, target, old, cur, budget)
	if res == nil {
		return s.noPreview(req, resp, why)
	}
	resp.Warnings = limitWarnings(res.Summary.Lines)
	decision := DecisionAllowed
	if denials := s.denials(res); len(denials) > 0 {
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: "ordinal: edit of StatefulSet " + cur.Name + " denied by " + strings.Join(denials, "; ")}
		decision = DecisionDenied
	}
	s.record(req, cur, spec, resp, res, decision, t0)
	return resp, decision
}

// reviewed says whether the webhook previews req, and the kind of set it edits: a create or update of a
// StatefulSet of either kind, or an update of its scale subresource (scale).
func reviewed(req *admissionv1.AdmissionRequest) (t snapshot.Target, scale, ok bool) {
	if req.SubResource == "scale" {
		t = snapshot.TargetOfGroup(req.Resource.Group) // apps/v1 for a group of neither kind: not previewed
		return t, true, req.Resource.Group == t.GroupVersion.Group && req.Resource.Resource == t.Resource &&
			req.Kind.Kind == "Scale" && req.Operation == admissionv1.Update
	}
	t = snapshot.TargetOfGroup(req.Kind.Group)
	return t, false, req.Kind.Group == t.GroupVersion.Group && req.Kind.Kind == "StatefulSet" && req.SubResource == "" &&
		(req.Operation == admissionv1.Create || req.Operation == admissionv1.Update)
}

// editedSets decodes the review's sets: cur as the API server is about to store it, named as the request
// names it, and old before an update (nil for a create). skip: an update the controller acts on no
// differently, so there is nothing to preview.
func editedSets(req *admissionv1.AdmissionRequest) (old, cur *appsv1.StatefulSet, skip bool, err error) {
	cur = &appsv1.StatefulSet{}
	if err := json.Unmarshal(req.Object.Raw, cur); err != nil || len(req.Object.Raw) == 0 {
		return nil, nil, false, fmt.Errorf("request.object is not a StatefulSet: %v", errOr(err, "empty"))
	}
	if req.Operation == admissionv1.Update {
		old = &appsv1.StatefulSet{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil || len(req.OldObject.Raw) == 0 {
			return nil, nil, false, fmt.Errorf("request.oldObject is not a StatefulSet: %v", errOr(err, "empty"))
		}
		if apiequality.Semantic.DeepEqual(old.Spec, cur.Spec) && sameOrdinalAnnotations(old.Annotations, cur.Annotations) {
			return nil, nil, true, nil // metadata-only change: the controller does nothing new
		}
		if cur.DeletionTimestamp != nil {
			return nil, nil, true, nil
		}
	}
	if cur.Namespace == "" {
		cur.Namespace = req.Namespace
	}
	if cur.Name == "" {
		cur.Name = req.Name
	}
	return old, cur, false, nil
}

// noPreview answers a review that has no preview, for this reason, by the failure policy.
func (s *Server) noPreview(req *admissionv1.AdmissionRequest, resp *admissionv1.AdmissionResponse, reason string) (*admissionv1.AdmissionResponse, string) {
	s.log.Warn("No preview", "set", req.Namespace+"/"+req.Name, "operation", req.Operation, "uid", req.UID, "reason", reason)
	if s.cfg.FailClosed {
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: "ordinal: no rollout preview (" + reason + "); the webhook runs with --failure-policy=closed"}
		return resp, DecisionFailedClosed
	}
	resp.Warnings = limitWarnings([]string{"no rollout preview (" + reason + "); the edit was not checked"})
	return resp, DecisionFailedOpen
}

// previewReview previews the review's edit, or says why it has no preview (nil result): the caches are not
// ready, the review's time is gone, or the preview failed.
func (s *Server) previewReview(ctx context.Context, req *admissionv1.AdmissionRequest, target snapshot.Target, old, cur *appsv1.StatefulSet,
	budget time.Duration) (*preview.Result, string) {
	if !s.cfg.Source.HasSynced() {
		return nil, "the webhook's informer caches have not synced yet"
	}
	if ctx.Err() != nil { // the time went on the way here: answer now rather than start a preview nobody waits for
		return nil, "the review's deadline passed before its preview could start: it counts from when the request arrived, " +
			"and the connection's handshake and its wait for a slot took it"
	}
	res, err := s.sharedPreview(ctx, req, target, old, cur)
	if err != nil {
		if errors.Is(err, wasm.ErrStillChecking) { // a module or policy the set names is new: the next review gets it
			return nil, err.Error()
		}
		if ctx.Err() != nil || errors.Is(err, errPreviewTimedOut) {
			return nil, fmt.Sprintf("timed out: the replay took longer than the webhook's budget of %s", budget)
		}
		return nil, err.Error()
	}
	return res, ""
}

// denials are the deny policies the previewed edit breaks, each in words.
func (s *Server) denials(res *preview.Result) []string {
	var denials []string
	if s.cfg.DenyStuckRollouts && res.Summary.Blocked != "" {
		denials = append(denials, "--deny-stuck-rollouts: "+res.Summary.Blocked)
	}
	if s.cfg.DenyPVCDeletion && len(res.Summary.DeletedClaims) > 0 {
		denials = append(denials, fmt.Sprintf("--deny-pvc-deletion: %s deletes PersistentVolumeClaims and their data: %s (set persistentVolumeClaimRetentionPolicy.whenScaled: Retain to keep them)",
			res.Summary.Change, strings.Join(res.Summary.DeletedClaims, ", ")))
	}
	return denials
}

// record keeps the answered review's preview for /preview, puts it in an Event on the set when the edit
// will be stored (allowed, and no dry run), with the generation and the digest of the spec (spec) it gives
// the set, and logs the decision with the time since the preview began (t0).
func (s *Server) record(req *admissionv1.AdmissionRequest, cur *appsv1.StatefulSet, spec string, resp *admissionv1.AdmissionResponse, res *preview.Result,
	decision string, t0 time.Time) {
	dryRun := req.DryRun != nil && *req.DryRun
	s.store.put(storedPreview{Namespace: cur.Namespace, Name: cur.Name, UID: string(req.UID), Operation: string(req.Operation),
		DryRun: dryRun, Time: s.now().UTC().Format(time.RFC3339), Allowed: resp.Allowed, Warnings: resp.Warnings,
		Text: res.Text, Preview: res.Preview})
	if s.cfg.Events != nil && !dryRun && resp.Allowed {
		// The generation the edit gives the set (the API server raised it before calling validating webhooks; a
		// scale's is scaledSets'), so that kubectl ordinal status can tell an edit stored without a preview.
		gen := map[string]string{rollout.AnnotationPreviewedGeneration: strconv.FormatInt(cur.Generation, 10), rollout.AnnotationPreviewedSpec: spec}
		s.cfg.Events.AnnotatedEventf(cur, gen, corev1.EventTypeNormal, EventReason, "%s", eventMessage(cur.Generation, res))
	}
	s.log.Info("Reviewed StatefulSet", "set", cur.Namespace+"/"+cur.Name, "operation", req.Operation, "dryRun", dryRun,
		"decision", decision, "warnings", len(resp.Warnings), "outcome", res.Preview.Outcome.Result, "duration", time.Since(t0))
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// errPreviewTimedOut: the shared preview outlasted the server's budget.
var errPreviewTimedOut = errors.New("preview timed out")

// errTooManyWaiting answers a review when MaxWaiting reviews already wait.
var errTooManyWaiting = errors.New("too many reviews waiting for a preview")

// sharedPreview previews the edit, sharing the work with identical reviews made at the same time (a
// client retrying, kubectl apply and its dry run, a burst from a GitOps tool): 200 concurrent reviews
// once made 16 previews and 184 fail-open answers. The shared preview runs under the server's own budget,
// not the first caller's, and waits for a slot in arrival order; each caller waits at most until its own
// deadline.
func (s *Server) sharedPreview(ctx context.Context, req *admissionv1.AdmissionRequest, target snapshot.Target, old, cur *appsv1.StatefulSet) (*preview.Result, error) {
	if s.waiting.Add(1) > int64(s.cfg.MaxWaiting) {
		s.waiting.Add(-1)
		return nil, errTooManyWaiting
	}
	s.metrics.Waiting.Inc()
	defer func() { s.waiting.Add(-1); s.metrics.Waiting.Dec() }()
	ch := s.flight.DoChan(previewKey(req), func() (any, error) {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
		defer cancel()
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
		case <-pctx.Done():
			return nil, fmt.Errorf("too many previews in flight: %w", pctx.Err())
		}
		// The replay stops itself at 70% of what is left of the shortest deadline (the caller's or the
		// server's), so that it answers with the part it replayed and an estimate, rather than nothing.
		t0 := time.Now()
		soft, _ := pctx.Deadline()
		if d, ok := ctx.Deadline(); ok && d.Before(soft) {
			soft = d
		}
		budget := replay.Budget{Syncs: s.cfg.PreviewSyncs, Deadline: t0.Add(soft.Sub(t0) * 7 / 10)}
		res, err := s.preview(pctx, target, old, cur, budget)
		s.metrics.PreviewDuration.Observe(time.Since(t0).Seconds())
		if err != nil && pctx.Err() != nil {
			err = fmt.Errorf("%w: %w", errPreviewTimedOut, err)
		}
		return res, err
	})
	select {
	case r := <-ch:
		if r.Shared {
			s.metrics.SharedPreviews.Inc()
		}
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*preview.Result), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// previewKey identifies a preview by what it depends on that the request decides: the namespace, the
// operation and the objects before and after. (The rest of the world is the informer caches at that
// moment, the same for reviews made at the same time.)
func previewKey(req *admissionv1.AdmissionRequest) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(req.Namespace), []byte(req.Name), []byte(req.Operation), req.OldObject.Raw, req.Object.Raw} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// preview replays the edit old -> cur (old nil: a create) of a set of kind t on the namespace's objects.
func (s *Server) preview(ctx context.Context, t snapshot.Target, old, cur *appsv1.StatefulSet, budget replay.Budget) (*preview.Result, error) {
	pods, revs, claims, err := s.cfg.Source.Namespace(cur.Namespace)
	if err != nil {
		return nil, fmt.Errorf("listing the namespace's objects: %w", err)
	}
	in := preview.Input{Old: old, New: cur, Objects: snapshot.Objects{Target: t, Pods: pods, Revisions: revs, Claims: claims},
		Module: s.cfg.Module, NamedModule: s.cfg.NamedModule, NamedPolicy: s.cfg.NamedPolicy, Features: s.cfg.Features, Model: s.cfg.Model, Now: s.now(), Budget: budget}
	if s.cfg.Client != nil { // the policies the edit names, with what they read, as `kubectl ordinal preview` gives them
		pctx, err := policy.ReadLiveContext(ctx, s.cfg.Client, cur, pods, s.cfg.NamedPolicy, s.cfg.SignalsConfigMap)
		if err != nil {
			return nil, fmt.Errorf("reading what the set's policies read: %w", err)
		}
		in.Budgets, in.Nodes, in.Signals = pctx.Budgets, pctx.Nodes, pctx.Signals
		in.Events = preview.SetEvents(ctx, s.cfg.Client, old) // how long its pods take to go: the preview's pace
	}
	return preview.Preview(ctx, in)
}

// eventMessage is the Event's message: the generation the edit gives the set, then the summary lines (an
// Event message is at most 1 KiB; the complete preview is on /preview).
func eventMessage(gen int64, r *preview.Result) string {
	msg := strings.Join(r.Summary.Lines, "; ")
	if msg == "" {
		msg = "no pod changes"
	}
	return truncateRunes(rollout.PreviewEventMessage(gen, msg), 1024)
}

// ---- recent previews ----

type storedPreview struct {
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	UID       string          `json:"requestUID"`
	Operation string          `json:"operation"`
	DryRun    bool            `json:"dryRun"`
	Time      string          `json:"time"`
	Allowed   bool            `json:"allowed"`
	Warnings  []string        `json:"warnings"`
	Text      string          `json:"-"`
	Preview   *replay.Preview `json:"preview"`
}

// previewStore keeps the latest preview per set, and at most max sets (the oldest go first).
type previewStore struct {
	mu    sync.Mutex
	max   int
	order []string
	byKey map[string]storedPreview
}

func newPreviewStore(max int) *previewStore {
	return &previewStore{max: max, byKey: map[string]storedPreview{}}
}

func (ps *previewStore) put(p storedPreview) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	key := p.Namespace + "/" + p.Name
	if _, ok := ps.byKey[key]; ok {
		for i, k := range ps.order {
			if k == key {
				ps.order = append(ps.order[:i], ps.order[i+1:]...)
				break
			}
		}
	}
	ps.order = append(ps.order, key)
	ps.byKey[key] = p
	for len(ps.order) > ps.max {
		delete(ps.byKey, ps.order[0])
		ps.order = ps.order[1:]
	}
}

func (ps *previewStore) get(key string) (storedPreview, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.byKey[key]
	return p, ok
}

func (ps *previewStore) keys() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]string(nil), ps.order...)
}

// servePreview: GET /preview/NAMESPACE/NAME, the latest preview of that set as text (?format=json for JSON).
func (s *Server) servePreview(w http.ResponseWriter, r *http.Request) {
	key := strings.Trim(strings.TrimPrefix(r.URL.Path, "/preview/"), "/")
	if strings.Count(key, "/") != 1 {
		http.Error(w, "GET /preview/NAMESPACE/NAME", http.StatusNotFound)
		return
	}
	p, ok := s.store.get(key)
	if !ok {
		http.Error(w, "no preview of StatefulSet "+key+" since this webhook started", http.StatusNotFound)
		return
	}
	if r.URL.Query().Get("format") == "json" || strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.MarshalIndent(p, "", "  ")
		_, _ = w.Write(append(b, '\n'))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	verdict := "allowed"
	if !p.Allowed {
		verdict = "denied"
	}
	dry := ""
	if p.DryRun {
		dry = " (dry run)"
	}
	fmt.Fprintf(w, "%s %s/%s at %s%s: %s\n\n%s", p.Operation, p.Namespace, p.Name, p.Time, dry, verdict, p.Text)
}

// servePreviewList: GET /preview, the sets with a stored preview, oldest first.
func (s *Server) servePreviewList(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	for _, k := range s.store.keys() {
		fmt.Fprintln(w, k)
	}
}

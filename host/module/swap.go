package module

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// Reasons of ordinal_module_refusals_total and of ModuleRefused events.
const (
	RefusedLoad              = "load"               // not a valid module: does not compile, lacks exports, traps at start
	RefusedABI               = "abi"                // speaks another ABI version
	RefusedKubernetesVersion = "kubernetes-version" // reproduces another Kubernetes minor release
	RefusedFeatures          = "features"           // does not know a feature gate the controller passes
	RefusedCustomSetKinds    = "custom-set-kinds"   // cannot own objects by a CRD kind the controller reconciles
	RefusedConformance       = "conformance"        // fails a bundled conformance case
)

// Event reasons of the hot swap (on the module's source object).
const (
	EventModuleSwapped = "ModuleSwapped"
	EventModuleRefused = "ModuleRefused"
)

// SwapConfig configures a Swapper.
type SwapConfig struct {
	Ref     *Ref
	Metrics Metrics // nil: none
	// Load compiles and instantiates a candidate (wasm.Load with the controller's
	// limits and compilation cache); it refuses another ABI itself.
	Load func(ctx context.Context, code []byte) (*wasm.Module, error)
	// Cases are the conformance cases every candidate must pass, with their gates
	// pinned (conformance.Pinned). Required unless SkipGate.
	Cases []conformance.Case
	// SkipGate lets a candidate become active without running the cases. For tests
	// only: the action firewall still checks every plan.
	SkipGate bool
	// GateParallel is how many cases run at once (default GOMAXPROCS). Syncs keep running on the
	// old module meanwhile and share the CPU; the gate is short (1183 cases: ~0.75 s on 2 cores with
	// two sync workers busy, BenchmarkHotSwap), so finishing it sooner beats leaving it a core.
	GateParallel int
	// Features are the controller's feature-gate overrides: a candidate must know them.
	Features map[string]bool
	// CustomSetKind: the CRD kind the controller reconciles (snapshot.CRDTarget's String(), "": none), so a
	// candidate must name the snapshot's set in the owner references it writes (describe's
	// customSetKinds); one that cannot would write apps/v1 owners, which the firewall refuses on every plan.
	CustomSetKind string
	// KubernetesVersion the cases come from (default conformance.OracleKubernetesVersion);
	// a candidate must reproduce the same minor release.
	KubernetesVersion string
	// Recorder records ModuleSwapped/ModuleRefused events (nil: none).
	Recorder record.EventRecorder
	// Now is the clock a check that ran out of time is retried by (nil: time.Now).
	Now func() time.Time
}

// Metrics is where a Swapper publishes its checks, refusals and swaps (the controller's Prometheus
// metrics: ordinal_module_check_duration_seconds, ordinal_module_refusals_total, ordinal_module_swaps_total
// and ordinal_module_info).
type Metrics interface {
	ModuleChecked(stage string, d time.Duration) // stage: load, gate, total
	ModuleRefused(reason string)
	ModuleSwapped(active Info)
}

// Swapper checks candidate modules and makes those that pass active: compile
// (with the compilation cache) and instantiate, check describe (ABI, Kubernetes
// version, feature gates), run every bundled conformance case, then swap the
// Ref atomically. A refused candidate is closed; the active module keeps
// running; a log line, an event and ordinal_module_refusals_total say why.
type Swapper struct {
	cfg SwapConfig

	mu          sync.Mutex   // one candidate at a time
	lastRefused string       // digest of the last refused candidate
	lastRefusal wasm.Refusal // its refusal: for good, or (out of time) until RetryAt
	status      SwapStatus
}

// SwapStatus is what /module and /readyz?verbose report.
type SwapStatus struct {
	Active      Info         `json:"active"`
	Swaps       int          `json:"swaps"`
	LastSwap    *SwapTiming  `json:"lastSwap,omitempty"`
	LastRefusal *RefusalInfo `json:"lastRefusal,omitempty"`
	Refusals    int          `json:"refusals"`
}

// SwapTiming is how long the checks of the last accepted candidate took.
type SwapTiming struct {
	At        time.Time     `json:"at"`
	Source    string        `json:"source"`
	Load      time.Duration `json:"load"`
	Gate      time.Duration `json:"gate"`
	Total     time.Duration `json:"total"`
	GateCases int           `json:"gateCases"`
}

// RefusalInfo describes the last refused candidate.
type RefusalInfo struct {
	At     time.Time `json:"at"`
	Source string    `json:"source"`
	Digest string    `json:"digest"`
	Reason string    `json:"reason"`
	Detail string    `json:"detail"`
}

// RefusedError is a candidate's refusal.
type RefusedError struct {
	Reason string
	Digest string
	Err    error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("module %s refused (%s): %v", e.Digest, e.Reason, e.Err)
}
func (e *RefusedError) Unwrap() error { return e.Err }

// NewSwapper returns a swapper over cfg.Ref, whose current module is the active one.
func NewSwapper(cfg SwapConfig) (*Swapper, error) {
	if cfg.Ref == nil || cfg.Load == nil {
		return nil, errors.New("swapper: Ref and Load are required")
	}
	if len(cfg.Cases) == 0 && !cfg.SkipGate {
		return nil, errors.New("swapper: no conformance cases to check candidates with")
	}
	if cfg.GateParallel <= 0 {
		cfg.GateParallel = runtime.GOMAXPROCS(0)
	}
	if cfg.KubernetesVersion == "" {
		cfg.KubernetesVersion = conformance.OracleKubernetesVersion
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Swapper{cfg: cfg}
	_, s.status.Active = cfg.Ref.Load()
	return s, nil
}

// SetMetrics sets where refusals, swaps and the active module are published.
func (s *Swapper) SetMetrics(m Metrics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Metrics = m
}

// SetRecorder sets the recorder of ModuleSwapped/ModuleRefused events.
func (s *Swapper) SetRecorder(r record.EventRecorder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Recorder = r
}

// RecheckDue reports whether the last candidate was refused without a verdict (its check ran out of time)
// and that refusal holds no longer: offering its bytes again checks them again. The module sources re-offer
// unchanged bytes then (a file or ConfigMap that does not change would otherwise leave it refused).
func (s *Swapper) RecheckDue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastRefused != "" && !s.lastRefusal.Holds(s.cfg.Now())
}

// Status returns the active module and the history of swaps and refusals.
func (s *Swapper) Status() SwapStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	_, st.Active = s.cfg.Ref.Load()
	return st
}

// Check loads code and runs every check; on success the caller owns the
// returned module. It is what Offer does before swapping, and what the
// controller runs on the module it starts with.
func (s *Swapper) Check(ctx context.Context, code []byte) (*wasm.Module, SwapTiming, error) {
	digest := fmt.Sprintf("sha256:%x", sha256.Sum256(code))
	var tm SwapTiming
	t0 := time.Now()
	m, err := s.cfg.Load(ctx, code)
	tm.Load = time.Since(t0)
	if err != nil {
		reason := RefusedLoad
		var we *wasm.Error
		if errors.As(err, &we) && we.Kind == wasm.ErrUnsupportedABI {
			reason = RefusedABI
		}
		return nil, tm, &RefusedError{Reason: reason, Digest: digest, Err: err}
	}
	refuse := func(reason string, err error) (*wasm.Module, SwapTiming, error) {
		m.Close(context.WithoutCancel(ctx))
		tm.Total = time.Since(t0)
		return nil, tm, &RefusedError{Reason: reason, Digest: digest, Err: err}
	}
	d := m.Describe()
	if minor(d.KubernetesVersion) != minor(s.cfg.KubernetesVersion) {
		return refuse(RefusedKubernetesVersion, fmt.Errorf("the module reproduces Kubernetes %s; this controller and its conformance cases are for %s",
			d.KubernetesVersion, s.cfg.KubernetesVersion))
	}
	for g := range s.cfg.Features {
		if _, ok := d.Features[g]; !ok {
			return refuse(RefusedFeatures, fmt.Errorf("the module does not know the feature gate %q the controller passes (--feature-gates)", g))
		}
	}
	if s.cfg.CustomSetKind != "" && !d.CustomSetKinds {
		return refuse(RefusedCustomSetKinds, fmt.Errorf("the module cannot reconcile %s sets (its describe lacks customSetKinds: it owns objects as apps/v1 only)", s.cfg.CustomSetKind))
	}
	if !s.cfg.SkipGate {
		t1 := time.Now()
		cases := s.cfg.Cases
		if !d.WriteFailures { // a module that does not read writeFailures is not held to what follows a refusal
			cases = conformance.WithoutWriteFailures(cases)
		}
		res := conformance.Gate(ctx, cases, m.Reconcile, s.cfg.GateParallel, 1)
		tm.Gate, tm.GateCases = time.Since(t1), len(cases)
		if !res.OK() {
			return refuse(RefusedConformance, res.Err()) // wraps a case's timeout: no verdict (wasm.RefusalOf)
		}
	}
	tm.Total = time.Since(t0)
	return m, tm, nil
}

// CheckOnly is Check without its timings: the gate for a module a Registry is supplied at run time.
func (s *Swapper) CheckOnly(ctx context.Context, code []byte) (*wasm.Module, error) {
	m, _, err := s.Check(ctx, code)
	return m, err
}

// minor returns "v1.37" of "v1.37.1".
func minor(v string) string {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// Offer checks a candidate from source and, if it passes, makes it active.
// eventObj is the object its events are recorded on (nil: none). A candidate
// equal to the active module, or to the last one refused while that refusal
// holds, is ignored: a refusal on the module's content holds until other bytes
// are offered, one whose check ran out of time (a compile or a case on a loaded
// machine: no verdict) until wasm.RecheckAfter has passed, when the next offer
// checks it again (wasm.Refusal, as the registries do). It returns whether the
// module was swapped, and the refusal if it was refused.
func (s *Swapper) Offer(ctx context.Context, source string, code []byte, eventObj *corev1.ObjectReference) (bool, error) {
	logger := klog.FromContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	digest := fmt.Sprintf("sha256:%x", sha256.Sum256(code))
	_, active := s.cfg.Ref.Load()
	if digest == active.Digest || digest == s.lastRefused && s.lastRefusal.Holds(s.cfg.Now()) {
		logger.V(2).Info("Module candidate unchanged; ignored", "source", source, "digest", digest)
		return false, nil
	}
	logger.Info("Checking a new reconcile module", "source", source, "digest", digest, "bytes", len(code),
		"cases", len(s.cfg.Cases), "gate", !s.cfg.SkipGate)
	m, tm, err := s.Check(ctx, code)
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.ModuleChecked("load", tm.Load)
		if tm.Gate > 0 {
			s.cfg.Metrics.ModuleChecked("gate", tm.Gate)
		}
	}
	if err != nil && ctx.Err() != nil { // stopped (the controller ends): no verdict on the module
		logger.Info("Stopped checking a new reconcile module", "source", source, "digest", digest, "err", err)
		return false, err
	}
	if err != nil {
		var re *RefusedError
		errors.As(err, &re)
		s.lastRefused, s.lastRefusal = digest, wasm.RefusalOf(err, s.cfg.Now())
		s.status.Refusals++
		s.status.LastRefusal = &RefusalInfo{At: s.cfg.Now(), Source: source, Digest: digest, Reason: re.Reason, Detail: re.Err.Error()}
		if s.cfg.Metrics != nil {
			s.cfg.Metrics.ModuleRefused(re.Reason)
		}
		logger.Error(re.Err, "Refused the new reconcile module; the active module keeps running", "source", source,
			"digest", digest, "reason", re.Reason, "active", active.Digest)
		retry := ""
		if at := s.lastRefusal.RetryAt; !at.IsZero() {
			retry = fmt.Sprintf(" (out of time, not a verdict: offered again from %s, it is checked again)", at.UTC().Format(time.RFC3339))
		}
		s.event(eventObj, corev1.EventTypeWarning, EventModuleRefused, fmt.Sprintf("Refused module %s from %s (%s): %s%s; still running %s %s (%s)",
			digest, source, re.Reason, hostplan.Truncate(re.Err.Error(), 600), retry, active.Describe.Module, active.Describe.ModuleVersion, active.Digest))
		return false, err
	}
	info := InfoOf(m)
	info.Source = source
	info.ActiveSince = time.Now()
	s.cfg.Ref.Install(m, info, func() { _ = m.Close(context.Background()) })
	s.lastRefused, s.lastRefusal = "", wasm.Refusal{}
	tm.At, tm.Source = info.ActiveSince, source
	s.status.Swaps++
	s.status.LastSwap = &tm
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.ModuleSwapped(info)
		s.cfg.Metrics.ModuleChecked("total", tm.Total)
	}
	logger.Info("Swapped the reconcile module", "source", source, "module", info.Describe.Module,
		"version", info.Describe.ModuleVersion, "digest", info.Digest, "previous", active.Digest,
		"load", tm.Load.String(), "gate", tm.Gate.String(), "cases", tm.GateCases)
	s.event(eventObj, corev1.EventTypeNormal, EventModuleSwapped, fmt.Sprintf("Module %s %s (%s) from %s is active (passed %d conformance cases); was %s",
		info.Describe.Module, info.Describe.ModuleVersion, info.Digest, source, tm.GateCases, active.Digest))
	return true, nil
}

func (s *Swapper) event(obj *corev1.ObjectReference, typ, reason, msg string) {
	if s.cfg.Recorder == nil || obj == nil {
		return
	}
	s.cfg.Recorder.Event(obj, typ, reason, msg)
}

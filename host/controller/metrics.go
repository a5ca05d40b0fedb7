package controller

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// Metrics are the controller's Prometheus metrics, on their own registry.
type Metrics struct {
	Registry *prometheus.Registry

	syncs          *prometheus.CounterVec   // result
	syncDuration   prometheus.Histogram     // whole sync
	guestDuration  prometheus.Histogram     // the module call
	policyDuration *prometheus.HistogramVec // one policy call, by policy
	policyFailures *prometheus.CounterVec   // policy, reason: calls that failed (the policy held nothing back)
	actions        *prometheus.CounterVec   // verb, kind, result
	errors         *prometheus.CounterVec   // stage
	staleSkips     *prometheus.CounterVec   // group, resource
	moduleInfo     *prometheus.GaugeVec     // version, digest, kubernetes_version, abi
	leader         prometheus.Gauge         // 1 while leading
	shardsHeld     prometheus.Gauge         // shard Leases held (sharded mode)
	// shardInformersFiltered: 1 while the informers cache only the held shards (caches.go)
	shardInformersFiltered prometheus.Gauge
	cachedObjects          *cachedCollector     // objects the informers hold, by resource
	setCaches              prometheus.Gauge     // sets whose encoded objects and session are kept (set_cache.go)
	snapshotBytes          prometheus.Histogram // snapshot size
	queueDepth             prometheus.GaugeFunc

	moduleSwaps    prometheus.Counter       // modules that became active after the startup one
	moduleRefusals *prometheus.CounterVec   // reason
	moduleCheck    *prometheus.HistogramVec // stage: load, gate, total
	planRefusals   *prometheus.CounterVec   // rule
	// deadlinesExceeded: rollouts that passed their progress deadline (extension progress-deadline)
	deadlinesExceeded prometheus.Counter
}

// Label values of ordinal_syncs_total{result}.
const (
	resultSuccess  = "success"   // plan applied (possibly empty)
	resultError    = "error"     // module failure, write failure, SyncFailed plan, rejected snapshot
	resultStale    = "stale"     // skipped: the informers have not seen the controller's last writes
	resultNotFound = "not_found" // the set is gone
	resultYielded  = "yielded"   // left alone: another controller acts on the set (see otherController)
	resultInvalid  = "invalid"   // left alone: a custom target's set apps/v1 validation refuses (snapshot.InvalidSetError)
	// left alone: the set names a module the controller does not have (ordinal.dev/module)
	resultUnknownModule = "unknown_module"
	resultHeld          = "held" // a policy held writes back and said when to look again
)

// Label values of ordinal_errors_total{stage}.
const (
	stageSnapshot = "snapshot" // building the snapshot
	stageGuest    = "guest"    // the module call failed (trap, timeout, OOM)
	stagePlan     = "plan"     // the plan was undecodable or reports an error
	stageApply    = "apply"    // a write failed
	stageAdoption = "adoption" // the uncached re-check before adoption refused it
	stageFirewall = "firewall" // the action firewall refused the plan
)

// NewMetrics registers the controller's metrics, plus Go and process collectors.
func NewMetrics(queueDepth func() float64) *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	buckets := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m.syncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ordinal_syncs_total", Help: "StatefulSet syncs by result (success, error, stale, not_found, yielded, invalid, unknown_module).",
	}, []string{"result"})
	m.syncDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ordinal_sync_duration_seconds", Help: "Duration of one sync: snapshot, module call and writes.", Buckets: buckets,
	})
	m.guestDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ordinal_guest_duration_seconds", Help: "Duration of the reconcile module call.", Buckets: buckets,
	})
	m.policyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ordinal_policy_duration_seconds", Help: "Duration of one policy call: its input written, the call, its answer checked (README \"Policies\").", Buckets: buckets,
	}, []string{"policy"})
	m.policyFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ordinal_policy_failures_total", Help: "Policy calls that failed, so the policy held nothing back, by policy and reason (trap, timeout, out_of_memory, canceled, skipped, invalid_answer, undecided, input, error).",
	}, []string{"policy", "reason"})
	m.actions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ordinal_actions_total", Help: "API writes issued from plans, by verb, kind and result (ok, error).",
	}, []string{"verb", "kind", "result"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ordinal_errors_total", Help: "Sync errors by stage (snapshot, guest, plan, firewall, apply, adoption).",
	}, []string{"stage"})
	m.staleSkips = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ordinal_stale_skips_total", Help: "Syncs skipped because an informer had not yet seen the controller's own writes.",
	}, []string{"group", "resource"})
	m.moduleInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ordinal_module_info", Help: "The active reconcile module (value 1).",
	}, []string{"module", "version", "digest", "kubernetes_version", "abi"})
	m.shardsHeld = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ordinal_shards_held", Help: "Shard Leases this replica holds (--shards above 1), whether its sets are synced yet or being given up.",
	})
	m.shardInformersFiltered = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ordinal_shard_informers_filtered", Help: "1 when the API server filters the informers by shard (KEP-5866): a sharded replica caches only the shards it holds; 0 when every replica caches every namespace (unsharded, or a server without the feature).",
	})
	m.cachedObjects = &cachedCollector{desc: prometheus.NewDesc("ordinal_cached_objects",
		"Objects the controller's informers hold, by resource (pods, controllerrevisions, persistentvolumeclaims, the set kinds).", []string{"resource"}, nil)}
	m.setCaches = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ordinal_set_caches", Help: "Sets whose encoded objects and module session are kept between syncs: those synced within --set-cache-idle.",
	})
	m.leader = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ordinal_leader", Help: "1 while this replica holds the leader lease (or runs without leader election).",
	})
	m.snapshotBytes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ordinal_snapshot_bytes", Help: "Size of the snapshots sent to the module.",
		Buckets: prometheus.ExponentialBuckets(1024, 4, 10),
	})
	m.moduleSwaps = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ordinal_module_swaps_total", Help: "Reconcile modules that passed the checks and became active while running (hot swaps).",
	})
	m.moduleRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ordinal_module_refusals_total", Help: "Candidate reconcile modules refused (the old one kept running), by reason: load, abi, kubernetes-version, features, conformance.",
	}, []string{"reason"})
	m.moduleCheck = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ordinal_module_check_duration_seconds", Help: "Checking a candidate module, by stage: load (compile with cache, instantiate, describe), gate (conformance cases), total.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"stage"})
	m.planRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ordinal_plan_refusals_total", Help: "Plans refused by the action firewall (nothing applied), by the first rule violated.",
	}, []string{"rule"})
	m.deadlinesExceeded = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ordinal_progress_deadline_exceeded_total", Help: "Rollouts that passed their progress deadline (ordinal.dev/progress-deadline-seconds): the set's Progressing condition turned False, ProgressDeadlineExceeded.",
	})
	cs := []prometheus.Collector{m.deadlinesExceeded, m.syncs, m.syncDuration, m.guestDuration, m.policyDuration, m.policyFailures, m.actions, m.errors, m.staleSkips,
		m.moduleInfo, m.leader, m.shardsHeld, m.shardInformersFiltered, m.cachedObjects, m.setCaches, m.snapshotBytes, m.moduleSwaps, m.moduleRefusals, m.moduleCheck, m.planRefusals,
		// The runtime's GC series too (go_gc_heap_live_bytes: the heap the last GC kept, whatever the GC's
		// phase now), as kube-controller-manager publishes them: make bench-scale compares the two with it.
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsGC)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
	if queueDepth != nil {
		m.queueDepth = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ordinal_queue_depth", Help: "StatefulSets waiting in the work queue.",
		}, queueDepth)
		cs = append(cs, m.queueDepth)
	}
	useClientGoMetrics()
	cs = append(cs, clientGoCollectors()...)
	m.Registry.MustRegister(cs...)
	// Every label value a counter can take is there from the start, at zero, so rate() and alerts see
	// a series before the first event rather than no data.
	for _, r := range []string{resultSuccess, resultError, resultStale, resultNotFound, resultYielded, resultInvalid, resultUnknownModule, resultHeld} {
		m.syncs.WithLabelValues(r)
	}
	for _, s := range []string{stageSnapshot, stageGuest, stagePlan, stageApply, stageAdoption, stageFirewall} {
		m.errors.WithLabelValues(s)
	}
	for _, r := range []string{module.RefusedLoad, module.RefusedABI, module.RefusedKubernetesVersion, module.RefusedFeatures, module.RefusedCustomSetKinds, module.RefusedConformance} {
		m.moduleRefusals.WithLabelValues(r)
	}
	for _, r := range []firewall.Rule{firewall.RuleKindVerb, firewall.RuleNamespace, firewall.RuleName, firewall.RuleOwner,
		firewall.RulePatch, firewall.RuleObject, firewall.RuleStatus} {
		m.planRefusals.WithLabelValues(string(r))
	}
	for _, gr := range [][2]string{{"apps", "statefulsets"}, {snapshot.CRDTarget.GroupVersion.Group, snapshot.CRDTarget.Resource}, {"", "pods"}, {"apps", "controllerrevisions"}, {"", "persistentvolumeclaims"}} {
		m.staleSkips.WithLabelValues(gr[0], gr[1])
	}
	return m
}

// SetModule publishes the active module in ordinal_module_info.
func (m *Metrics) SetModule(info module.Info) {
	m.moduleInfo.Reset()
	m.moduleInfo.WithLabelValues(info.Describe.Module, info.Describe.ModuleVersion, info.Digest,
		info.Describe.KubernetesVersion, strconv.Itoa(info.Describe.ABI)).Set(1)
}

// SetLeader sets ordinal_leader.
func (m *Metrics) SetLeader(leading bool) {
	if leading {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
}

// ModuleChecked observes a stage of a candidate module's check (module.Metrics).
func (m *Metrics) ModuleChecked(stage string, d time.Duration) {
	m.moduleCheck.WithLabelValues(stage).Observe(d.Seconds())
}

// ModuleRefused counts a refused candidate module (module.Metrics).
func (m *Metrics) ModuleRefused(reason string) { m.moduleRefusals.WithLabelValues(reason).Inc() }

// ModuleSwapped counts a hot swap and publishes the new active module (module.Metrics).
func (m *Metrics) ModuleSwapped(active module.Info) {
	m.SetModule(active)
	m.moduleSwaps.Inc()
}

// setShardInformersFiltered sets ordinal_shard_informers_filtered.
func (m *Metrics) setShardInformersFiltered(filtered bool) {
	v := 0.0
	if filtered {
		v = 1
	}
	m.shardInformersFiltered.Set(v)
}

// setCached makes ordinal_cached_objects report what count returns (by resource) at each scrape.
func (m *Metrics) setCached(count func() map[string]int) { m.cachedObjects.count.Store(&count) }

// cachedCollector reports ordinal_cached_objects from a count made at scrape time (a store's length).
type cachedCollector struct {
	desc  *prometheus.Desc
	count atomic.Pointer[func() map[string]int]
}

func (c *cachedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *cachedCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.count.Load()
	if f == nil {
		return
	}
	for r, n := range (*f)() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), r)
	}
}

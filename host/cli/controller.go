package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/host/controller"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

type controllerOptions struct {
	kube             kubeOptions
	selector         string
	workers          int
	leaderElect      bool
	shards           int
	force            bool
	appsV1           bool
	ordinalKind      bool
	leNamespace      string
	leID             string
	identity         string
	leaseDuration    time.Duration
	renewDeadline    time.Duration
	retryPeriod      time.Duration
	metricsAddr      string
	profiling        bool
	healthAddr       string
	resync           time.Duration
	staleTimeout     time.Duration
	setCacheIdle     time.Duration
	featureGates     string
	logFormat        string
	verbosity        int
	shutdownDeadline time.Duration

	modulePoll         time.Duration
	moduleConfigMap    string
	signalsConfigMap   string
	moduleConfigMapKey string
	skipModuleGate     bool
}

func newControllerCommand(mopts *moduleOptions) *cobra.Command {
	o := &controllerOptions{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the StatefulSet controller on a cluster, the reconcile module making every plan",
		Long: `controller manages Ordinal's own StatefulSets (ordinal.dev/v1, kubectl get osts), and with --apps-v1 the
built-in apps/v1 StatefulSets too: it watches the sets, Pods, ControllerRevisions and PersistentVolumeClaims,
and for each sync of a set builds a snapshot from its caches, asks the reconcile module for the plan and
carries the plan's writes out in order, as the upstream StatefulSet controller would.

An ordinal.dev/v1 StatefulSet has apps/v1's spec and status (its CustomResourceDefinition, from
examples/deploy/crd.yaml or the Helm chart, must be installed) and no built-in controller acts on it, so
Ordinal runs beside kube-controller-manager in any cluster; kubectl ordinal migrate moves a set between the
two kinds without restarting a pod. Pass --apps-v1 only where kube-controller-manager runs without its own
StatefulSet controller (--controllers=*,-statefulset-controller); a set another controller also acts on is
left alone, with a Warning event OtherControllerActive, unless --force. --apps-v1 --ordinal-kind=false
manages apps/v1 StatefulSets only, on an API server without the CRD (or without CRDs at all).

A set may choose its module with the annotation ordinal.dev/module: "extended" (the embedded extended
module: upstream plus extensions each set opts into, e.g. ordinal.dev/paused: "true") or "faithful" (the
embedded upstream module), or NAME for the module under the key NAME.wasm of --module-configmap (after the
conformance gate); without it, the active module (--module, hot-swapped) syncs the set. A set naming
another module is left alone, with a Warning event UnknownModule.

Leader election (on by default) uses a coordination.k8s.io Lease; only the leader starts its informers and
workers. SIGTERM or SIGINT stops taking work, waits for the syncs in flight, releases the lease and exits 0.
Losing the lease exits 1.

Sharded (--shards N above 1, the same N and --leader-election-id on every replica), every replica runs: the
sets are split by a hash of their namespace into N shards, and each shard's sets are synced by one replica
at a time, the holder of the Lease <leader-election-id>-shard-<i>. Each replica renews its own Lease
<leader-election-id>-member-<identity>; the live replicas share the shards by rendezvous hashing, a replica
gives a shard to a newcomer only after draining its syncs, and the shards of a replica gone are taken once
its Leases expire. A replica taking a shard syncs its sets only once its caches have the previous owner's
last writes (docs/scale.md).

Endpoints: /metrics on --metrics-bind-address (with --profiling, Go's profiles on /debug/pprof/ there too); /healthz
and /readyz on --health-probe-bind-address (one server if both are the same address; "0" disables). The flag
names are controller-runtime's; the older --metrics-addr and --health-addr still work. /healthz is 200 unless this replica leads and has failed to renew its lease.
/readyz is 200 once the informer caches have synced; with leader election a standby answers 200
("ok: standby") and the leader 200 only once its caches have synced.

Logs are structured (JSON by default, --log-format=text for key=value) on stderr; every sync logs one line
"Synced StatefulSet" (or "Sync failed") with set, result, actions (issued), planned, duration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runController(cmd, mopts, o) },
	}
	o.kube.bind(cmd, "watch only this namespace (default: all)")
	o.kube.bindRate(cmd)
	appendHelp(cmd, `Flags in detail: -n (alias --watch-namespace) and --selector (alias --label-selector) are
filtered by the API server and apply to StatefulSets, Pods, ControllerRevisions and PVCs alike: pod and claim
templates must carry the selector's labels. --workers never sync one set on two workers at once.
--identity names the replica in its Lease and ends its requests' user agent, ordinal/<version>/<identity>.
--leader-election-lease-duration must be longer than --leader-election-renew-deadline, and that longer than
1.2 × --leader-election-retry-period. --set-cache-idle is how long a set's encoded objects and module
session outlive its last sync: memory for the sets at rest, against encoding a set whole again at its next
change (0: kept while the set exists). --stale-timeout is the longest a set waits for the informers to
observe the controller's own writes before it is synced anyway. --feature-gates takes e.g.
MaxUnavailableStatefulSet=false (`+"`ordinal version`"+` lists the gates). -v 2 logs skipped syncs and
leader changes, -v 4 client-go's detail. --module-configmap NAMESPACE/NAME is watched for a new module to
hot-swap in, under --module-configmap-key (binaryData, else data); its other keys NAME.wasm are modules a
set may name (ordinal.dev/module: NAME). --module-poll-interval is how often the --module file is checked
for a new module to hot-swap in. --signals-configmap's keys are signals for the sets' policies
(ordinal.dev/policies), each value JSON or a string. --profiling is kube-controller-manager's.`)
	f := cmd.Flags()
	f.StringVar(&o.selector, "selector", "", "watch only objects with these labels")
	f.IntVar(&o.workers, "workers", 2, "concurrent syncs, 1 to 1000")
	f.BoolVar(&o.appsV1, "apps-v1", false, "also manage apps/v1 StatefulSets")
	f.BoolVar(&o.ordinalKind, "ordinal-kind", true, "manage ordinal.dev/v1 StatefulSets")
	f.BoolVar(&o.force, "force", false, "act on sets another controller acts on too")
	f.BoolVar(&o.leaderElect, "leader-elect", true, "elect a leader with a Lease")
	f.IntVar(&o.shards, "shards", 1, "number of shards, 1 to 1024")
	f.StringVar(&o.leNamespace, "leader-election-namespace", "", "the Lease's namespace (default: -n, else default)")
	f.StringVar(&o.leID, "leader-election-id", "ordinal-controller", "name of the Lease")
	f.StringVar(&o.identity, "identity", "", "this replica's identity (default: hostname_pid)")
	f.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 15*time.Second, "how long standbys wait to take over")
	f.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long the leader tries to renew")
	f.DurationVar(&o.retryPeriod, "leader-election-retry-period", 2*time.Second, "interval between Lease attempts")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "address of /metrics (\"0\": off)")
	f.StringVar(&o.healthAddr, "health-probe-bind-address", ":8081", "/healthz and /readyz address")
	// --watch-namespace and --label-selector: the names operators built on controller-runtime give these two
	// (RATIONALE.md "Watching only some sets").
	f.SetNormalizeFunc(flagAliases(map[string]string{"metrics-addr": "metrics-bind-address", "health-addr": "health-probe-bind-address",
		"watch-namespace": "namespace", "label-selector": "selector"}))
	f.BoolVar(&o.profiling, "profiling", false, "serve Go's profiles on /debug/pprof/")
	f.DurationVar(&o.resync, "resync", 0, "informer resync period (0: none)")
	f.DurationVar(&o.setCacheIdle, "set-cache-idle", time.Minute, "how long an idle set stays cached")
	f.DurationVar(&o.staleTimeout, "stale-timeout", 30*time.Second, "longest wait to observe own writes")
	f.StringVar(&o.featureGates, "feature-gates", "", "feature-gate overrides for the module")
	f.StringVar(&o.logFormat, "log-format", "json", "log format: json or text")
	f.IntVarP(&o.verbosity, "v", "v", 0, "log verbosity, 0 to 10")
	f.DurationVar(&o.shutdownDeadline, "shutdown-grace", 30*time.Second, "on SIGTERM, wait this long for syncs")
	f.DurationVar(&o.modulePoll, "module-poll-interval", time.Second, "check --module this often (0: never)")
	f.StringVar(&o.signalsConfigMap, "signals-configmap", "", "ConfigMap NAMESPACE/NAME of policy signals")
	f.StringVar(&o.moduleConfigMap, "module-configmap", "", "ConfigMap NAMESPACE/NAME of modules")
	f.StringVar(&o.moduleConfigMapKey, "module-configmap-key", "ordinal.wasm", "the active module's key")
	f.BoolVar(&o.skipModuleGate, "insecure-skip-module-conformance", false, "TESTS ONLY: hot-swap modules without running the conformance cases (the action firewall still checks every plan)")
	_ = f.MarkHidden("insecure-skip-module-conformance")
	return cmd
}

// targets are the kinds reconciled: Ordinal's own unless --ordinal-kind=false, apps/v1 with --apps-v1.
func (o *controllerOptions) targets() []snapshot.Target {
	var ts []snapshot.Target
	if o.ordinalKind {
		ts = append(ts, snapshot.CRDTarget)
	}
	if o.appsV1 {
		ts = append(ts, snapshot.StatefulSetTarget)
	}
	return ts
}

func setupLogging(stderr interface{ Write([]byte) (int, error) }, format string, v int) (*slog.Logger, error) {
	hopts := &slog.HandlerOptions{Level: slog.Level(-v)}
	var h slog.Handler
	switch format {
	case "json":
		h = slog.NewJSONHandler(stderr, hopts)
	case "text":
		h = slog.NewTextHandler(stderr, hopts)
	default:
		return nil, fmt.Errorf("--log-format must be json or text, not %q", format)
	}
	l := slog.New(h)
	klog.SetSlogLogger(l)
	return l, nil
}

func parseFeatureGates(s string) (map[string]bool, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("--feature-gates: %q is not Name=true|false", kv)
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("--feature-gates: %q: %w", kv, err)
		}
		out[k] = b
	}
	return out, nil
}

func runController(cmd *cobra.Command, mopts *moduleOptions, o *controllerOptions) error {
	if _, err := setupLogging(cmd.ErrOrStderr(), o.logFormat, o.verbosity); err != nil {
		return withCode(ExitUsage, err)
	}
	features, err := o.validate()
	if err != nil {
		return withCode(ExitUsage, err)
	}
	base := cmd.Context()
	if base == nil {
		base = context.Background()
	}
	ctx, stop := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := klog.Background()
	ctx = klog.NewContext(ctx, logger)

	// The module, and the hot swap: the swapper checks every candidate (the
	// --module file when it changes, --module-configmap) before it becomes active.
	ref, swapper, err := startModule(ctx, mopts, o, features)
	if err != nil {
		return err
	}
	defer ref.Install(nil, module.Info{}, nil) // releases the active module once idle
	_, info := ref.Load()
	logger.Info("Loaded reconcile module", "module", info.Describe.Module, "version", info.Describe.ModuleVersion,
		"kubernetesVersion", info.Describe.KubernetesVersion, "digest", info.Digest, "source", info.Source)

	modules := mopts.registry()
	defer modules.Close()
	pols, err := mopts.policies(ctx)
	if err != nil {
		return err
	}
	defer pols.Close()

	le, sharding, err := o.leases()
	if err != nil {
		return withCode(ExitUsage, err)
	}
	restCfg, _, err := o.kube.restConfig()
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if o.leaderElect {
		// Several replicas: each request names the one that made it, for the API server's audit log (who
		// wrote a set, and whether within its Lease term). kube's convention, as rest.AddUserAgent's.
		restCfg.UserAgent += "/" + le.Identity
	}
	signals, err := watchSignals(ctx, restCfg, o.signalsConfigMap)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	ctrl, err := controller.New(controller.Config{
		RESTConfig: restCfg, Module: ref, Modules: modules, Policies: pols, Signals: signals, Targets: o.targets(), Namespace: o.kube.namespace, Selector: o.selector,
		Workers: o.workers, Resync: o.resync, Features: features, StaleTimeout: o.staleTimeout, SetCacheIdle: o.setCacheIdle, Force: o.force, Sharding: sharding,
	})
	if err != nil {
		return withCode(ExitUsage, err)
	}
	metrics := ctrl.Metrics()
	if err := startModuleWatchers(ctx, restCfg, mopts, o, swapper, modules, pols, metrics); err != nil {
		return withCode(ExitUsage, err)
	}

	// Sharded, every replica runs (no standby): ready once synced; /healthz watches its member Lease.
	health := &controller.Health{LeaderElection: o.leaderElect && sharding == nil, Synced: ctrl.HasSynced, Module: swapper.Status}
	if o.leaderElect {
		le.Watchdog = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
		health.Watchdog = le.Watchdog
		if sharding != nil {
			sharding.Watchdog = le.Watchdog
		}
	}
	servers, err := startServers(ctx, o, metrics, health)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for _, s := range servers {
			_ = s.Shutdown(sctx)
		}
	}()

	if err := o.lead(ctx, restCfg, le, sharding, health, metrics, drained(ctrl, o.shutdownDeadline)); err != nil {
		logger.Error(err, "Controller stopped")
		return withCode(ExitUsage, err)
	}
	logger.Info("Controller stopped")
	return nil
}

// validate checks the flags on their own, and returns the feature gates they set.
func (o *controllerOptions) validate() (map[string]bool, error) {
	features, err := parseFeatureGates(o.featureGates)
	if err != nil {
		return nil, err
	}
	if err := o.checkRanges(); err != nil {
		return nil, err
	}
	if len(o.targets()) == 0 {
		return nil, errors.New("--ordinal-kind=false leaves nothing to manage: add --apps-v1")
	}
	return features, nil
}

// drained runs the controller until its context ends, then lets the syncs in flight finish, bounded by
// --shutdown-grace.
func drained(ctrl *controller.Manager, grace time.Duration) func(context.Context) error {
	return func(rctx context.Context) error {
		errc := make(chan error, 1)
		go func() { errc <- ctrl.Run(rctx) }()
		select {
		case err := <-errc:
			return err
		case <-rctx.Done():
		}
		select {
		case err := <-errc:
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		case <-time.After(grace):
			return fmt.Errorf("syncs still running after --shutdown-grace %s", grace)
		}
	}
}

// lead runs the controller: at once without leader election, or sharded (every replica runs); else while this
// replica holds the Lease. Health and metrics say whether it leads.
func (o *controllerOptions) lead(ctx context.Context, restCfg *rest.Config, le *controller.LeaderElection, sharding *controller.Sharding,
	health *controller.Health, metrics *controller.Metrics, run func(context.Context) error) error {
	if !o.leaderElect || sharding != nil {
		health.Leading.Store(true)
		metrics.SetLeader(true)
		return run(ctx)
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	return controller.RunLeaderElected(ctx, client, *le, func(leading bool) {
		health.Leading.Store(leading)
		metrics.SetLeader(leading)
	}, run)
}

// leases returns the Lease settings of the flags, and the sharding with --shards above 1 (nil otherwise).
func (o *controllerOptions) leases() (*controller.LeaderElection, *controller.Sharding, error) {
	ns := o.leNamespace
	if ns == "" {
		ns = o.kube.namespace
	}
	if ns == "" {
		ns = "default"
	}
	id := o.identity
	if id == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("%s_%d", host, os.Getpid())
	}
	le := &controller.LeaderElection{Namespace: ns, Name: o.leID, Identity: id,
		LeaseDuration: o.leaseDuration, RenewDeadline: o.renewDeadline, RetryPeriod: o.retryPeriod}
	switch {
	case o.shards < 1:
		return nil, nil, fmt.Errorf("--shards %d: must be at least 1", o.shards)
	case o.shards == 1:
		return le, nil, nil
	case !o.leaderElect:
		return nil, nil, fmt.Errorf("--shards %d needs Leases: drop --leader-elect=false", o.shards)
	}
	return le, &controller.Sharding{Shards: o.shards, LeaderElection: *le}, nil
}

// startServers serves /metrics and /healthz+/readyz (on one server when the addresses are equal).
func startServers(ctx context.Context, o *controllerOptions, m *controller.Metrics, h *controller.Health) ([]*http.Server, error) {
	logger := klog.FromContext(ctx)
	muxes := map[string]*http.ServeMux{}
	if o.healthAddr != "0" && o.healthAddr != "" {
		muxes[o.healthAddr] = h.Handler()
	}
	if o.metricsAddr != "0" && o.metricsAddr != "" {
		muxes[o.metricsAddr] = controller.MetricsHandler(m, muxes[o.metricsAddr])
		if o.profiling {
			mux := muxes[o.metricsAddr]
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
	}
	var servers []*http.Server
	for addr, mux := range muxes {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, s := range servers {
				_ = s.Close()
			}
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		s := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, s)
		logger.Info("Serving", "addr", ln.Addr().String())
		go func() {
			if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error(err, "HTTP server failed", "addr", addr)
			}
		}()
	}
	return servers, nil
}

// watchSignals keeps the signals of --signals-configmap current (nil when the flag is not set).
func watchSignals(ctx context.Context, restCfg *rest.Config, ref string) (*policy.Signals, error) {
	if ref == "" {
		return nil, nil
	}
	ns, name, err := policy.SignalsConfigMapRef(ref)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	s := &policy.Signals{}
	go controller.WatchSignals(ctx, s, client, ns, name)
	return s, nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/host/webhook"
)

type webhookOptions struct {
	supplied      configMapModules // --module-configmap: the modules a set may name that the controller is supplied
	kube          kubeOptions
	addr          string
	certFile      string
	keyFile       string
	metricsAddr   string
	timeout       time.Duration
	failurePolicy string
	denyStuck     bool
	denyPVC       bool
	events        bool
	maxConcurrent int
	maxWaiting    int
	previewSyncs  int
	maxReplicas   int32
	model         string
	featureGates  string
	logFormat     string
	verbosity     int
	serve         webhook.ServeOptions
	clientCAFile  string
	signals       string // --signals-configmap
}

func newWebhookCommand(mopts *moduleOptions) *cobra.Command {
	o := &webhookOptions{}
	cmd := &cobra.Command{
		Use:   "webhook --tls-cert-file FILE --tls-private-key-file FILE --client-ca-file FILE",
		Short: "Serve a validating admission webhook that previews each StatefulSet edit at apply time",
		Long: `webhook is a validating admission webhook for StatefulSet CREATE and UPDATE (and their scale
subresource: kubectl scale, autoscalers). For each edit it replays the rollout with the reconcile
module, from the set's live pods, ControllerRevisions and PVCs and the object about to be stored (the
preview engine of ` + "`ordinal preview`" + `), and answers allowed with warnings that kubectl prints:

  Warning: ordinal: rolling update of 5 pods to revision web-6cbd9df98d, maxUnavailable 2:
    [web-4 web-3] then [web-2 web-1] then [web-0]; 3 steps
  Warning: ordinal: web-2 is not Ready: with OrderedReady this rollout will stop at web-2

` + "`kubectl apply --dry-run=server`" + ` shows the same and changes nothing (register the webhook with
sideEffects: NoneOnDryRun). Each preview is also an Event (RolloutPreview) on the set and, in full, GET
/preview/NAMESPACE/NAME. --deny-stuck-rollouts and --deny-pvc-deletion deny known-dangerous edits. A
review that cannot be previewed within --preview-timeout (module failure, caches not synced, too
long) is allowed with a warning, or denied with --failure-policy=closed; a long rollout is answered
with the steps replayed and an estimate of the rest.

Callers must present a client certificate signed by --client-ca-file (or
--insecure-allow-unauthenticated, behind a NetworkPolicy). docs/webhook.md has the API server's
set-up, how a review is answered, the connection limits, the metrics and each limit;
examples/deploy/webhook/ deploys it (kubectl apply -k); scripts/webhook-ca.sh makes a CA and serving
certificate for tests.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWebhook(cmd, mopts, o) },
	}
	o.kube.bind(cmd, "watch only this namespace (default: all)")
	o.kube.bindRate(cmd)
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", ":9443", "HTTPS address of the webhook")
	f.StringVar(&o.certFile, "tls-cert-file", "", "PEM serving certificate (chain), reloaded on change")
	f.StringVar(&o.keyFile, "tls-private-key-file", "", "PEM private key of --tls-cert-file")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "HTTP address of /metrics (\"0\": off)")
	f.SetNormalizeFunc(flagAliases(map[string]string{"metrics-addr": "metrics-bind-address"}))
	f.StringVar(&o.clientCAFile, "client-ca-file", "", "PEM CA bundle of the callers' client certificates")
	f.StringSliceVar(&o.serve.AllowedNames, "client-cert-allowed-names", nil, "allowed client certificate CNs (default: any)")
	f.BoolVar(&o.serve.AllowUnauthenticated, "insecure-allow-unauthenticated", false, "serve callers without a client certificate")
	f.DurationVar(&o.serve.HandshakeTimeout, "tls-handshake-timeout", webhook.DefaultHandshakeTimeout, "longest TLS handshake")
	f.IntVar(&o.serve.MaxUnauthenticatedConnections, "max-unauthenticated-connections", webhook.DefaultMaxUnauthenticatedConnections, fmt.Sprintf("unverified connections, 1 to %d", maxWebhookConnections))
	f.DurationVar(&o.serve.ReadHeaderTimeout, "read-header-timeout", webhook.DefaultReadHeaderTimeout, "longest time to read a request's headers")
	f.DurationVar(&o.serve.ReadTimeout, "read-timeout", webhook.DefaultReadTimeout, "longest time to read a whole request")
	f.DurationVar(&o.serve.IdleTimeout, "idle-timeout", webhook.DefaultIdleTimeout, "how long a connection may idle")
	f.IntVar(&o.serve.MaxConnections, "max-connections", webhook.DefaultMaxConnections, fmt.Sprintf("API server connections, 1 to %d", maxWebhookConnections))
	f.DurationVar(&o.timeout, "preview-timeout", webhook.DefaultTimeout, "time limit of one review, at most 30s")
	f.StringVar(&o.failurePolicy, "failure-policy", "open", "open (allow) or closed (deny)")
	f.BoolVar(&o.denyStuck, "deny-stuck-rollouts", false, "deny an edit whose rollout would be stuck")
	f.BoolVar(&o.denyPVC, "deny-pvc-deletion", false, "deny an edit that would delete PVCs")
	f.BoolVar(&o.events, "events", true, "record previews as Events on the set")
	f.IntVar(&o.maxConcurrent, "max-concurrent-previews", webhook.DefaultMaxConcurrent, fmt.Sprintf("previews run at once, 1 to %d", maxConcurrentPreviews))
	f.IntVar(&o.previewSyncs, "max-preview-syncs", 0, "most syncs one preview replays (0: no limit)")
	f.IntVar(&o.maxWaiting, "max-waiting-reviews", 0, "most reviews waiting for a preview (0: 64 per slot)")
	f.Int32Var(&o.maxReplicas, "max-replicas", webhook.DefaultMaxReplicas, fmt.Sprintf("largest set previewed, 1 to %d", replay.MaxReplicasEver))
	f.StringVar(&o.model, "model", "", `kubelet model: "delays" (default) or "tick"`)
	f.StringVar(&o.featureGates, "feature-gates", "", "feature-gate overrides for the module")
	f.StringVar(&o.signals, "signals-configmap", "", "ConfigMap NAMESPACE/NAME of policy signals")
	f.StringVar(&o.logFormat, "log-format", "json", "log format: json or text")
	f.IntVarP(&o.verbosity, "v", "v", 0, fmt.Sprintf("log verbosity, 0 to %d", maxVerbosity))
	o.supplied.bind(cmd)
	return cmd
}

func runWebhook(cmd *cobra.Command, mopts *moduleOptions, o *webhookOptions) error {
	logger, err := setupLogging(cmd.ErrOrStderr(), o.logFormat, o.verbosity)
	if err != nil {
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

	module, err := mopts.load(ctx)
	if err != nil {
		return err
	}
	defer module.Close(context.WithoutCancel(ctx))
	for g := range features {
		if _, ok := module.Describe().Features[g]; !ok {
			return withCode(ExitUsage, fmt.Errorf("--feature-gates: the module does not know the gate %q (see `ordinal version`)", g))
		}
	}
	w := &webhookRun{o: o, logger: logger}
	defer w.close()
	if err := w.build(ctx, mopts, module, features); err != nil {
		return err
	}
	w.src.Start(ctx)
	return w.serve(ctx, module)
}

// validate checks the flags on their own, and returns the feature gates they set.
func (o *webhookOptions) validate() (map[string]bool, error) {
	if err := o.checkRanges(); err != nil {
		return nil, err
	}
	if o.certFile == "" || o.keyFile == "" {
		return nil, fmt.Errorf("--tls-cert-file and --tls-private-key-file are required (the API server calls webhooks over HTTPS)")
	}
	if o.clientCAFile == "" && !o.serve.AllowUnauthenticated {
		return nil, fmt.Errorf("--client-ca-file is required: the webhook answers only the API server, known by its client certificate (or --insecure-allow-unauthenticated, see --help)")
	}
	if o.clientCAFile != "" {
		var err error
		if o.serve.ClientCAs, err = webhook.LoadClientCAs(o.clientCAFile); err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
	}
	if o.failurePolicy != "open" && o.failurePolicy != "closed" {
		return nil, fmt.Errorf("--failure-policy must be open or closed, not %q", o.failurePolicy)
	}
	features, err := parseFeatureGates(o.featureGates)
	if err != nil {
		return nil, err
	}
	if o.signals != "" {
		if _, _, err := policy.SignalsConfigMapRef(o.signals); err != nil {
			return nil, err
		}
	}
	return features, nil
}

// webhookRun is one run of `ordinal webhook`: the review server and what it needs, and what to close after.
type webhookRun struct {
	o       *webhookOptions
	logger  *slog.Logger
	srv     *webhook.Server
	src     *webhook.InformerSource
	certs   *webhook.CertReloader
	metrics *webhook.Metrics
	closers []func() // run last to first
}

func (w *webhookRun) close() {
	for i := len(w.closers) - 1; i >= 0; i-- {
		w.closers[i]()
	}
}

// build makes the review server: the API client and its informers, the serving certificate, the Events
// recorder, the policies and named modules, and the webhook's configuration from the flags.
func (w *webhookRun) build(ctx context.Context, mopts *moduleOptions, module *wasm.Module, features map[string]bool) error {
	o := w.o
	restCfg, _, err := o.kube.restConfig()
	if err != nil {
		return withCode(ExitUsage, err)
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	w.metrics = webhook.NewMetrics()
	w.certs, err = webhook.NewCertReloader(o.certFile, o.keyFile, w.metrics, func(err error) {
		w.logger.Error("Keeping the previous serving certificate", "err", err)
	})
	if err != nil {
		return withCode(ExitUsage, err)
	}
	w.src = webhook.NewInformerSource(client, o.kube.namespace, 0)
	var events record.EventRecorder
	if o.events {
		b := record.NewBroadcaster(record.WithContext(ctx), record.WithCorrelatorOptions(webhook.EventCorrelation()))
		b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
		w.closers = append(w.closers, b.Shutdown)
		events = b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "ordinal-webhook"})
	}
	reg := mopts.registry()
	pols, err := mopts.policies(ctx)
	if err != nil {
		return err
	}
	w.closers = append(w.closers, pols.Close)
	if err := o.supplied.watch(ctx, mopts, reg, pols, client, features); err != nil {
		return err
	}
	named, closeNamed := namedModules(reg)
	w.closers = append(w.closers, closeNamed)
	cfg := webhook.Config{Module: module, NamedModule: named, NamedPolicy: pols.Get, Client: client, SignalsConfigMap: o.signals,
		Source: w.src, Features: features, Model: o.model, Timeout: o.timeout,
		FailClosed: o.failurePolicy == "closed", DenyStuckRollouts: o.denyStuck, DenyPVCDeletion: o.denyPVC,
		MaxConcurrent: o.maxConcurrent, MaxWaiting: o.maxWaiting, PreviewSyncs: o.previewSyncs, MaxReplicas: o.maxReplicas, Metrics: w.metrics, Logger: w.logger}
	if events != nil {
		cfg.Events = events
	}
	if w.srv, err = webhook.New(cfg); err != nil {
		return withCode(ExitUsage, err)
	}
	return nil
}

// serve answers reviews on --addr (and serves /metrics on --metrics-bind-address) until a signal or a server
// error, then shuts the servers down.
func (w *webhookRun) serve(ctx context.Context, module *wasm.Module) error {
	o, logger := w.o, w.logger
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("listen %s: %w", o.addr, err))
	}
	o.serve.Metrics = w.metrics
	hs, ln, err := o.serve.HTTPServer(w.srv.Handler(), w.certs.TLSConfig(), ln, logger)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	servers := []*http.Server{hs}
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(ln) }() // ln does the TLS handshake
	logger.Info("Serving admission reviews", "addr", ln.Addr().String(), "module", module.Describe().ModuleVersion,
		"failurePolicy", o.failurePolicy, "denyStuckRollouts", o.denyStuck, "denyPVCDeletion", o.denyPVC, "namespace", o.kube.namespace)
	if o.metricsAddr != "" && o.metricsAddr != "0" {
		mln, err := net.Listen("tcp", o.metricsAddr)
		if err != nil {
			_ = hs.Close()
			return withCode(ExitUsage, fmt.Errorf("listen %s: %w", o.metricsAddr, err))
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", w.metrics.Handler())
		ms := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, ms)
		go func() { errc <- ms.Serve(mln) }()
		logger.Info("Serving metrics", "addr", mln.Addr().String())
	}
	go func() {
		if w.src.WaitForSync(ctx) {
			logger.Info("Informer caches synced")
		}
	}()
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(sctx)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("Webhook stopped", "err", err)
		return withCode(ExitUsage, err)
	}
	logger.Info("Webhook stopped")
	return nil
}

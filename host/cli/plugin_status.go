package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/annotation"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/preview"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/host/webhook"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// statusFlags are kubectl ordinal status's own flags.
type statusFlags struct {
	featureGates string
	watch        bool
	wait         rolloutWait
	supplied     configMapModules
	signals      policyContextFlags
}

func newPluginStatus(mopts *moduleOptions, o *pluginOptions) *cobra.Command {
	var f statusFlags
	cmd := &cobra.Command{
		Use:   "status statefulset/NAME [--watch | --wait [--wait-timeout DURATION]]",
		Short: "Show the rollout as the module sees it: revisions, pods, the next writes, why it waits",
		Long: `status builds the controller's snapshot of the live set, runs the reconcile module on it once (nothing is
written), and shows:
  the revisions, with how many pods each has and which is current and which the update revision;
  the pods (consecutive ordinals in the same revision and state share a line);
  what the next sync will write;
  the state (complete, progressing, waiting, partitioned, failed) and why the rollout waits: the pod
  the controller waits for and the rule that makes it wait (OrderedReady, terminating pods,
  minReadySeconds, maxUnavailable, the partition, OnDelete);
  where ordinal webhook previews the set's edits, whether its generation was previewed at apply
  (from the webhook's RolloutPreview Events: a webhook that was down let the edit through silently).

--watch (-w) keeps the view current, redrawn in place on a terminal, as a new frame otherwise (a new
JSON or YAML document with -o json|yaml), whenever the set, its pods, revisions or claims change or the
controller's requeue comes due; it runs until interrupted.

--wait watches until the rollout ends, as kubectl rollout status does, and exits by how it ended:
complete (the controller has synced the latest edit, every pod from the partition up is at the update
revision and Ready, or Available with minReadySeconds, and the status says so), or stuck: the set's
progress deadline passed (Progressing=False ProgressDeadlineExceeded, or RolledBack under
on-progress-deadline: Rollback while the rollback rolls out) or InPlaceOnly holds a pod. Without
ordinal.dev/progress-deadline-seconds, a rollout that stops moving is waited on until --wait-timeout
(0: no limit) or an interrupt, which exit 7, never 0. Off a terminal, text is the first view, a line
per change of the state, and the last view; -o json|yaml prints the last view only.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd, args[0], mopts, o) },
	}
	cmd.Flags().BoolVarP(&f.watch, "watch", "w", false, "keep the view current until interrupted")
	f.wait.bind(cmd)
	cmd.Flags().StringVar(&f.featureGates, "feature-gates", "", "feature-gate overrides for the module")
	f.supplied.bind(cmd)
	f.signals.bind(cmd)
	return cmd
}

// run shows the set named arg once, or watches it (--watch, --wait).
func (f *statusFlags) run(cmd *cobra.Command, arg string, mopts *moduleOptions, o *pluginOptions) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	if err := f.wait.check(cmd); err != nil {
		return withCode(ExitUsage, err)
	}
	t, name, features, client, ns, err := o.target(arg, f.featureGates)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.wait.on {
		// --wait reads the set first, as kubectl rollout status does, so that a set that does not exist is an
		// error (with the other kind's hint) rather than a wait, and before it loads modules, so that the
		// generation it waits from (Ended's since) is the set's as the command began; the watch lists the rest
		set, err := snapshot.GetSet(ctx, client, t, ns, name)
		if err != nil {
			if ctx.Err() != nil {
				return f.wait.interrupted(nil, nil) // exit 1 would say the set does not exist
			}
			return withCode(ExitUsage, otherKindHint(ctx, client, t, ns, name, err))
		}
		f.wait.since = set.Generation
	}
	mods, err := o.loadModules(ctx, mopts, &f.supplied, features)
	if err != nil {
		if ctx.Err() != nil && f.wait.on {
			return f.wait.interrupted(nil, nil) // not a module failure (4) nor a missing set (1)
		}
		return err
	}
	defer mods.close()
	s := &statusView{module: mods.module, named: mods.named, policies: mods.pols.Get, client: client, features: features, format: format, out: cmd.OutOrStdout(),
		errOut: cmd.ErrOrStderr(), signals: f.signals}
	switch {
	case f.wait.on:
		s.wait = &f.wait
	case !f.watch:
		objs, err := snapshot.LiveObjects(ctx, client, t, ns, name)
		if err != nil {
			return withCode(ExitUsage, otherKindHint(ctx, client, t, ns, name, err))
		}
		return s.once(ctx, objs)
	}
	return s.watchLive(ctx, o, client, t, ns, name)
}

// once shows one view of the set.
func (s *statusView) once(ctx context.Context, objs snapshot.Objects) error {
	v, err := s.frame(ctx, objs)
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted: not a module failure
		}
		return err
	}
	_, err = io.WriteString(s.out, v.text)
	return err
}

// watchLive watches the set until interrupted (--watch: exit 0) or, under --wait, until its rollout ends.
func (s *statusView) watchLive(ctx context.Context, o *pluginOptions, client kubernetes.Interface, t snapshot.Target, ns, name string) error {
	cfg, _, err := o.kube.restConfig()
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if err := reachable(ctx, client); err != nil { // within --request-timeout; Ctrl-C ends the wait
		if ctx.Err() != nil {
			return s.wait.interrupted(nil, nil)
		}
		return err
	}
	cfg.Timeout = 0 // a watch is one long request: the informers' own timeouts end it
	watchClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	return s.watch(ctx, cfg, watchClient, t, ns, name)
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// statusView renders a set's rollout status.
type statusView struct {
	module   *wasm.Module
	features map[string]bool
	format   string
	out      io.Writer
	// named gives the module a set names (ordinal.dev/module), as the controller would run it.
	named func(context.Context, string) (plan.Reconciler, error)
	// policies gives the policies a set names (ordinal.dev/policies); client reads the budgets one asks for.
	policies func(context.Context, string) (policy.Module, error)
	client   kubernetes.Interface
	errOut   io.Writer // --watch says here when it lost the API server and is retrying
	signals  policyContextFlags
	// wait: --wait, the watch ends with the rollout (nil: --watch, until interrupted)
	wait *rolloutWait
}

// statusFrame is one view of the set's status: the status, its rendering, and the requeue the module asked for.
type statusFrame struct {
	st      *rollout.Status
	text    string
	requeue time.Duration
}

// frame is one view of the set's status.
func (s *statusView) frame(ctx context.Context, objs snapshot.Objects) (*statusFrame, error) {
	snap, _, err := snapshot.Of(objs, time.Now(), s.features)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	r, _, p, err := reconcileSet(ctx, s.module, s.named, snap.JSON, objs.Set.Annotations)
	if err != nil {
		return nil, err
	}
	if p.Error != nil && p.Error.Code != abi.CodeSyncFailed {
		return nil, planExitCode(p) // the snapshot was refused (a bad --feature-gates): not a rollout state
	}
	// pods the set's module updated in place are read as it reads them (extension in-place-update)
	st, err := rollout.OfWith(snap.JSON, p, rollout.Reading{InPlace: module.HasExtension(r, abi.AnnotationPodUpdatePolicy),
		OtherController: annotation.OtherController(objs.Set, objs.Set.Annotations)})
	if err != nil {
		return nil, withCode(ExitModuleFailure, err)
	}
	holds, err := s.holds(ctx, objs, snap, p)
	if err != nil {
		return nil, err
	}
	st.Held(holds)
	// the webhook's Events say whether this generation was previewed at apply (without permission to list
	// Events, nothing is said)
	st.PreviewedAtApply(rollout.LastApplyPreview(preview.SetEvents(ctx, s.client, objs.Set), objs.Set.Generation, rollout.SpecDigest(&objs.Set.Spec)))
	return s.render(st, plan.RequeueAfter(p.RequeueAfterSeconds))
}

// render is the view of st in the output format.
func (s *statusView) render(st *rollout.Status, requeue time.Duration) (*statusFrame, error) {
	var b bytes.Buffer
	if err := writeFormatted(&b, s.format, st, st.WriteText); err != nil {
		return nil, err
	}
	return &statusFrame{st: st, text: b.String(), requeue: requeue}, nil
}

// holds are the writes of the next sync the set's policies hold, as the controller's sync would ask them
// (the budgets a policy reads listed live; no signals: those are the controller's). A policy that fails
// holds nothing, as in the controller.
func (s *statusView) holds(ctx context.Context, objs snapshot.Objects, snap *snapshot.Snapshot, p *abi.Plan) (map[int]plan.Hold, error) {
	pctx, err := s.signals.fetch(ctx, s.client, objs.Set, objs.Pods, s.policies)
	if err != nil || len(pctx.Policies) == 0 {
		return nil, err
	}
	run := &policy.Run{Policies: pctx.Policies, Snapshot: snap.JSON, Object: snap.Object, Head: snap.Head(), Pods: snap.PodStates, PodDisruptionBudgets: pctx.Budgets, Nodes: pctx.Nodes,
		Signals: pctx.Signals}
	return run.Judge(ctx, p, 0), nil
}

// watch redraws the status from informer caches whenever the set, or one of the namespace's pods,
// ControllerRevisions or claims, changes, or the module's requeue comes due. The pods, revisions and
// claims come from the webhook's informer source, the set from an informer on it alone.
func (s *statusView) watch(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, t snapshot.Target, ns, name string) error {
	// Informers retry an API server they cannot reach forever, saying nothing: the command fails when it
	// cannot reach it at the start (like `kubectl get -w`), and the watch says so each time a list or
	// watch fails later.
	retrying := func(_ *cache.Reflector, err error) {
		fmt.Fprintf(s.errOut, "watch: %s; retrying\n", termsafe.String(unreachable(err).Error()))
	}
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	source := webhook.NewInformerSource(client, ns, 0)
	if err := source.OnChange(poke); err != nil {
		return err
	}
	if err := source.OnWatchError(retrying); err != nil {
		return err
	}
	setInformer, sets, err := snapshot.NewSetInformer(cfg, client, t, ns, func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name })
	if err != nil {
		return err
	}
	if err := setInformer.SetWatchErrorHandler(retrying); err != nil {
		return err
	}
	if _, err := setInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { poke() }, UpdateFunc: func(any, any) { poke() }, DeleteFunc: func(any) { poke() }}); err != nil {
		return err
	}
	source.Start(ctx)
	go setInformer.RunWithContext(ctx)
	if !source.WaitForSync(ctx) || !cache.WaitForCacheSync(ctx.Done(), setInformer.HasSynced) {
		return s.wait.interrupted(nil, nil) // before the first list
	}
	show := s.shower()
	requeue := time.NewTimer(time.Hour)
	defer requeue.Stop()
	timeout := s.wait.deadline()
	var last *statusFrame
	for {
		v, err := s.cachedFrame(ctx, t, ns, name, sets, source)
		if err != nil {
			if ctx.Err() != nil {
				return s.wait.interrupted(show, last) // the module's call cut short: not a module failure
			}
			return err
		}
		last = v
		if err := show(v, false); err != nil {
			return err
		}
		if s.wait != nil {
			if end, why := v.st.Ended(s.wait.since); end != rollout.NotEnded {
				return s.wait.ended(show, v, end, why)
			}
		}
		requeue.Reset(time.Hour)
		if v.requeue > 0 {
			requeue.Reset(v.requeue)
		}
		select {
		case <-ctx.Done():
			return s.wait.interrupted(show, v)
		case <-changed:
		case <-requeue.C:
		case <-timeout:
			return s.wait.timedOut(show, v)
		}
	}
}

// shower is how the watch shows each view (last: the view it ends with, under --wait). --watch: a view
// that changed is redrawn in place on a terminal, else written as a new frame (a new YAML document, a blank
// line between texts). --wait: the same on a terminal; off it, text is the first view, a line per change of
// the state and the last view, and -o json|yaml the last view only.
func (s *statusView) shower() func(v *statusFrame, last bool) error {
	terminal := isTerminal(s.out)
	var shown, line string
	started := time.Now()
	first := true
	write := func(text string) error {
		if text == shown {
			return nil
		}
		shown = text
		switch {
		case terminal:
			text = "\x1b[H\x1b[2J" + text // home and clear: redraw in place
		case !first && s.format == "yaml":
			text = "---\n" + text
		case !first && s.format == "text":
			text = "\n" + text
		}
		first = false
		_, err := io.WriteString(s.out, text)
		return err
	}
	return func(v *statusFrame, last bool) error {
		switch {
		case s.wait == nil || terminal:
			return write(v.text)
		case s.format != "text":
			if last {
				return write(v.text)
			}
			return nil
		case first || last:
			line = stateLine(v)
			return write(v.text)
		}
		if l := stateLine(v); l != line {
			line = l
			_, err := fmt.Fprintf(s.out, "%s %s\n", time.Since(started).Round(time.Second), termsafe.String(l))
			return err
		}
		return nil
	}
}

// cachedFrame renders the set from the informers' caches; a set that does not exist (yet, or any more)
// is a frame of its own.
func (s *statusView) cachedFrame(ctx context.Context, t snapshot.Target, ns, name string, sets appslisters.StatefulSetLister, source *webhook.InformerSource) (*statusFrame, error) {
	set, err := sets.StatefulSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return s.render(rollout.NotFound(ns, name), 0)
	}
	if err != nil {
		return nil, err
	}
	objs := snapshot.Objects{Target: t, Set: set}
	if objs.Pods, objs.Revisions, objs.Claims, err = source.Namespace(ns); err != nil {
		return nil, err
	}
	return s.frame(ctx, objs)
}

// reachable asks the API server for its version, as kubectl's first request does, until ctx ends.
func reachable(ctx context.Context, client kubernetes.Interface) error {
	rc := client.Discovery().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() { // a fake clientset: nothing to reach
		return nil
	}
	return rc.Get().AbsPath("/version").Do(ctx).Error()
}

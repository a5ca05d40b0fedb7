package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ordinal-dev/ordinal/host/kube"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/preview"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
	"github.com/ordinal-dev/ordinal/internal/yamljson"
)

// PluginName is the executable name kubectl looks for: `kubectl ordinal ...` runs `kubectl-ordinal ...`.
const PluginName = "kubectl-ordinal"

// IsPlugin reports whether the binary was invoked as the kubectl plugin (argv[0] kubectl-ordinal, directly
// or through a symlink).
func IsPlugin(argv0 string) bool {
	b := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	return b == PluginName || strings.HasPrefix(b, PluginName+"-")
}

// PluginMain runs `kubectl ordinal` with the given arguments and returns the exit code.
func PluginMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return execute(newPluginRoot(stdin, stdout, stderr), args, stderr, "error:")
}

// pluginOptions are kubectl's conventional flags, on every plugin command.
type pluginOptions struct {
	kube   kubeOptions
	output string
	// warnings, where set, gets the API server's warnings as kubectl prints them ("Warning: ..."): a verb's
	// write is reviewed by the webhook like kubectl rollout's, whose preview is those warnings
	warnings io.Writer
}

func (o *pluginOptions) format() (string, error) { return outputFormat(o.output) }

func (o *pluginOptions) client() (kubernetes.Interface, string, error) {
	cfg, ctxNS, err := o.kube.restConfig()
	if err != nil {
		return nil, "", withCode(ExitUsage, err)
	}
	// The webhook (if registered) answers our dry-run with the same preview as warnings: do not print them twice.
	cfg.WarningHandler = rest.NoWarnings{}
	if o.warnings != nil {
		cfg.WarningHandler = rest.NewWarningWriter(o.warnings, rest.WarningWriterOptions{Deduplicate: true})
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", withCode(ExitUsage, err)
	}
	ns := o.kube.namespace
	if ns == "" {
		ns = ctxNS
	}
	if ns == "" {
		ns = "default"
	}
	return c, ns, nil
}

func newPluginRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use: "kubectl-ordinal",
		// kubectl's plugin convention: the help says "kubectl ordinal", not the executable's name.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ordinal"},
		Short:       "Preview StatefulSet edits and replay rollouts with the StatefulSet controller's own logic",
		Long: `kubectl ordinal runs the Kubernetes StatefulSet controller's reconcile logic (a WebAssembly module,
the same one ` + "`ordinal controller`" + ` and ` + "`ordinal webhook`" + ` run) against the live cluster:

  kubectl ordinal preview -f web.yaml        what applying the file would do: steps, batches, traps
  kubectl ordinal timeline statefulset/web   the current rollout replayed from the live state
  kubectl ordinal snapshot statefulset/web   the controller's snapshot of the set (ABI v1 JSON)
  kubectl ordinal status statefulset/web -w  the live rollout as the module sees it: revisions,
                                             pods, the next sync's writes, why it waits; kept
                                             current; --wait: until the rollout ends, the exit
                                             code saying how (0 complete, 6 stuck)
  kubectl ordinal history statefulset/web    the revisions, with the template changes each made
  kubectl ordinal migrate statefulset/web --to ordinal
                                             move the set from kube-controller-manager's controller
                                             (apps/v1) to Ordinal's (ordinal.dev/v1), no pod
                                             restarted; --to apps moves it back
  kubectl ordinal undo|restart|pause|resume statefulset/web
                                             kubectl rollout's verbs, for both kinds (pause and
                                             resume: the pause extension, or the partition on
                                             apps/v1)

Install: put the ordinal binary on PATH under the name kubectl-ordinal (a copy or a symlink), or with krew
(make krew writes the plugin manifest and archives). Completion: also as kubectl_complete-ordinal;
kubectl's own completion then completes the plugin's commands, flags and the cluster's StatefulSets.
Flags follow kubectl: --kubeconfig (default: $KUBECONFIG, then ~/.kube/config), --context, -n/--namespace,
-o json|yaml|text, --request-timeout (30s here, where kubectl waits without limit; 0: no limit; status --watch
waits this long for its first answer, then retries for as long as it runs).
A set argument names the kind as kubectl does: statefulset/web (apps/v1), statefulsets.ordinal.dev/web or
osts/web (Ordinal's own kind; timeline, snapshot, status and history read either; preview takes a manifest
of either kind).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	mopts := &moduleOptions{}
	mopts.bind(root)
	o := &pluginOptions{}
	pf := root.PersistentFlags()
	pf.StringVar(&o.kube.kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	pf.StringVar(&o.kube.context, "context", "", "the kubeconfig context to use")
	pf.StringVarP(&o.kube.namespace, "namespace", "n", "", "the namespace (default: the context's, else \"default\")")
	pf.StringVarP(&o.output, "output", "o", "", "output format: text (default), json or yaml")
	o.kube.bindRequestTimeout(pf)
	_ = root.RegisterFlagCompletionFunc("output", completeOutput)
	timeline, snapshot := newPluginTimeline(mopts, o), newPluginSnapshot(o)
	status, history, migrate := newPluginStatus(mopts, o), newPluginHistory(o), newPluginMigrate(o)
	restart, pause, resume, undo := newPluginRestart(o), newPluginPause(o), newPluginResume(o), newPluginUndo(o)
	for _, c := range []*cobra.Command{timeline, snapshot, status, history, migrate, restart, pause, resume, undo} {
		c.ValidArgsFunction = o.completeSets
	}
	root.AddCommand(newPluginPreview(mopts, o), timeline, snapshot, status, history, migrate, restart, pause, resume, undo)
	helpOnDemand(root)
	return root
}

// namedModules is the registry of the modules a set may name (the embedded ones, and with
// --module-configmap the controller's supplied ones) as replay.Options.NamedModule.
func (o *pluginOptions) namedModules(ctx context.Context, mopts *moduleOptions, supplied *configMapModules, pols *policy.Registry, features map[string]bool) (
	func(ctx context.Context, name string) (hostplan.Reconciler, error), func(), error) {
	reg := mopts.registry()
	if supplied.ref != "" {
		c, _, err := o.client()
		if err != nil {
			return nil, nil, err
		}
		if err := supplied.supply(ctx, mopts, reg, pols, c, features); err != nil {
			return nil, nil, err
		}
	}
	named, closeNamed := namedModules(reg)
	return named, closeNamed, nil
}

// loadModules loads a live command's modules under the feature gates given: the modules a set may name
// include, with --module-configmap, the controller's supplied ones.
func (o *pluginOptions) loadModules(ctx context.Context, mopts *moduleOptions, supplied *configMapModules, features map[string]bool) (*loadedModules, error) {
	m, err := mopts.load(ctx)
	if err != nil {
		return nil, err
	}
	pols, err := mopts.policies(ctx)
	if err != nil {
		m.Close(context.Background())
		return nil, err
	}
	named, closeNamed, err := o.namedModules(ctx, mopts, supplied, pols, features)
	if err != nil {
		pols.Close()
		m.Close(context.Background())
		return nil, err
	}
	return &loadedModules{module: m, pols: pols, named: named, close: func() {
		closeNamed()
		pols.Close()
		m.Close(context.Background())
	}}, nil
}

// liveSetRead is a set read from the cluster: the controller's snapshot of it, its objects, and the client and
// feature gates that read it (for the command's further calls).
type liveSetRead struct {
	snap     *snapshot.Snapshot
	objs     snapshot.Objects
	client   kubernetes.Interface
	features map[string]bool
}

// liveSetSnapshot resolves a "statefulset/NAME" argument against the cluster and builds the controller's
// snapshot of that set from live List calls, with the given feature-gate overrides.
func (o *pluginOptions) liveSetSnapshot(cmd *cobra.Command, arg, featureGates string) (*liveSetRead, error) {
	t, name, features, c, ns, err := o.target(arg, featureGates)
	if err != nil {
		return nil, err
	}
	snap, sel, err := snapshot.Live(cmdContext(cmd), c, t, ns, name, time.Now(), features)
	if err != nil {
		return nil, withCode(ExitUsage, otherKindHint(cmdContext(cmd), c, t, ns, name, err))
	}
	return &liveSetRead{snap: snap, objs: sel, client: c, features: features}, nil
}

// otherKindHint adds to the API server's NotFound for a set the name of the set of the other kind that
// exists under its name: after `kubectl ordinal migrate`, the set a user has always called web (apps/v1)
// is osts/web, and the other way round. Any other error, or no such set, is err as it is.
func otherKindHint(ctx context.Context, c kubernetes.Interface, t snapshot.Target, ns, name string, err error) error {
	if !apierrors.IsNotFound(err) {
		return err
	}
	other, arg := snapshot.CRDTarget, "osts/"+name
	if t.OrApps().Custom {
		other, arg = snapshot.StatefulSetTarget, "statefulset/"+name
	}
	if _, gerr := snapshot.GetSet(ctx, c, other, ns, name); gerr != nil {
		return err
	}
	return fmt.Errorf("%w; the %s %s %s/%s exists: %s names it", err, other.GroupVersion, other.Kind, ns, name, arg)
}

// target reads a command's statefulset/NAME argument (its kind and name) and --feature-gates, and
// connects to the cluster.
func (o *pluginOptions) target(arg, featureGates string) (t snapshot.Target, name string, features map[string]bool, c kubernetes.Interface, ns string, err error) {
	if t, name, err = parseSetArg(arg); err != nil {
		return t, "", nil, nil, "", withCode(ExitUsage, err)
	}
	if features, err = parseFeatureGates(featureGates); err != nil {
		return t, "", nil, nil, "", withCode(ExitUsage, err)
	}
	c, ns, err = o.client()
	return t, name, features, c, ns, err
}

func writeFormatted(w io.Writer, format string, v any, text func(io.Writer) error) error {
	if format == "text" {
		return text(w)
	}
	return writeJSONAs(w, format, func(w io.Writer) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
}

// pluginPreviewOptions are the flags of kubectl ordinal preview.
type pluginPreviewOptions struct {
	file, featureGates, htmlOut string
	replace                     bool // kubectl replace -f: the manifest is the whole set, not an apply
	rollout                     rolloutFlags
	supplied                    configMapModules
	signals                     policyContextFlags
	validate                    validateFlag
}

func newPluginPreview(mopts *moduleOptions, o *pluginOptions) *cobra.Command {
	p := &pluginPreviewOptions{}
	cmd := &cobra.Command{
		Use:   "preview -f web.yaml",
		Short: "Show what applying a manifest would do to the live set: steps, batches, traps",
		Long: `preview reads a StatefulSet manifest, has the API server default it exactly as ` + "`kubectl apply`" + ` would
store it (a dry run, dryRun=All: nothing is changed), builds the controller's snapshot of the
live set (its pods, ControllerRevisions and PVCs) and replays the edit with the reconcile module: the steps
until the rollout completes or stops, the batches of pods taken down together, the pods a partition holds
back, and warnings for known traps. A set that does not exist yet is previewed as a create.

The namespace is the manifest's, else -n, else the context's. A set last applied with client-side kubectl
apply (it carries kubectl.kubernetes.io/last-applied-configuration) is patched in the dry run as kubectl apply
patches it (its three-way merge): a field the last apply set and the file drops is removed. Any other set
is merged like server-side apply: fields other managers own and the file omits are kept.

--replace previews kubectl replace -f instead: the manifest is the whole set (as kubectl get -o yaml, or
kubectl ordinal undo --dry-run=client -o yaml, print it), put in place of the live one, which must exist.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return p.run(cmd, mopts, o) },
	}
	cmd.Flags().StringVarP(&p.file, "filename", "f", "", "the StatefulSet manifest, or - for standard input")
	cmd.Flags().BoolVar(&p.replace, "replace", false, "preview kubectl replace -f (the whole set), not apply -f")
	p.rollout.bind(cmd, `kubelet model: "delays" (default) or "tick"`, true)
	cmd.Flags().StringVar(&p.featureGates, "feature-gates", "", "feature-gate overrides for the module")
	cmd.Flags().StringVar(&p.htmlOut, "html", "", "write an HTML picture of the rollout to this file")
	p.supplied.bind(cmd)
	p.signals.bind(cmd)
	p.validate.bind(cmd)
	return cmd
}

// run previews the manifest's edit of the live set: the flags, the edit as the API server would make it (a
// dry run), its replay, then the preview written.
func (p *pluginPreviewOptions) run(cmd *cobra.Command, mopts *moduleOptions, o *pluginOptions) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	if p.file == "" {
		return withCode(ExitUsage, fmt.Errorf("-f is required (a StatefulSet manifest, or - for standard input)"))
	}
	fail, err := p.rollout.parse(true)
	if err != nil {
		return err
	}
	if err := checkHTMLPath(p.htmlOut); err != nil {
		return err
	}
	v, err := p.validate.resolve(cmd)
	if err != nil {
		return err
	}
	features, err := parseFeatureGates(p.featureGates)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	js, manifest, err := readSetManifest(cmd, mopts, v, p.file)
	if err != nil {
		return err
	}
	target := setTarget(manifest.APIVersion)
	c, ns, err := o.manifestClient(manifest)
	if err != nil {
		return err
	}
	ctx := cmdContext(cmd)
	old, cur, objs, err := liveEdit(ctx, c, target, ns, manifest.Name, js, p.replace)
	if err != nil {
		return err
	}
	res, err := p.preview(ctx, cmd.ErrOrStderr(), format, mopts, o, c,
		preview.Input{Old: old, New: cur, Objects: objs, Features: features, Model: p.rollout.model, Budget: p.rollout.budget()})
	if err != nil {
		return err
	}
	op := editOp(ctx, c, target, ns, manifest.Name, old == nil, res)
	if err := p.write(cmd, format, op, res); err != nil || res.Preview == nil {
		return err
	}
	return fail.verdict(res.Preview.Outcome, res.Preview.Warnings)
}

// editOp is what the edit does to the live set ns/name (create: there is none), for the text's first line. A
// create of a set that exists as the other kind says so first in the summary (otherKindLine).
func editOp(ctx context.Context, c kubernetes.Interface, target snapshot.Target, ns, name string, create bool, res *preview.Result) string {
	if !create {
		return "apply to StatefulSet " + ns + "/" + name
	}
	if line := otherKindLine(ctx, c, target, ns, name); line != "" {
		res.Summary.Lines = append([]string{line}, res.Summary.Lines...)
	}
	return "create StatefulSet " + ns + "/" + name
}

// write writes the preview in format to stdout (-o json|yaml: the preview and its summary) and its picture to
// --html when there is a rollout to draw. As `ordinal preview` does, the output is rendered first and the
// picture written before it, so a preview that cannot be written leaves neither.
func (p *pluginPreviewOptions) write(cmd *cobra.Command, format, op string, res *preview.Result) error {
	out := struct {
		Preview *replay.Preview `json:"preview"`
		Summary preview.Summary `json:"summary"`
	}{res.Preview, res.Summary}
	var picture func(io.Writer) error // none without a rollout to draw
	if res.Preview != nil {
		picture = res.Preview.WriteHTML
	}
	b, err := renderWithPicture(cmd.ErrOrStderr(), func(w io.Writer) error {
		return writeFormatted(w, format, out, func(w io.Writer) error { return writeLivePreview(w, op, res) })
	}, "preview picture", p.htmlOut, picture)
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(b)
	return err
}

// manifestClient connects to the cluster, in the manifest's namespace when it names one (which -n may
// repeat, not contradict: kubectl's rule), else -n's or the context's.
func (o *pluginOptions) manifestClient(manifest *appsv1.StatefulSet) (kubernetes.Interface, string, error) {
	c, ns, err := o.client()
	if err != nil {
		return nil, "", err
	}
	if manifest.Namespace != "" {
		if o.kube.namespace != "" && o.kube.namespace != manifest.Namespace {
			return nil, "", withCode(ExitUsage, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q", manifest.Namespace, o.kube.namespace))
		}
		ns = manifest.Namespace
	}
	return c, ns, nil
}

// preview replays the edit in (its sets, objects, features, model and budget) with the module, the modules
// and policies the set names and what those policies read from the cluster (c), drawing its progress on a
// terminal: a large set takes a while.
func (p *pluginPreviewOptions) preview(ctx context.Context, stderr io.Writer, format string, mopts *moduleOptions, o *pluginOptions,
	c kubernetes.Interface, in preview.Input) (*preview.Result, error) {
	mods, err := o.loadModules(ctx, mopts, &p.supplied, in.Features)
	if err != nil {
		return nil, err
	}
	defer mods.close()
	pctx, err := p.signals.fetch(ctx, c, in.New, in.Objects.Pods, mods.pols.Get) // the policies the edit names
	if err != nil {
		return nil, err
	}
	in.Module, in.NamedModule, in.NamedPolicy = mods.module, mods.named, mods.pols.Get
	in.Budgets, in.Nodes, in.Signals = pctx.Budgets, pctx.Nodes, pctx.Signals
	prog := newProgress(stderr, format, "previewing")
	in.Now, in.Progress, in.Events = time.Now(), prog.update, preview.SetEvents(ctx, c, in.Old)
	res, err := preview.Preview(ctx, in)
	prog.done()
	if err != nil {
		return nil, withCode(exitCodeOf(err), err)
	}
	return res, nil
}

// readSetManifest reads the StatefulSet manifest of -f file as JSON, with its unknown fields named (or refused,
// by v) here: the dry run sends it as written, and the live API server, whatever its version, stores what it
// knows.
func readSetManifest(cmd *cobra.Command, mopts *moduleOptions, v fieldValidation, file string) ([]byte, *appsv1.StatefulSet, error) {
	in, err := mopts.readDocument(cmd.InOrStdin(), file, "StatefulSet manifest")
	if err != nil {
		return nil, nil, err
	}
	js, err := yamljson.ToJSONWithin(in, mopts.inputLimit(), "StatefulSet manifest "+displayName(file))
	if err != nil {
		return nil, nil, withCode(ExitUsage, fmt.Errorf("%s: %w", file, err))
	}
	var manifest appsv1.StatefulSet
	if err := json.Unmarshal(js, &manifest); err != nil {
		return nil, nil, withCode(ExitUsage, fmt.Errorf("%s: %w", file, err))
	}
	if manifest.Kind != "StatefulSet" || manifest.Name == "" {
		return nil, nil, withCode(ExitUsage, fmt.Errorf("%s: want one StatefulSet (apps/v1 or ordinal.dev/v1) with metadata.name, got kind %q name %q", file, manifest.Kind, manifest.Name))
	}
	if _, err := v.manifest(js, file, "StatefulSet"); err != nil {
		return nil, nil, err
	}
	return js, &manifest, nil
}

// previewFieldManager is the field manager of kubectl ordinal preview's dry runs (nothing they name is stored).
const previewFieldManager = "kubectl-ordinal-preview"

// liveEdit is the edit a manifest (js) makes to the live set ns/name of kind target: the set now (nil when
// it does not exist: a create), the set as the API server would store the manifest (a server-side apply
// with dryRun=All; replace: an update, as kubectl replace -f), and the namespace's objects its snapshot is
// built from.
func liveEdit(ctx context.Context, c kubernetes.Interface, target snapshot.Target, ns, name string, js []byte, replace bool) (old, cur *appsv1.StatefulSet, objs snapshot.Objects, err error) {
	live, err := snapshot.GetSet(ctx, c, target, ns, name)
	switch {
	case err == nil:
		old = live
	case !apierrors.IsNotFound(err) || replace: // kubectl replace of a set that does not exist: its NotFound
		return nil, nil, objs, withCode(ExitUsage, err)
	}
	switch {
	case replace:
		cur, err = snapshot.DryRunReplaceSet(ctx, c, target, old, js, previewFieldManager)
	case old != nil && old.Annotations[lastAppliedAnnotation] != "":
		cur, err = dryRunClientSideApply(ctx, c, target, old, js)
	default:
		cur, err = snapshot.DryRunApplySet(ctx, c, target, ns, name, js, previewFieldManager)
	}
	if err != nil {
		return nil, nil, objs, withCode(ExitUsage, fmt.Errorf("the API server does not accept this StatefulSet (server-side dry run): %w", err))
	}
	if objs, err = snapshot.NamespaceObjects(ctx, c, target, ns); err != nil {
		return nil, nil, objs, withCode(ExitUsage, err)
	}
	return old, cur, objs, nil
}

// otherKindLine says that a manifest which would create the set ns/name of kind target names a set that
// exists as the other kind: after kubectl ordinal migrate, applying the old apps/v1 manifest creates a
// second set of the same name beside the ordinal.dev/v1 one that controls the pods (the preview itself is
// of a create, as the API server would do it). "" when there is none or it cannot be read.
func otherKindLine(ctx context.Context, c kubernetes.Interface, target snapshot.Target, ns, name string) string {
	other := snapshot.CRDTarget
	if target.OrApps().Custom {
		other = snapshot.StatefulSetTarget
	}
	if _, err := snapshot.GetSet(ctx, c, other, ns, name); err != nil {
		return ""
	}
	return fmt.Sprintf("%s %s/%s exists already (kubectl ordinal migrate moves a set between the kinds): this %s manifest "+
		"creates a second set of that name beside it; to change the set, apply the manifest with apiVersion %s",
		other, ns, name, target.OrApps().APIVersion(), other.APIVersion())
}

// dryRunClientSideApply is what the API server would store for the manifest (JSON) applied to the live set
// with client-side kubectl apply, which a set carrying its last-applied-configuration was applied with:
// kubectl's three-way patch of that record, the manifest and the live set (a strategic merge patch for
// apps/v1, a JSON merge patch for the custom kind, which kubectl's scheme does not know), sent with
// dryRun=All. A field the last apply set and the manifest drops is removed, as kubectl apply removes it; a
// server-side apply keeps it when another field manager (kubectl-client-side-apply) owns it, so a preview of
// reverting an env change once showed the env kept and the rollout held, and the apply then completed.
func dryRunClientSideApply(ctx context.Context, c kubernetes.Interface, target snapshot.Target, live *appsv1.StatefulSet, manifest []byte) (*appsv1.StatefulSet, error) {
	original := []byte(live.Annotations[lastAppliedAnnotation])
	withType := *live // the live set as the API server has it, with its apiVersion and kind (a typed read drops them)
	withType.APIVersion, withType.Kind = target.OrApps().APIVersion(), "StatefulSet"
	current, err := json.Marshal(&withType)
	if err != nil {
		return nil, err
	}
	var patch []byte
	pt := types.StrategicMergePatchType
	if target.OrApps().Custom {
		pt = types.MergePatchType
		patch, err = jsonmergepatch.CreateThreeWayJSONMergePatch(original, manifest, current,
			mergepatch.RequireKeyUnchanged("apiVersion"), mergepatch.RequireKeyUnchanged("kind"), mergepatch.RequireMetadataKeyUnchanged("name"))
	} else {
		var meta strategicpatch.LookupPatchMeta
		if meta, err = strategicpatch.NewPatchMetaFromStruct(&appsv1.StatefulSet{}); err == nil {
			patch, err = strategicpatch.CreateThreeWayMergePatch(original, manifest, current, meta, true)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kubectl apply's patch of the live set (its %s): %w", lastAppliedAnnotation, err)
	}
	return snapshot.DryRunPatchSet(ctx, c, target, live.Namespace, live.Name, pt, patch, previewFieldManager)
}

// writeLivePreview is the text of a preview of the live set: what the edit does (op), the live objects it
// was previewed against, the summary, then the rollout.
func writeLivePreview(w io.Writer, op string, res *preview.Result) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s (live: %d pods, %d revisions, %d claims)\n", op, res.Pods, res.Revisions, res.Claims)
	if len(res.Summary.Lines) > 0 {
		b.WriteString("summary:\n")
		for _, l := range res.Summary.Lines {
			fmt.Fprintf(&b, "  * %s\n", l)
		}
	}
	b.WriteString("\n")
	b.WriteString(res.Text)
	_, err := io.WriteString(w, termsafe.String(b.String())) // the summary: policies' and the module's words
	return err
}

// pluginTimelineOptions are the flags of kubectl ordinal timeline.
type pluginTimelineOptions struct {
	model, featureGates string
	verbose             bool
	supplied            configMapModules
	signals             policyContextFlags
}

func newPluginTimeline(mopts *moduleOptions, o *pluginOptions) *cobra.Command {
	t := &pluginTimelineOptions{}
	cmd := &cobra.Command{
		Use:   "timeline statefulset/NAME",
		Short: "Replay the set's current rollout to completion from the live state, in virtual time",
		Long: `timeline builds the controller's snapshot of the live set and replays it with the reconcile module, an
in-memory API server and a simulated kubelet until nothing more happens: every sync the controller would make
from now on, with the pods' states and the writes, and how the rollout ends (complete, partitioned, stuck).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return t.run(cmd, args[0], mopts, o) },
	}
	cmd.Flags().StringVar(&t.model, "model", "", `kubelet model: "delays" (default) or "tick"`)
	cmd.Flags().StringVar(&t.featureGates, "feature-gates", "", "feature-gate overrides for the module")
	cmd.Flags().BoolVar(&t.verbose, "verbose", false, "also print idle syncs and the controller's events")
	t.supplied.bind(cmd)
	t.signals.bind(cmd)
	return cmd
}

// run reads the live set, replays it from now on and writes the timeline.
func (t *pluginTimelineOptions) run(cmd *cobra.Command, arg string, mopts *moduleOptions, o *pluginOptions) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	live, err := o.liveSetSnapshot(cmd, arg, t.featureGates)
	if err != nil {
		return err
	}
	tl, err := t.replay(cmd, live, mopts, o, format)
	if err != nil {
		return err
	}
	if format != "text" {
		return writeJSONAs(cmd.OutOrStdout(), format, tl.WriteJSON)
	}
	return tl.WriteText(cmd.OutOrStdout(), t.verbose)
}

// replay replays the live set's world, with the PodDisruptionBudgets, nodes and signals its policies read,
// on the modules the controller would run, drawing progress on a terminal.
func (t *pluginTimelineOptions) replay(cmd *cobra.Command, live *liveSetRead, mopts *moduleOptions, o *pluginOptions, format string) (*replay.Timeline, error) {
	sc, err := replay.ScenarioFromSnapshot(live.snap.JSON)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	ctx := cmdContext(cmd)
	mods, err := o.loadModules(ctx, mopts, &t.supplied, live.features)
	if err != nil {
		return nil, err
	}
	defer mods.close()
	pctx, err := t.signals.fetch(ctx, live.client, live.objs.Set, live.objs.Pods, mods.pols.Get)
	if err != nil {
		return nil, err
	}
	sc.Manifests = append(append(sc.Manifests, pctx.Budgets...), pctx.Nodes...)
	sc.Signals = pctx.Signals
	prog := newProgress(cmd.ErrOrStderr(), format, "replaying")
	tl, err := replay.Run(ctx, sc, replay.Options{Module: mods.module, NamedModule: mods.named, NamedPolicy: mods.pols.Get, Model: t.model, Progress: prog.update})
	prog.done()
	if err != nil {
		return nil, withCode(exitCodeOf(err), err)
	}
	return tl, nil
}

func newPluginSnapshot(o *pluginOptions) *cobra.Command {
	var featureGates string
	cmd := &cobra.Command{
		Use:   "snapshot statefulset/NAME",
		Short: "Print the snapshot the controller would build for the set now (ABI v1 JSON by default)",
		Long: `snapshot builds the controller's snapshot of the live set (the set, its pods, ControllerRevisions and
PVCs, and "now") and prints it: ABI v1 JSON by default, -o yaml, or -o text, a table of the objects.
Recorded, it is the world that ordinal previews an edit against without the cluster, in CI
(docs/ci.md), or a bug report's:

  kubectl ordinal snapshot statefulset/web -n prod > web.snapshot.json
  ordinal preview -f web.yaml --from web.snapshot.json   # what an edit will do
  ordinal replay -f web.snapshot.json                    # the rollout from there, in virtual time`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.output == "" {
				o.output = "json"
			}
			format, err := o.format()
			if err != nil {
				return err
			}
			live, err := o.liveSetSnapshot(cmd, args[0], featureGates)
			if err != nil {
				return err
			}
			snap, sel := live.snap, live.objs
			if format != "text" {
				return writeJSONAs(cmd.OutOrStdout(), format, func(w io.Writer) error {
					_, err := w.Write(append(snap.JSON, '\n'))
					return err
				})
			}
			var b bytes.Buffer
			s := sel.Set
			fmt.Fprintf(&b, "StatefulSet %s/%s: %d replicas, %s, %s; currentRevision %s, updateRevision %s\n", s.Namespace, s.Name,
				ptrInt(s.Spec.Replicas), s.Spec.PodManagementPolicy, s.Spec.UpdateStrategy.Type, s.Status.CurrentRevision, s.Status.UpdateRevision)
			fmt.Fprintf(&b, "pods (%d):\n", len(sel.Pods))
			for _, p := range sel.Pods {
				fmt.Fprintf(&b, "  %-24s %-10s ready=%-5v revision=%s%s\n", p.Name, p.Status.Phase, kube.PodReady(p), p.Labels[appsv1.ControllerRevisionHashLabelKey], terminating(p))
			}
			fmt.Fprintf(&b, "revisions (%d):\n", len(sel.Revisions))
			for _, r := range sel.Revisions {
				fmt.Fprintf(&b, "  %-24s revision %d\n", r.Name, r.Revision)
			}
			fmt.Fprintf(&b, "claims (%d):\n", len(sel.Claims))
			for _, pvc := range sel.Claims {
				fmt.Fprintf(&b, "  %-24s %s\n", pvc.Name, pvc.Status.Phase)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), termsafe.String(b.String())) // the API server's text
			return err
		},
	}
	cmd.Flags().StringVar(&featureGates, "feature-gates", "", "feature-gate overrides to put in the snapshot")
	return cmd
}

func ptrInt(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func terminating(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return " (terminating)"
	}
	return ""
}

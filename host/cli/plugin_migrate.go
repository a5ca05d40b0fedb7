package cli

// `kubectl ordinal migrate`: the API steps. The decisions are migrate.go's.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ordinal-dev/ordinal/host/controller"
	"github.com/ordinal-dev/ordinal/host/crd"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

const migrateHelp = `migrate moves a live StatefulSet between kube-controller-manager's controller (apps/v1) and Ordinal's
(ordinal.dev/v1, the CRD statefulsets.ordinal.dev) without deleting or recreating a pod and without a new
ControllerRevision:

  kubectl ordinal migrate statefulset/web --to ordinal    apps/v1 -> ordinal.dev/v1
  kubectl ordinal migrate statefulset/web --to apps       ordinal.dev/v1 -> apps/v1

The steps:
  1. read the source set and refuse, changing nothing, when: it is mid-rollout (observedGeneration
     behind generation, currentRevision != updateRevision, updated or current replicas !=
     spec.replicas) unless --allow-rollout; a set of that name already exists in the target kind;
     the source is being deleted or controlled by another object; for --to ordinal, the CRD is not
     installed (kubectl apply -f examples/deploy/crd.yaml, or the Helm chart); or the target's API
     server would store a different spec (a server-side dry-run create is compared with the source's
     spec: another template is another revision name);
  2. save the target object and its status in a backup file (--backup-dir, default
     ~/.local/state/ordinal/migrate or $XDG_STATE_HOME/ordinal/migrate), then delete the source with
     propagationPolicy=Orphan and preconditions on its uid and resourceVersion (an edit made after
     step 1 fails the delete: nothing is changed, run again) and wait until the garbage collector
     has removed the owner references from its pods, revisions and claims and then the object;
  3. create the target: same name, namespace, labels, annotations (kubectl's
     last-applied-configuration naming the target's apiVersion), owner references and the spec
     exactly as the API server returned it; then write the source's status through the status
     subresource (currentRevision, updateRevision, collisionCount, replica counts, conditions; not
     observedGeneration; for ordinal.dev also status.selector): revision names include
     collisionCount, and a rollout continues from status.currentRevision; then keep the backup under
     a name of its own (*.done-TIMESTAMP.json, printed; yours to delete);
  4. with --wait (the default), wait until every pod matching the selector is controlled by the new
     set (its controller adopts the orphans), printing progress; the revisions and claims are
     adopted by the same sync.

Interrupted (Ctrl-C, a lost connection, a crash) the command leaves one of these states, and running the
same command again continues from it:
  before the delete            nothing changed (a backup may be left; the next run rewrites it);
  delete sent, set not gone    the source shows a deletionTimestamp and keeps its pods until the
                               garbage collector is done; the next run finds it with its backup and
                               waits;
  source gone, target absent   the pods keep running, unmanaged (a failed pod is not replaced,
                               nothing scales); the next run creates the target from the backup (the
                               error message also prints the kubectl create and kubectl patch to do
                               it by hand);
  target created, no status    its controller may sync it before the status is there: for a settled
                               set it computes the same revisions; mid-rollout it would update every
                               pod. The next run writes the status if no controller has yet, else
                               says what differs;
  done, backup not yet kept    the next run keeps it (renamed) and waits for the adoption.
A failure after the delete prints the backup's path and the commands to finish. Creation is never retried
with another spec: the backup holds the one the API server returned.

--dry-run checks the set as step 1 does (the server-side dry-run create included), prints the steps the
migration would take from where it stands, and changes nothing. --wait=false returns after step 3. --timeout bounds the waits (the garbage collector's, the adoption's;
0: no limit); a timeout after step 3 leaves a migrated set whose pods are not all adopted yet (exit 1).
Output: progress as text; with -o json|yaml, progress on standard error and the result on standard output.`

func newPluginMigrate(o *pluginOptions) *cobra.Command {
	var to, backupDir string
	var allowRollout, waitAdopt, dryRun bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "migrate statefulset/NAME --to ordinal|apps",
		Short: "Move a live set between kube-controller-manager (apps/v1) and Ordinal (ordinal.dev/v1)",
		Long:  migrateHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := o.format()
			if err != nil {
				return err
			}
			from, target, err := migrateKinds(to)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			name, err := parseMigrateArg(args[0])
			if err != nil {
				return withCode(ExitUsage, err)
			}
			if backupDir == "" {
				backupDir = defaultBackupDir()
			}
			kc, ns, err := o.client()
			if err != nil {
				return err
			}
			cfg, _, err := o.kube.restConfig()
			if err != nil {
				return withCode(ExitUsage, err)
			}
			cfg.WarningHandler = rest.NoWarnings{}
			dyn, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			progress := cmd.OutOrStdout()
			if format != "text" {
				progress = cmd.ErrOrStderr()
			}
			r := &migrateRun{kc: kc, dyn: dyn, ns: ns, name: name, from: from, to: target, out: progress,
				backupDir: backupDir, allowRollout: allowRollout, wait: waitAdopt, timeout: timeout, dryRun: dryRun,
				rerun: rerunCommand(name, ns, target, backupDir, defaultBackupDir())}
			res, err := r.run(ctx)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			if format == "text" {
				return nil
			}
			return writeFormatted(cmd.OutOrStdout(), format, res, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "the kind the set becomes: ordinal (ordinal.dev/v1) or apps (apps/v1)")
	f.BoolVar(&allowRollout, "allow-rollout", false, "migrate a set mid-rollout (the new controller continues it)")
	f.BoolVar(&waitAdopt, "wait", true, "wait until the new controller has adopted every pod")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "longest wait for the adoption (0: no limit)")
	f.StringVar(&backupDir, "backup-dir", "", "directory of the backups (default: ~/.local/state/ordinal/migrate)")
	f.BoolVar(&dryRun, "dry-run", false, "print the steps a migration would take; change nothing")
	return cmd
}

// defaultBackupDir is where backups are kept unless --backup-dir says otherwise: the user's state
// directory (XDG), which outlives a reboot, unlike the system's temporary directory.
func defaultBackupDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "ordinal", "migrate")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "ordinal", "migrate")
	}
	return filepath.Join(os.TempDir(), "ordinal-migrate")
}

// rerunCommand is the command that continues an interrupted migration.
func rerunCommand(name, ns string, to migrateKind, backupDir, defaultDir string) string {
	c := fmt.Sprintf("kubectl ordinal migrate statefulset/%s -n %s --to %s", name, ns, to.flag)
	if filepath.Clean(backupDir) != filepath.Clean(defaultDir) {
		c += " --backup-dir " + backupDir
	}
	return c
}

// migrateResult is the -o json|yaml output.
type migrateResult struct {
	Namespace       string   `json:"namespace"`
	Name            string   `json:"name"`
	From            string   `json:"from"`
	To              string   `json:"to"`
	UID             string   `json:"uid,omitempty"`
	Step            string   `json:"resumedFrom,omitempty"`
	CurrentRevision string   `json:"currentRevision,omitempty"`
	UpdateRevision  string   `json:"updateRevision,omitempty"`
	CollisionCount  any      `json:"collisionCount,omitempty"`
	Pods            int      `json:"pods"`
	PodsAdopted     int      `json:"podsAdopted"`
	Waited          bool     `json:"waited"`
	Notes           []string `json:"notes,omitempty"`
	// Backup is the file the target object was saved in, kept after the migration for the user to delete.
	Backup string `json:"backup,omitempty"`
	// DryRun: nothing was changed; Steps are what the migration would do.
	DryRun bool     `json:"dryRun,omitempty"`
	Steps  []string `json:"steps,omitempty"`
}

type migrateRun struct {
	kc                     kubernetes.Interface
	dyn                    dynamic.Interface
	ns, name               string
	from, to               migrateKind
	out                    io.Writer
	backupDir, rerun       string
	allowRollout, wait     bool
	dryRun                 bool
	timeout                time.Duration
	objectFile, statusFile string
	res                    migrateResult
}

// say writes a line of the migration's progress: names, notes and the API server's errors are the cluster's
// text, so through termsafe.
func (r *migrateRun) say(format string, args ...any) {
	_, _ = io.WriteString(r.out, termsafe.String(fmt.Sprintf(format, args...))+"\n")
}

func (r *migrateRun) run(ctx context.Context) (*migrateResult, error) {
	r.res = migrateResult{Namespace: r.ns, Name: r.name, From: r.from.apiVersion(), To: r.to.apiVersion()}
	r.objectFile, r.statusFile = backupPaths(r.backupDir, r.to, r.ns, r.name)
	if err := r.checkCRD(); err != nil {
		return nil, err
	}
	st := migrateState{from: r.from, to: r.to, namespace: r.ns, name: r.name, allowRollout: r.allowRollout}
	var err error
	if st.source, err = r.get(ctx, r.from); err != nil {
		return nil, err
	}
	if st.target, err = r.get(ctx, r.to); err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(r.objectFile); err == nil {
		if st.backup, err = readBackup(r.from, r.to, b); err != nil {
			return nil, fmt.Errorf("backup %s of an earlier migration: %w (remove it if it is not needed)", r.objectFile, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	step, m, notes, err := planMigrate(st)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		r.say("note: %s", n)
	}
	r.res.Notes = notes
	if step != stepMigrate {
		r.res.Step = step.String()
	}
	if r.dryRun {
		return r.dryRunSteps(ctx, step, m)
	}
	var created map[string]any
	switch step {
	case stepMigrate:
		if err := r.dryRunCreate(ctx, m); err != nil {
			return nil, err
		}
		if err := r.saveBackup(m); err != nil {
			return nil, err
		}
		if err := r.orphanDelete(ctx, st.source); err != nil {
			return nil, err
		}
		fallthrough
	case stepAwaitGone:
		if step == stepAwaitGone {
			if err := r.saveBackup(m); err != nil { // the latest status
				return nil, err
			}
		}
		if err := r.awaitGone(ctx, st.source, m); err != nil {
			return nil, err
		}
		fallthrough
	case stepCreate:
		if created, err = r.create(m); err != nil {
			return nil, err
		}
		fallthrough
	case stepWriteStatus:
		if created == nil {
			created = st.target
		}
		if created, err = r.writeStatus(created, m); err != nil {
			return nil, err
		}
	case stepDone:
		created = st.target
	}
	r.res.UID = string(uidOf(created))
	if s, ok := created["status"].(map[string]any); ok {
		r.res.CurrentRevision, _ = s["currentRevision"].(string)
		r.res.UpdateRevision, _ = s["updateRevision"].(string)
		r.res.CollisionCount = s["collisionCount"]
	}
	if m != nil {
		r.keepBackup()
	}
	if !r.wait {
		r.say("migrated: %s %s/%s (uid %s); %s adopts its pods", r.to, r.ns, r.name, r.res.UID, r.to.controller)
		return &r.res, nil
	}
	if err := r.awaitAdoption(ctx, created); err != nil {
		return nil, err
	}
	return &r.res, nil
}

// checkCRD refuses when ordinal.dev/v1 statefulsets are not served: the CRD is not installed or not
// established (discovery lists a CRD's resources only once established).
func (r *migrateRun) checkCRD() error {
	served, err := snapshot.Served(r.kc.Discovery(), ordinalKind.target)
	switch {
	case err != nil:
		return fmt.Errorf("discovery of %s: %w", ordinalKind.apiVersion(), err)
	case served:
		return nil
	}
	what := "nothing to migrate from"
	if r.to == ordinalKind {
		what = "nothing to migrate to"
	}
	return fmt.Errorf("the API server serves no %s resources: the CRD %s.%s is not installed or not established (%s); install it with\n  kubectl apply -f examples/deploy/crd.yaml\nor the Helm chart (examples/helm/ordinal)",
		ordinalKind.apiVersion(), crd.Resource, crd.Group, what)
}

// get reads the set in a kind; nil if there is none.
func (r *migrateRun) get(ctx context.Context, k migrateKind) (map[string]any, error) {
	u, err := r.dyn.Resource(k.gvr()).Namespace(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %s/%s: %w", k, r.ns, r.name, err)
	}
	return u.Object, nil
}

// dryRunCreate has the target's API server validate, admit and default the target (nothing is stored) and
// refuses a spec it would store differently: another template hashes to other revision names.
func (r *migrateRun) dryRunCreate(ctx context.Context, m *migration) error {
	u, err := r.dyn.Resource(r.to.gvr()).Namespace(r.ns).Create(ctx, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(m.object)},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: controller.MigrateFieldManager})
	if err != nil {
		return fmt.Errorf("the API server would not create the %s %s/%s (server-side dry run): %w; nothing was changed", r.to, r.ns, r.name, err)
	}
	if d := specDiff(m.object["spec"], u.Object["spec"]); len(d) > 0 {
		return fmt.Errorf("the %s %s/%s would be stored with another spec than the %s's (server-side dry run):\n  %s\nits revisions would be new ones and every pod replaced; nothing was changed",
			r.to, r.ns, r.name, r.from, strings.Join(d, "\n  "))
	}
	return nil
}

func (r *migrateRun) saveBackup(m *migration) error {
	obj, status, err := m.backupFiles()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.backupDir, 0o700); err != nil {
		return fmt.Errorf("--backup-dir: %w; nothing was changed", err)
	}
	// the status file first: the object file is the one a later run looks for
	for _, f := range []struct {
		path string
		b    []byte
	}{{r.statusFile, status}, {r.objectFile, obj}} {
		tmp := f.path + ".tmp"
		if err := os.WriteFile(tmp, f.b, 0o600); err != nil {
			return fmt.Errorf("backup: %w; nothing was changed", err)
		}
		if err := os.Rename(tmp, f.path); err != nil {
			return fmt.Errorf("backup: %w; nothing was changed", err)
		}
	}
	r.say("saved the %s in %s", r.to, r.objectFile)
	return nil
}

// keepBackup renames the backup of a finished migration to a name of its own (a later run looks for the
// working name only) and says where it is: the user deletes it.
func (r *migrateRun) keepBackup() {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for _, p := range []string{r.statusFile, r.objectFile} {
		kept := strings.TrimSuffix(p, ".json") + ".done-" + stamp + ".json"
		if err := os.Rename(p, kept); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				r.say("warning: could not keep the backup %s: %v", p, err)
			}
			continue
		}
		if p == r.objectFile {
			r.res.Backup = kept
			r.say("backup kept: %s (delete it when you no longer need it)", kept)
		}
	}
}

// dryRunSteps says what the migration would do from where it stands, having checked what can be checked
// without a write (the server-side dry-run create of the target).
func (r *migrateRun) dryRunSteps(ctx context.Context, step migrateStep, m *migration) (*migrateResult, error) {
	id := r.ns + "/" + r.name
	var steps []string
	switch step {
	case stepMigrate:
		if err := r.dryRunCreate(ctx, m); err != nil {
			return nil, err
		}
		steps = append(steps, fmt.Sprintf("save the %s %s in %s", r.to, id, r.objectFile),
			fmt.Sprintf("delete the %s %s with propagationPolicy=Orphan (its pods, revisions and claims stay)", r.from, id))
		fallthrough
	case stepAwaitGone:
		steps = append(steps, "wait until the garbage collector has removed its owner references and the object")
		fallthrough
	case stepCreate:
		steps = append(steps, fmt.Sprintf("create the %s %s with the same spec", r.to, id))
		fallthrough
	case stepWriteStatus:
		steps = append(steps, "write its status (currentRevision, updateRevision, collisionCount, replica counts)")
	}
	if step != stepDone || m != nil {
		steps = append(steps, "keep the backup for you to delete")
	}
	if r.wait {
		steps = append(steps, fmt.Sprintf("wait until %s controls every pod matching the selector", r.to.controller))
	}
	r.res.DryRun, r.res.Steps = true, steps
	r.say("dry run: nothing was changed; the migration would:")
	for i, s := range steps {
		r.say("  %d. %s", i+1, s)
	}
	return &r.res, nil
}

func (r *migrateRun) removeBackup() {
	for _, p := range []string{r.objectFile, r.statusFile} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.say("warning: could not remove the backup %s: %v", p, err)
		}
	}
}

// orphanDelete deletes the source so that its dependents stay: propagationPolicy=Orphan, preconditions
// on the uid and resourceVersion checked.
func (r *migrateRun) orphanDelete(ctx context.Context, src map[string]any) error {
	uid := uidOf(src)
	meta, _ := src["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	orphan := metav1.DeletePropagationOrphan
	err := r.dyn.Resource(r.from.gvr()).Namespace(r.ns).Delete(ctx, r.name, metav1.DeleteOptions{
		PropagationPolicy: &orphan, Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	switch {
	case err == nil:
		r.say("deleted the %s %s/%s (uid %s) with propagationPolicy=Orphan: waiting for the garbage collector to orphan its pods, revisions and claims", r.from, r.ns, r.name, uid)
		return nil
	case apierrors.IsConflict(err):
		r.removeBackup()
		return fmt.Errorf("the %s %s/%s changed after it was checked (resourceVersion %s is no longer current): nothing was deleted; run the command again to check the new version", r.from, r.ns, r.name, rv)
	case apierrors.IsNotFound(err):
		r.removeBackup()
		return fmt.Errorf("the %s %s/%s was deleted by someone else meanwhile: nothing was migrated", r.from, r.ns, r.name)
	}
	// The delete may or may not have been applied (a lost answer): the backup stays for a second run.
	return fmt.Errorf("delete %s %s/%s: %w\nif it was deleted, the backup %s holds the %s: run the command again to finish (%s)", r.from, r.ns, r.name, err, r.objectFile, r.to, r.rerun)
}

// awaitGone waits until the source is gone: the garbage collector first removes its owner references from
// every dependent (orphan finalizer), then the object.
func (r *migrateRun) awaitGone(ctx context.Context, src map[string]any, m *migration) error {
	uid := uidOf(src)
	t0 := time.Now()
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cur, err := r.get(ctx, r.from)
		if err != nil {
			return false, nil // retried until the timeout
		}
		if cur == nil {
			return true, nil
		}
		if uidOf(cur) != uid {
			return false, fmt.Errorf("a new %s %s/%s (uid %s) was created while the old one was being deleted: it owns the pods now; the %s is saved in %s",
				r.from, r.ns, r.name, uidOf(cur), r.to, r.objectFile)
		}
		return false, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("the %s %s/%s is being deleted but was not gone after %s (is kube-controller-manager's garbage collector running?): its pods keep running; run the command again to continue:\n  %s",
				r.from, r.ns, r.name, time.Since(t0).Round(time.Second), r.rerun)
		}
		return err
	}
	r.say("the %s %s/%s is gone (%.1fs); its pods, revisions and claims are orphaned", r.from, r.ns, r.name, time.Since(t0).Seconds())
	return nil
}

// create makes the target. It does not stop for --timeout or an interrupt: the source is gone.
func (r *migrateRun) create(m *migration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, err := r.dyn.Resource(r.to.gvr()).Namespace(r.ns).Create(ctx, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(m.object)},
		metav1.CreateOptions{FieldManager: controller.MigrateFieldManager})
	if err != nil {
		return nil, fmt.Errorf("create %s %s/%s: %w\n%s", r.to, r.ns, r.name, err, finishByHand(m, r.objectFile, r.statusFile, r.rerun, false))
	}
	r.say("created the %s %s/%s (uid %s)", r.to, r.ns, r.name, u.GetUID())
	return u.Object, nil
}

// writeStatus writes the carried status through the status subresource. A controller that wrote a status
// first (it synced the new set in the moment between create and this write) is not overwritten: what it
// decided is reported instead.
func (r *migrateRun) writeStatus(obj map[string]any, m *migration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := r.dyn.Resource(r.to.gvr()).Namespace(r.ns)
	for {
		u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
		u.Object["status"] = runtime.DeepCopyJSON(m.status)
		out, err := res.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: controller.MigrateFieldManager})
		if err == nil {
			r.say("wrote its status: currentRevision %v, updateRevision %v, collisionCount %v",
				orNone(m.status["currentRevision"]), orNone(m.status["updateRevision"]), orNone(m.status["collisionCount"]))
			return out.Object, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("write the status of %s %s/%s: %w\n%s", r.to, r.ns, r.name, err, finishByHand(m, r.objectFile, r.statusFile, r.rerun, true))
		}
		cur, gerr := res.Get(ctx, r.name, metav1.GetOptions{})
		if gerr != nil {
			return nil, fmt.Errorf("write the status of %s %s/%s: %w\n%s", r.to, r.ns, r.name, gerr, finishByHand(m, r.objectFile, r.statusFile, r.rerun, true))
		}
		if step, _, notes, perr := planMigrate(migrateState{from: r.from, to: r.to, namespace: r.ns, name: r.name, target: cur.Object, backup: m}); perr == nil && step == stepDone {
			for _, n := range notes {
				r.say("warning: %s", n)
			}
			r.res.Notes = append(r.res.Notes, notes...)
			return cur.Object, nil
		}
		obj = cur.Object // its status is still empty: only the metadata moved on
	}
}

// awaitAdoption waits until every pod matching the set's selector is controlled by the set.
func (r *migrateRun) awaitAdoption(ctx context.Context, set map[string]any) error {
	s, err := typedSet(set)
	if err != nil {
		return err
	}
	sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
	if err != nil {
		return fmt.Errorf("spec.selector: %w", err)
	}
	last, unchanged := -1, 0
	t0 := time.Now()
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		l, err := r.kc.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return false, nil
		}
		adopted := 0
		for i := range l.Items {
			if ref := metav1.GetControllerOfNoCopy(&l.Items[i]); ref != nil && ref.UID == s.UID {
				adopted++
			}
		}
		r.res.Pods, r.res.PodsAdopted = len(l.Items), adopted
		if adopted != last {
			last, unchanged = adopted, 0
			r.say("pods controlled by the %s: %d/%d", r.to, adopted, len(l.Items))
		} else if unchanged++; unchanged == migrateStillWaitingPolls && adopted != len(l.Items) {
			// Said after 15 s with no pod adopted, long before --timeout: a controller that is off adopts nothing.
			r.say("still %d/%d after %s: is %s running%s? The migration itself is done: interrupted, `kubectl ordinal migrate` again only waits",
				adopted, len(l.Items), time.Since(t0).Round(time.Second), r.to.controller, kcmHint(r.to))
		}
		return adopted == len(l.Items), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("the %s %s/%s exists with its status, but after %s %s controls %d of its %d pods (is %s running%s?); the migration itself is done: `kubectl ordinal migrate` again only waits",
				r.to, r.ns, r.name, time.Since(t0).Round(time.Second), r.to.controller, r.res.PodsAdopted, r.res.Pods, r.to.controller, kcmHint(r.to))
		}
		return err
	}
	r.res.Waited = true
	r.say("migrated: every pod is controlled by the %s %s/%s (uid %s)", r.to, r.ns, r.name, s.UID)
	return nil
}

// migrateStillWaitingPolls is how many polls (500 ms apart) with no pod adopted since the last count make
// awaitAdoption say what it waits for.
var migrateStillWaitingPolls = 30

func kcmHint(k migrateKind) string {
	if k == appsKind {
		return " with its StatefulSet controller enabled"
	}
	return " for this namespace"
}

func uidOf(obj map[string]any) types.UID {
	meta, _ := obj["metadata"].(map[string]any)
	s, _ := meta["uid"].(string)
	return types.UID(s)
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// kubectl rollout's verbs for both kinds of set (host/rollout/actions.go has the patches).

func newPluginRestart(o *pluginOptions) *cobra.Command {
	return rolloutVerb(o, "restart", "Restart a set's pods: a new pod template, rolled out as its update strategy says", `restart sets the pod template's kubectl.kubernetes.io/restartedAt annotation to now, as `+"`kubectl rollout restart`"+`
does: a new revision, so the controller replaces every pod as the set's update strategy says (one at a time
from the highest ordinal by default; under OnDelete only as you delete them).`,
		func(_ *appsv1.StatefulSet, snapshot []byte, res string, custom bool) (rollout.Patch, error) {
			return rollout.RestartOf(snapshot, time.Now())
		}, true)
}

func newPluginPause(o *pluginOptions) *cobra.Command {
	return rolloutVerb(o, "pause", "Hold a set's rollout where it is", `pause holds the rollout (kubectl rollout pause refuses StatefulSets):
  - an ordinal.dev set gets the pause extension's annotation ordinal.dev/paused: "true": no pod is
    created, deleted or updated while it is there (the extended module's; the set should name it:
    ordinal.dev/module: extended);
  - an apps/v1 set gets the partition 2147483647, so no pod is updated whatever the controller
    (scaling still creates and deletes pods); its partition is kept in the annotation
    ordinal.dev/paused-partition.
A set already paused, or an apps/v1 set with updateStrategy OnDelete, is an error (exit 1).`,
		func(set *appsv1.StatefulSet, _ []byte, res string, custom bool) (rollout.Patch, error) {
			return rollout.Pause(set, res, custom)
		}, false)
}

func newPluginResume(o *pluginOptions) *cobra.Command {
	return rolloutVerb(o, "resume", "Let a paused set's rollout go on", `resume undoes pause: the ordinal.dev/paused annotation removed from an ordinal.dev set; an apps/v1 set's
partition put back from ordinal.dev/paused-partition (a partition someone set meanwhile is kept) and the
annotation removed. A set that is not paused is an error (exit 1).`,
		func(set *appsv1.StatefulSet, _ []byte, res string, custom bool) (rollout.Patch, error) {
			return rollout.Resume(set, res, custom)
		}, false)
}

func newPluginUndo(o *pluginOptions) *cobra.Command {
	var to int64
	cmd := rolloutVerb(o, "undo", "Roll a set back to an earlier revision's pod template", `undo replaces the set's pod template with the one a ControllerRevision recorded, as `+"`kubectl rollout undo`"+`
does: --to-revision N (the numbers `+"`kubectl ordinal history`"+` lists), by default the revision before the newest.
The controller then rolls the pods back as the update strategy says. When the template already is that
revision's, nothing is written ("skipped rollback"). To preview it first:
  kubectl ordinal undo statefulset/web --dry-run=client -o yaml > undo.yaml
  kubectl ordinal preview --replace -f undo.yaml`,
		func(_ *appsv1.StatefulSet, snapshot []byte, res string, _ bool) (rollout.Patch, error) {
			return rollout.Undo(snapshot, res, to)
		}, true)
	cmd.Flags().Int64Var(&to, "to-revision", 0, "the revision to roll back to (0: the one before the newest)")
	return cmd
}

// conflictRetries bounds the verbs' retries of a patch a status write alone made the API server refuse.
const conflictRetries = 5

// verbPatch makes a verb's patch of the set as read (snapshot: its snapshot with the revisions, for undo).
type verbPatch func(set *appsv1.StatefulSet, snapshot []byte, resource string, custom bool) (rollout.Patch, error)

// rolloutVerb is one of the verbs: read the set (and, for undo, its snapshot with the revisions), make the
// patch, send it with the set's resourceVersion as precondition, and say what happened as kubectl does:
// "statefulset.apps/web rolled back", or with -o json|yaml the set as the API server stored it. --dry-run is
// kubectl's: client applies the patch to the set read and sends nothing, server sends it with dryRun=All;
// either writes nothing, and with -o yaml gives a manifest kubectl ordinal preview -f takes.
func rolloutVerb(o *pluginOptions, verb, short, long string, patch verbPatch, needsRevisions bool) *cobra.Command {
	var dryRun string
	cmd := &cobra.Command{
		Use:   verb + " statefulset/NAME",
		Short: short,
		Long:  long,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := o.format()
			if err != nil {
				return err
			}
			if dryRun != dryRunNone && dryRun != dryRunClient && dryRun != dryRunServer {
				return withCode(ExitUsage, fmt.Errorf(`--dry-run %q: want "none", "server", or "client"`, dryRun))
			}
			o.warnings = cmd.ErrOrStderr() // the webhook's preview of the write, as kubectl rollout shows it
			t, name, _, c, ns, err := o.target(args[0], "")
			if err != nil {
				return err
			}
			p, set, err := sendVerb(cmdContext(cmd), c, t, ns, name, verb, patch, needsRevisions, dryRun)
			if err != nil {
				return err
			}
			set.APIVersion, set.Kind = t.APIVersion(), t.Kind
			set.ManagedFields = nil // as kubectl prints an object (--show-managed-fields=false)
			err = writeFormatted(cmd.OutOrStdout(), format, set, func(w io.Writer) error {
				ref := strings.ToLower(t.Kind) + "." + t.GroupVersion.Group + "/" + name
				_, err := fmt.Fprintf(w, "%s %s%s\n", ref, p.Done, map[string]string{dryRunClient: " (dry run)", dryRunServer: " (server dry run)"}[dryRun])
				return err
			})
			if p.Note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", p.Note)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&dryRun, "dry-run", dryRunNone, `"none"; "server": sent, dryRun=All; "client": not sent`)
	return cmd
}

// The values of the verbs' --dry-run, kubectl's.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
)

// sendVerb reads the set, makes the verb's patch and sends it (dryRun: --dry-run), again on a fresh read when
// only a status write made the API server refuse it (up to conflictRetries times), and returns the set as
// the API server stored it (would store it, under --dry-run; as read, when there is nothing to send).
func sendVerb(ctx context.Context, c kubernetes.Interface, t snapshot.Target, ns, name, verb string, patch verbPatch, needsRevisions bool,
	dryRun string) (rollout.Patch, *appsv1.StatefulSet, error) {
	var p rollout.Patch
	var set, stored *appsv1.StatefulSet
	var err, conflict error // conflict: the 409 of the last attempt
	for attempt, generation := 0, int64(-1); ; attempt++ {
		var snapJSON []byte
		if needsRevisions {
			snap, objs, err := snapshot.Live(ctx, c, t, ns, name, time.Now(), nil)
			if err != nil {
				return rollout.Patch{}, nil, withCode(ExitUsage, otherKindHint(ctx, c, t, ns, name, err))
			}
			set, snapJSON = objs.Set, snap.JSON
		} else if set, err = snapshot.GetSet(ctx, c, t, ns, name); err != nil {
			return rollout.Patch{}, nil, withCode(ExitUsage, otherKindHint(ctx, c, t, ns, name, err))
		}
		switch {
		case generation < 0:
			generation = set.Generation
		case set.Generation != generation: // the spec was edited since the first read: its 409 stands
			return rollout.Patch{}, nil, withCode(ExitUsage, conflict)
		}
		resource := t.Resource + "." + t.GroupVersion.Group
		if p, err = patch(set, snapJSON, resource, t.Custom); err != nil {
			return rollout.Patch{}, nil, withCode(ExitUsage, err)
		}
		if p.Data == nil {
			return p, set, nil
		}
		pt := types.MergePatchType
		if p.JSONPatch {
			pt = types.JSONPatchType
		}
		switch dryRun {
		case dryRunClient:
			stored, err = patchedLocally(set, pt, p.Data)
			if err != nil {
				return rollout.Patch{}, nil, withCode(ExitUsage, err)
			}
			return p, stored, nil
		case dryRunServer:
			stored, err = snapshot.DryRunPatchSet(ctx, c, t, ns, name, pt, p.Data, "kubectl-ordinal-"+verb)
		default:
			stored, err = snapshot.PatchSet(ctx, c, t, ns, name, pt, p.Data, "kubectl-ordinal-"+verb)
		}
		if err == nil {
			return p, stored, nil
		}
		if p.JSONPatch && apierrors.IsInvalid(err) {
			// undo's JSON patch tests the resourceVersion, and a failed test is a 422 with no details
			// ("the server rejected our request due to an error in our request"), not a 409: the set
			// read again at another version says it was the test, and it is the conflict it is
			if now, gerr := snapshot.GetSet(ctx, c, t, ns, name); gerr == nil && now.ResourceVersion != set.ResourceVersion {
				err = apierrors.NewConflict(schema.GroupResource{Group: t.GroupVersion.Group, Resource: t.Resource}, name,
					errors.New("the object has been modified; please apply your changes to the latest version and try again"))
			}
		}
		// The patch's resourceVersion refuses an edit made since the read; but a controller writes the
		// set's status on each sync of a rollout, a new resourceVersion each time, so a verb sent
		// mid-rollout (when it is needed) met a 409 for a status write alone. Read again and retry
		// while the spec is the one first read (its generation); an edit of the spec keeps the 409.
		if !apierrors.IsConflict(err) || attempt >= conflictRetries {
			return rollout.Patch{}, nil, withCode(ExitUsage, err)
		}
		conflict = err
	}
}

// patchedLocally is the set with the patch applied as the API server applies it (--dry-run=client): a JSON
// patch (RFC 6902, its test of the resourceVersion read included) or a JSON merge patch.
func patchedLocally(set *appsv1.StatefulSet, pt types.PatchType, patch []byte) (*appsv1.StatefulSet, error) {
	doc, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	if pt == types.JSONPatchType {
		ops, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, err
		}
		doc, err = ops.Apply(doc)
		if err != nil {
			return nil, err
		}
	} else if doc, err = jsonpatch.MergePatch(doc, patch); err != nil {
		return nil, err
	}
	out := &appsv1.StatefulSet{}
	return out, json.Unmarshal(doc, out)
}

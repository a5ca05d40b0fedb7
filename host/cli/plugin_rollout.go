package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
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
revision's, nothing is written ("skipped rollback").`,
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
// patch, send it with the set's resourceVersion as precondition, and say what happened as kubectl does.
func rolloutVerb(o *pluginOptions, verb, short, long string, patch verbPatch, needsRevisions bool) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " statefulset/NAME",
		Short: short,
		Long:  long,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, name, _, c, ns, err := o.target(args[0], "")
			if err != nil {
				return err
			}
			p, err := sendVerb(cmdContext(cmd), c, t, ns, name, verb, patch, needsRevisions)
			if err != nil {
				return err
			}
			ref := strings.ToLower(t.Kind) + "." + t.GroupVersion.Group + "/" + name
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", ref, p.Done)
			if p.Note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", p.Note)
			}
			return nil
		},
	}
}

// sendVerb reads the set, makes the verb's patch and sends it, again on a fresh read when only a status write
// made the API server refuse it (up to conflictRetries times).
func sendVerb(ctx context.Context, c kubernetes.Interface, t snapshot.Target, ns, name, verb string, patch verbPatch, needsRevisions bool) (rollout.Patch, error) {
	var p rollout.Patch
	var err, conflict error // conflict: the 409 of the last attempt
	for attempt, generation := 0, int64(-1); ; attempt++ {
		var set *appsv1.StatefulSet
		var snapJSON []byte
		if needsRevisions {
			snap, objs, err := snapshot.Live(ctx, c, t, ns, name, time.Now(), nil)
			if err != nil {
				return rollout.Patch{}, withCode(ExitUsage, otherKindHint(ctx, c, t, ns, name, err))
			}
			set, snapJSON = objs.Set, snap.JSON
		} else if set, err = snapshot.GetSet(ctx, c, t, ns, name); err != nil {
			return rollout.Patch{}, withCode(ExitUsage, otherKindHint(ctx, c, t, ns, name, err))
		}
		switch {
		case generation < 0:
			generation = set.Generation
		case set.Generation != generation: // the spec was edited since the first read: its 409 stands
			return rollout.Patch{}, withCode(ExitUsage, conflict)
		}
		resource := t.Resource + "." + t.GroupVersion.Group
		if p, err = patch(set, snapJSON, resource, t.Custom); err != nil {
			return rollout.Patch{}, withCode(ExitUsage, err)
		}
		if p.Data == nil {
			break
		}
		pt := types.MergePatchType
		if p.JSONPatch {
			pt = types.JSONPatchType
		}
		_, err = snapshot.PatchSet(ctx, c, t, ns, name, pt, p.Data, "kubectl-ordinal-"+verb)
		if err == nil {
			break
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
			return rollout.Patch{}, withCode(ExitUsage, err)
		}
		conflict = err
	}
	return p, nil
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
	"github.com/ordinal-dev/ordinal/internal/yamljson"
)

func newReconcileCommand(opts *moduleOptions) *cobra.Command {
	var file string
	var compact bool
	var output outputFlag
	var choice setChoice
	var validate validateFlag
	cmd := &cobra.Command{
		Use:   "reconcile [-f snapshot.json|list.yaml|-] [statefulset/NAME] [-n NAMESPACE]",
		Short: "Print the plan the StatefulSet controller would make for a snapshot",
		Long: `reconcile runs one sync of the module on a snapshot and prints the plan (ABI v1, see abi/README.md):
the ordered writes, the new status, the requeue delay and the events: a summary by default (-o text), the
plan itself with -o json or -o yaml. The snapshot is ABI v1 JSON (or the
same as YAML), or a kubectl List of a StatefulSet and its objects (kubectl get
statefulset/web,pods,controllerrevisions,pvc -o yaml), from which the controller's snapshot is built.
A List that holds several sets (kubectl get statefulsets,pods,controllerrevisions,pvc -A -o yaml) is
narrowed to one by -n NAMESPACE and statefulset/NAME; a snapshot's set must be the one they name.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := output.resolve(cmd)
			if err != nil {
				return err
			}
			if err := reconcileInputGiven(cmd, args); err != nil {
				return err
			}
			if err := choice.setArg(args); err != nil {
				return err
			}
			if len(opts.policyFiles) > 0 {
				return withCode(ExitUsage, errors.New("--policy: reconcile prints the module's plan for one sync, which no policy "+
					"touches; policies hold a plan's writes in replay, preview, the controller and the webhook"))
			}
			v, err := validate.resolve(cmd)
			if err != nil {
				return err
			}
			gc := holdCollector()
			defer gc.release()
			doc, err := opts.readDocument(cmd.InOrStdin(), file, "snapshot")
			if err != nil {
				return err
			}
			gc.input(len(doc))
			snapshot, err := snapshotInput(opts.recognise(doc, opts.inputLimit()), file, choice, v)
			if err != nil {
				return err
			}
			m, err := opts.load(cmd.Context())
			if err != nil {
				return err
			}
			defer m.Close(cmd.Context())
			named, closeNamed := opts.replayModules()
			defer closeNamed()
			ann := setAnnotations(snapshot.set)
			if names := ann[abi.AnnotationPolicies]; names != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "ordinal: the set names policies (%s: %s): this is the module's plan before them; "+
					"`ordinal replay` or `ordinal preview` with --policy shows what they hold\n", abi.AnnotationPolicies, termsafe.String(names))
			}
			// Nothing the module returns is printed before it is known to be a plan.
			raw, p, err := reconcilePlan(cmd.Context(), m, named, snapshot.json, ann)
			if err != nil {
				return err
			}
			switch {
			case compact || format == "json":
				err = writePlan(cmd.OutOrStdout(), raw, compact)
			case format == "yaml":
				var y bytes.Buffer
				if err = writeJSONAs(&y, format, func(w io.Writer) error { _, err := w.Write(raw); return err }); err == nil {
					_, err = cmd.OutOrStdout().Write([]byte(termsafe.String(y.String())))
				}
			default:
				err = writePlanText(cmd.OutOrStdout(), snapshot, p)
			}
			if err != nil {
				return withCode(ExitModuleFailure, err)
			}
			return planExitCode(p)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "-", "snapshot file, or - for standard input")
	cmd.Flags().SetNormalizeFunc(filenameAlias)
	choice.bindNamespace(cmd)
	addOutputFlag(cmd, &output, "text, json or yaml")
	cmd.Flags().BoolVar(&compact, "compact", false, "print the module's plan as returned (one line of JSON)")
	validate.bind(cmd)
	return cmd
}

// reconcileInputGiven refuses the two ways a first `ordinal reconcile` goes wrong before it reads anything:
// a snapshot file given as the argument (which names a set; the file goes with -f), and no -f on a terminal,
// where reading the default, standard input, would wait silently for a snapshot typed in.
func reconcileInputGiven(cmd *cobra.Command, args []string) error {
	if cmd.Flags().Changed("filename") {
		return nil
	}
	terminal := isTerminal(cmd.InOrStdin())
	if len(args) == 1 && isRegularFile(args[0]) {
		if _, _, err := parseSetArg(args[0]); err != nil || terminal {
			return withCode(ExitUsage, fmt.Errorf("%s is a file: reconcile reads its snapshot with -f (ordinal reconcile -f %s); "+
				"its argument names a set (statefulset/NAME)", args[0], args[0]))
		}
	}
	if terminal {
		return withCode(ExitUsage, errors.New("no snapshot: -f FILE reads one; without -f, reconcile reads standard input, "+
			"a terminal here (pipe a snapshot in, or give -f - to type one)"))
	}
	return nil
}

// isRegularFile reports whether path names a file (not a directory) that exists.
func isRegularFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// filenameAlias keeps --file, the flag's name before it followed kubectl (-f/--filename), working.
var filenameAlias = flagAliases(map[string]string{"file": "filename"})

// flagAliases keeps old flag names working as aliases of their new ones.
func flagAliases(old map[string]string) func(*pflag.FlagSet, string) pflag.NormalizedName {
	return func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if n, ok := old[name]; ok {
			name = n
		}
		return pflag.NormalizedName(name)
	}
}

// reconcileOnce runs the module once on snapshot and returns the exit error `reconcile` would: nil for a
// plan (SyncFailed included: the snapshot is fine), a rejection (2), or a module failure (4).
func reconcileOnce(ctx context.Context, mods *commandModules, snapshot snapshotFile) error {
	m, named, err := mods.reconciler(ctx)
	if err != nil {
		return err
	}
	_, p, err := reconcilePlan(ctx, m, named, snapshot.json, setAnnotations(snapshot.set))
	if err != nil {
		return err
	}
	if p.Error != nil && p.Error.Code == abi.CodeSyncFailed {
		return nil
	}
	return planExitCode(p)
}

// reconcilePlan runs once on snapshot the module the controller would (the one the set names with
// ordinal.dev/module among its annotations ann, from the registry; else m) and decodes its answer: the plan
// as returned and as read, a usage error (exit 1) for a module name the registry lacks, or a module failure
// (exit 4) for a failed call or an answer that is not a plan.
func reconcilePlan(ctx context.Context, m *wasm.Module, named func(context.Context, string) (plan.Reconciler, error), snapshot []byte, ann map[string]string) ([]byte, *abi.Plan, error) {
	_, raw, p, err := reconcileSet(ctx, m, named, snapshot, ann)
	return raw, p, err
}

// reconcileSet is reconcilePlan, also returning the module the set's sync ran on (the one it names, else m).
func reconcileSet(ctx context.Context, m *wasm.Module, named func(context.Context, string) (plan.Reconciler, error), snapshot []byte, ann map[string]string) (plan.Reconciler, []byte, *abi.Plan, error) {
	r, _, err := module.OfSet(ctx, ann, plan.Reconciler(m), named)
	if err != nil {
		return nil, nil, nil, withCode(ExitUsage, fmt.Errorf("the snapshot's set names a module (%s): %w", abi.AnnotationModule, err))
	}
	raw, p, err := plan.Call(ctx, r, snapshot) // the sync step's call and decode, stopping before the writes
	var failed *plan.ModuleError
	switch {
	case errors.As(err, &failed):
		return nil, nil, nil, withCode(ExitModuleFailure, failed.Err)
	case err != nil:
		return nil, nil, nil, withCode(ExitModuleFailure, fmt.Errorf("the module broke the ABI: %w", err))
	}
	return r, raw, p, nil
}

// readDocument reads a snapshot or manifest from a file, or standard input for "" and "-", at most as
// large as the guest memory limit (a snapshot cannot be larger and still fit the module), YAML to
// yamljson.Limit of it; binary input is refused after its first bytes.
func (o *moduleOptions) readDocument(stdin io.Reader, file, what string) ([]byte, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	limit := o.inputLimit()
	if file == "" || file == "-" {
		b, err := yamljson.Read(stdin, limit, what+" on standard input", "--memory-limit-mib")
		if err != nil {
			return nil, withCode(ExitUsage, fmt.Errorf("reading standard input: %w", err))
		}
		return b, nil
	}
	b, err := yamljson.ReadFile(file, limit, what+" "+file, "--memory-limit-mib")
	if err != nil {
		return nil, withCode(ExitUsage, fmt.Errorf("reading %s: %w", what, err))
	}
	return b, nil
}

// inputLimit is the most bytes of a snapshot or manifest: the guest memory limit.
func (o *moduleOptions) inputLimit() int64 { return int64(o.memoryLimitMB) << 20 }

func writePlan(w io.Writer, plan []byte, compact bool) error {
	if compact {
		if isTerminal(w) { // the same JSON value with DEL, C1 controls and bidi overrides as \u escapes
			plan = termsafe.JSON(plan)
		}
		_, err := fmt.Fprintf(w, "%s\n", plan)
		return err
	}
	plan = termsafe.JSON(plan)
	var buf bytes.Buffer
	if err := json.Indent(&buf, plan, "", "  "); err != nil {
		return fmt.Errorf("module returned invalid JSON: %w", err)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// planExitCode maps the plan's error to the documented exit code; the plan itself is already printed.
func planExitCode(p *abi.Plan) error {
	if p.Error == nil {
		return nil
	}
	if p.Error.Code == abi.CodeSyncFailed {
		return withCode(ExitSyncFailed, fmt.Errorf("sync failed: %s", p.Error.Message))
	}
	msg := p.Error.Message
	if p.Error.Path != "" {
		msg = p.Error.Path + ": " + msg
	}
	return withCode(ExitRejected, fmt.Errorf("snapshot rejected (%s): %s", p.Error.Code, msg))
}

// isTerminal reports whether f (a writer, or standard input) is a terminal: an *os.File on one
// (term.IsTerminal: /dev/null, a character device too, is not), or one that says it is one (a test's).
func isTerminal(f any) bool {
	switch t := f.(type) {
	case interface{ IsTerminal() bool }:
		return t.IsTerminal()
	case *os.File:
		return term.IsTerminal(int(t.Fd()))
	}
	return false
}

// setAnnotations are the string annotations of a snapshot's set (snapshotFile.set: none when the snapshot is
// not valid JSON, names no set, or its annotations are not an object: the module says what is wrong with
// it), read for what the CLI does by them (the module the set names, the policies it names), as the module
// reads them: the last of a key given twice.
func setAnnotations(set jsonv.Text) map[string]string {
	ann := map[string]string{}
	a := memberObject(memberObject(set, "metadata"), "annotations")
	a.Members(func(k string, v jsonv.Text) {
		if v.Kind() == jsonv.String {
			ann[k] = v.Str()
		}
	})
	return ann
}

// memberObject is the last member named key of the object o starts with, if it is an object ("" otherwise).
func memberObject(o jsonv.Text, key string) jsonv.Text {
	if o == "" || o.Kind() != jsonv.Object {
		return ""
	}
	var v [1]jsonv.Text
	o.MembersInto([]string{key}, v[:])
	if v[0] == "" || v[0].Kind() != jsonv.Object {
		return ""
	}
	return v[0]
}

// Package cli is the `ordinal` command line: cobra commands over the host library.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/host/firewall"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// exitCodeOf maps an error of a replay (replay, preview, and the plugin's live preview and timeline) to its
// exit code, so the same failure exits the same way from each: the module's failures (it trapped, timed
// out, wrote a plan that does not decode or that the firewall refuses) are ExitModuleFailure, its rejection
// of a snapshot ExitRejected, and everything else is the input's (a world, a file, a flag): ExitUsage.
func exitCodeOf(err error) int {
	var (
		rejected  *replay.RejectedError
		wasmErr   *wasm.Error
		moduleErr *hostplan.ModuleError
		badPlan   *hostplan.InvalidError
		refused   *firewall.RefusedError
	)
	switch {
	case errors.As(err, &rejected):
		return ExitRejected
	case errors.As(err, &wasmErr), errors.As(err, &moduleErr), errors.As(err, &badPlan), errors.As(err, &refused):
		return ExitModuleFailure
	}
	return ExitUsage
}

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// Main runs the CLI with the given arguments and streams and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand(stdin, stdout, stderr)
	if hint := pluginVerbHint(root, args); hint != "" {
		fmt.Fprintln(stderr, "ordinal: "+hint)
		return ExitUsage
	}
	return execute(root, args, stderr, "ordinal:")
}

// pluginVerbHint is the answer to `ordinal undo ...` and the other verbs only the kubectl plugin has: where
// the verb is and how to install the plugin, not cobra's "unknown command" ("" when args[0] is no such verb).
func pluginVerbHint(root *cobra.Command, args []string) string {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return ""
	}
	verb := args[0]
	for _, c := range root.Commands() {
		if c.Name() == verb || c.HasAlias(verb) {
			return ""
		}
	}
	for _, c := range newPluginRoot(nil, io.Discard, io.Discard).Commands() {
		if c.Name() == verb {
			return fmt.Sprintf("%q is a verb of the kubectl plugin: run `kubectl ordinal %s` (%s). Install the plugin by putting "+
				"this binary on PATH as %s, e.g. `ln -s \"$(command -v ordinal)\" /usr/local/bin/%s`, or with krew (`make krew`)",
				verb, strings.Join(append([]string{verb}, args[1:]...), " "), c.Short, PluginName, PluginName)
		}
	}
	return ""
}

// execute runs a command tree and maps its error to an exit code, printing the error after prefix.
func execute(root *cobra.Command, args []string, stderr io.Writer, prefix string) int {
	argsWithUsage(root)
	root.SetFlagErrorFunc(flagErrorWithUsage)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	// Errors carry module and scenario text: made safe for a terminal here, where they are printed.
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, termsafe.String(errorLine(prefix, ee.err)))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, termsafe.String(errorLine(prefix, err)))
	return ExitUsage
}

// argsWithUsage makes every command's check of its arguments say what the command takes: cobra's "accepts 1
// arg(s), received 0" is followed by the usage line, and a file given as the argument of a command that
// reads its file with -f (`ordinal preview web.yaml`) says so.
func argsWithUsage(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			var own *exitError
			if err == nil || errors.As(err, &own) {
				return err // a command's own check says what it takes
			}
			if f := cmd.Flags().Lookup("filename"); f != nil && !f.Changed && len(args) > 0 && isRegularFile(args[0]) {
				return fmt.Errorf("%s is a file: %s reads it with -f; usage: %s", args[0], cmd.CommandPath(), cmd.UseLine())
			}
			return fmt.Errorf("%w; usage: %s", err, cmd.UseLine())
		}
	}
	for _, sub := range c.Commands() {
		argsWithUsage(sub)
	}
}

// flagErrorWithUsage follows a flag cobra does not know with the command's usage line, as argsWithUsage
// does for arguments: kubectl's -f given to a command that takes its files as arguments (`ordinal test -f
// x.test.yaml`) then shows where they go, not only "unknown shorthand flag: 'f' in -f".
func flagErrorWithUsage(cmd *cobra.Command, err error) error {
	if !cmd.Runnable() { // a group of commands: its usage line says nothing
		return err
	}
	return fmt.Errorf("%w; usage: %s", err, cmd.UseLine())
}

// exitCodesAfterCommands prints a root command's exit codes after its usage, not in its description before
// it: there, `ordinal --help` showed 20 lines of exit codes before the commands, off a terminal's first
// screen. A subcommand's help keeps them in its own description.
func exitCodesAfterCommands(root *cobra.Command, codes string) {
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		help(c, args)
		if c == root {
			fmt.Fprintf(c.OutOrStdout(), "\n%s\n", strings.TrimRight(codes, "\n"))
		}
	})
}

// errorLine is how an error is printed: an API server's answer as kubectl prints it ("Error from server
// (NotFound): statefulsets.apps "web" not found"), an API server out of reach in kubectl's words
// (unreachable), anything else after prefix.
func errorLine(prefix string, err error) string {
	var se *apierrors.StatusError
	if errors.As(err, &se) && err.Error() == se.Error() { // the answer itself, not wrapped with our context
		if reason := se.ErrStatus.Reason; reason != "" && reason != metav1.StatusReasonUnknown {
			return fmt.Sprintf("Error from server (%s): %s", reason, se.Error())
		}
		return "Error from server: " + se.Error()
	}
	return prefix + " " + unreachable(err).Error()
}

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "ordinal",
		Short: "The Kubernetes StatefulSet controller's reconcile logic as a WebAssembly module",
		Long: `ordinal runs a reconcile module: the Kubernetes v1.37 StatefulSet controller's ordering and revision
logic compiled to WebAssembly. Given a snapshot (a StatefulSet, its pods, ControllerRevisions and PVCs, and
"now"), the module returns the plan of writes the upstream controller would make in one sync.

The default module is embedded in this binary; --module runs another one.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	opts := &moduleOptions{}
	opts.bind(root)
	root.AddCommand(newReconcileCommand(opts), newVersionCommand(opts))
	root.AddCommand(newReplayCommand(opts), newPreviewCommand(opts))
	root.AddCommand(newControllerCommand(opts), newSnapshotCommand())
	root.AddCommand(newWebhookCommand(opts), newTestCommand(opts), newPolicyCommand(opts))
	helpOnDemand(root)
	return root
}

// CommandTrees is every command tree the binary serves, `ordinal` and the kubectl plugin `kubectl ordinal`,
// unexecuted and writing nowhere: what the generated CLI reference (docs/reference/cli.md, hack/clidoc) reads.
// Their help texts are finished, as help prints them.
func CommandTrees() []*cobra.Command {
	trees := []*cobra.Command{newRootCommand(nil, io.Discard, io.Discard), newPluginRoot(nil, io.Discard, io.Discard)}
	for _, root := range trees {
		finishHelp(root)
	}
	return trees
}

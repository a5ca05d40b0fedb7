// Package cli is the `ordinal` command line: cobra commands over the host library.
package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Exit codes, documented in `ordinal --help`.
const (
	ExitOK            = 0 // plan printed, no error
	ExitUsage         = 1 // bad flags, unreadable files
	ExitRejected      = 2 // the module rejected the snapshot (error plan printed)
	ExitSyncFailed    = 3 // the sync failed as upstream's would (plan with SyncFailed printed)
	ExitModuleFailure = 4 // the module could not be loaded, trapped, timed out or ran out of memory
)

const exitCodesHelp = `Exit codes:
  0  plan printed, no error
  1  usage error or unreadable input
  2  the snapshot was rejected: the error plan is printed (error.code InvalidJSON, InvalidSnapshot,
     UnsupportedABI or UnknownFeatureGate, with error.path naming the bad field)
  3  the sync failed the way upstream's would (error.code SyncFailed); the plan is printed
  4  the module failed: it could not be loaded, speaks another ABI, trapped, timed out or ran out of memory`

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
	return execute(newRootCommand(stdin, stdout, stderr), args, stderr, "ordinal:")
}

// execute runs a command tree and maps its error to an exit code, printing the error after prefix.
func execute(root *cobra.Command, args []string, stderr io.Writer, prefix string) int {
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, prefix, ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, prefix, err)
	return ExitUsage
}

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "ordinal",
		Short: "The Kubernetes StatefulSet controller's reconcile logic as a WebAssembly module",
		Long: `ordinal runs a reconcile module: the Kubernetes v1.37 StatefulSet controller's ordering and revision
logic compiled to WebAssembly. Given a snapshot (a StatefulSet, its pods, ControllerRevisions and PVCs, and
"now"), the module returns the plan of writes the upstream controller would make in one sync.

The default module is embedded in this binary; --module runs another one.

` + exitCodesHelp,
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
	root.AddCommand(newWebhookCommand(opts))
	return root
}

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/plan"
)

func newReconcileCommand(opts *moduleOptions) *cobra.Command {
	var file string
	var compact bool
	cmd := &cobra.Command{
		Use:   "reconcile [-f snapshot.json|-]",
		Short: "Print the plan the StatefulSet controller would make for a snapshot",
		Long: `reconcile runs one sync of the module on a snapshot and prints the plan (ABI v1, see abi/README.md):
the ordered writes, the new status, the requeue delay and the events.

` + exitCodesHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			snapshot, err := readInput(cmd.InOrStdin(), file)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			m, err := opts.load(cmd.Context())
			if err != nil {
				return err
			}
			defer m.Close(cmd.Context())
			raw, err := m.Reconcile(cmd.Context(), snapshot)
			if err != nil {
				return withCode(ExitModuleFailure, err)
			}
			// Nothing the module returns is printed before it is known to be a plan.
			p, err := plan.Decode(raw)
			if err != nil {
				return withCode(ExitModuleFailure, fmt.Errorf("the module broke the ABI: %w", err))
			}
			if err := writePlan(cmd.OutOrStdout(), raw, compact); err != nil {
				return withCode(ExitModuleFailure, err)
			}
			return planExitCode(p)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "-", "snapshot file, or - for standard input")
	cmd.Flags().BoolVar(&compact, "compact", false, "print the plan exactly as the module returned it (one line)")
	return cmd
}

func readInput(stdin io.Reader, file string) ([]byte, error) {
	if file == "" || file == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	return b, nil
}

func writePlan(w io.Writer, plan []byte, compact bool) error {
	if compact {
		_, err := fmt.Fprintf(w, "%s\n", plan)
		return err
	}
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

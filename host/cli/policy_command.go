package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/policyfixture"
	"github.com/ordinal-dev/ordinal/internal/readlimit"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

func newPolicyCommand(opts *moduleOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work with policy modules (abi/POLICY.md): test one against its fixtures, bundle them",
	}
	cmd.AddCommand(newPolicyTestCommand(opts), newPolicyFixturesCommand())
	return cmd
}

func newPolicyTestCommand(opts *moduleOptions) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "test POLICY.wasm FIXTURES",
		Short: "Run a policy module (any language) against its fixtures, as the controller's gate does",
		Long: `test loads POLICY.wasm as the controller loads a policy (--timeout, --memory-limit-mib) and gives it each
fixture's input: the answer must be the fixture's answer (the same JSON value). This is the check the
controller makes of a policy the module ConfigMap supplies before a set may use it, run by the same code,
so fixtures that pass here pass there. It does not matter what the module is written in.

FIXTURES is a directory of fixture files (NAME.json, each {"description", "input", "answer"}: a policy's
testdata/) or one file holding a JSON array of them (the ConfigMap's NAME.policy.fixtures.json).

  ordinal policy test freeze.wasm testdata
  ordinal policy test freeze.wasm freeze.policy.fixtures.json --name freeze`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			fixtures, err := policyfixture.Read(args[1])
			if err != nil {
				return withCode(ExitUsage, fmt.Errorf("fixtures: %w", err))
			}
			p, err := loadPolicyFile(cmd.Context(), opts, args[0])
			if err != nil {
				return err
			}
			defer p.Close(context.Background())
			if name != "" {
				if err := policy.CheckName(p, name); err != nil {
					return withCode(ExitUsage, fmt.Errorf("%s: %w", args[0], err))
				}
			}
			failed := testFixtures(cmd.Context(), p, fixtures, cmd.OutOrStdout())
			if failed > 0 {
				return withCode(ExitTestFailed, fmt.Errorf("%d of %d fixtures failed", failed, len(fixtures)))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the name it is supplied under (NAME.policy.wasm); it must describe itself so")
	return cmd
}

func newPolicyFixturesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "fixtures DIR",
		Short: "Write DIR's fixtures as the module ConfigMap's JSON array (NAME.policy.fixtures.json)",
		Long: `fixtures reads DIR's fixture files (NAME.json, each {"description", "input", "answer"}) as
'ordinal policy test' does and writes them as one JSON array, the module ConfigMap's NAME.policy.fixtures.json:

  ordinal policy fixtures testdata > freeze.policy.fixtures.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fixtures, err := policyfixture.ReadDir(args[0])
			if err != nil {
				return withCode(ExitUsage, fmt.Errorf("fixtures: %w", err))
			}
			b, err := json.Marshal(fixtures)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(append(b, '\n'))
			return err
		},
	}
}

// loadPolicyFile reads and loads a policy module file with opts' limits.
func loadPolicyFile(ctx context.Context, opts *moduleOptions, path string) (*wasm.Policy, error) {
	code, err := readlimit.File(path, wasm.DefaultMaxModuleBytes, "policy "+path, "")
	if err != nil {
		return nil, withCode(ExitUsage, fmt.Errorf("reading policy: %w", err))
	}
	p, err := opts.loadPolicy(ctx, code)
	if err != nil {
		return nil, withCode(ExitModuleFailure, fmt.Errorf("policy %s: %w", path, err))
	}
	return p, nil
}

// testFixtures judges each fixture as the gate does (policy.CheckFixture), prints a line for each and a
// summary, and returns how many failed. What a policy answered is the module's text: it goes through termsafe.
func testFixtures(ctx context.Context, p *wasm.Policy, fixtures []policyfixture.Fixture, w io.Writer) (failed int) {
	var b strings.Builder
	d := p.Describe()
	fmt.Fprintf(&b, "policy %s %s (supplied as %s.policy.wasm)\n", d.Policy, d.Version, d.Policy)
	for _, f := range fixtures {
		_, err := policy.CheckFixture(ctx, p, f)
		if err == nil {
			fmt.Fprintf(&b, "PASS  %s  %s\n", f.Name, f.Description)
			continue
		}
		failed++
		fmt.Fprintf(&b, "FAIL  %s  %s\n        %v\n", f.Name, f.Description, err)
	}
	fmt.Fprintf(&b, "%d fixtures, %d failed\n", len(fixtures), failed)
	_, _ = io.WriteString(w, termsafe.String(b.String()))
	return failed
}

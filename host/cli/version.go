package cli

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"

	"github.com/spf13/cobra"
)

// hostVersion is the module version of the host, from build info (set by `go install ...@vX`), else "devel".
func hostVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func newVersionCommand(opts *moduleOptions) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the host and module versions and the Kubernetes version the module reproduces",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := opts.load(cmd.Context())
			if err != nil {
				return err
			}
			defer m.Close(cmd.Context())
			d := m.Describe()
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(map[string]any{
					"host": hostVersion(), "module": d, "moduleDigest": fmt.Sprintf("sha256:%x", m.Digest()),
				}, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s\n", b)
				return nil
			}
			fmt.Fprintf(out, "host:        ordinal %s\n", hostVersion())
			fmt.Fprintf(out, "module:      %s %s (abi %d, sha256:%x)\n", d.Module, d.ModuleVersion, d.ABI, m.Digest())
			fmt.Fprintf(out, "kubernetes:  %s (StatefulSet controller)\n", d.KubernetesVersion)
			gates := make([]string, 0, len(d.Features))
			for g := range d.Features {
				gates = append(gates, g)
			}
			sort.Strings(gates)
			for _, g := range gates {
				fmt.Fprintf(out, "  feature %s=%v\n", g, d.Features[g])
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

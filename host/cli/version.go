package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/internal/readlimit"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// hostVersion is the module version of the host, from build info (set by `go install ...@vX`), else "devel".
// stampedVersion is the host's version as a release build stamps it (make image: -ldflags -X with the module
// version and the commit), so an image does not report "devel".
var stampedVersion string

func hostVersion() string {
	if stampedVersion != "" {
		return stampedVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func newVersionCommand(opts *moduleOptions) *cobra.Command {
	var (
		output         outputFlag
		controllerAddr string
	)
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the host and module versions and the Kubernetes version the module reproduces",
		Long: `version prints the host's and the module's versions, the Kubernetes version the module reproduces and
its feature gates; -o json|yaml adds the module's describe and digest. With --controller HOST:PORT (a
running ` + "`ordinal controller`" + `'s --health-probe-bind-address) it prints the module that controller is
running, after its hot swaps.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := output.resolve(cmd)
			if err != nil {
				return err
			}
			if controllerAddr != "" {
				return printControllerModule(cmd, controllerAddr, format)
			}
			m, err := opts.load(cmd.Context())
			if err != nil {
				return err
			}
			defer m.Close(cmd.Context())
			d := m.Describe()
			out := cmd.OutOrStdout()
			if format != "text" {
				return writeJSONAs(out, format, func(w io.Writer) error {
					b, err := json.MarshalIndent(map[string]any{
						"host": hostVersion(), "module": d, "moduleDigest": fmt.Sprintf("sha256:%x", m.Digest()),
					}, "", "  ")
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(w, "%s\n", b)
					return err
				})
			}
			var b strings.Builder // the module's describe is its own text: through termsafe
			fmt.Fprintf(&b, "host:        ordinal %s\n", hostVersion())
			fmt.Fprintf(&b, "module:      %s %s (abi %d, sha256:%x)\n", d.Module, d.ModuleVersion, d.ABI, m.Digest())
			fmt.Fprintf(&b, "kubernetes:  %s (StatefulSet controller)\n", d.KubernetesVersion)
			writeGates(&b, d.Features)
			_, err = io.WriteString(out, termsafe.String(b.String()))
			return err
		},
	}
	addOutputFlag(cmd, &output, "text, json or yaml")
	cmd.Flags().StringVar(&controllerAddr, "controller", "", "ask the controller at this health-probe HOST:PORT for its module")
	return cmd
}

// printControllerModule prints the module a running controller has active, from its /module endpoint.
func printControllerModule(cmd *cobra.Command, addr string, format string) error {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(strings.TrimSuffix(addr, "/") + "/module")
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("asking the controller: %w", err))
	}
	defer resp.Body.Close()
	body, err := readlimit.Read(resp.Body, 1<<20, "the controller's /module answer", "")
	if err != nil || resp.StatusCode != http.StatusOK {
		return withCode(ExitUsage, fmt.Errorf("asking the controller: %s: %s", resp.Status, body))
	}
	out := cmd.OutOrStdout()
	if format != "text" {
		return writeJSONAs(out, format, func(w io.Writer) error { _, err := w.Write(body); return err })
	}
	var st module.SwapStatus
	if err := json.Unmarshal(body, &st); err != nil {
		return withCode(ExitUsage, fmt.Errorf("the controller's /module answer: %w", err))
	}
	a := st.Active
	var b strings.Builder // the controller's answer: a module's describe and refusal, through termsafe
	fmt.Fprintf(&b, "controller:  %s\n", addr)
	fmt.Fprintf(&b, "module:      %s %s (abi %d, %s)\n", a.Describe.Module, a.Describe.ModuleVersion, a.Describe.ABI, a.Digest)
	fmt.Fprintf(&b, "kubernetes:  %s (StatefulSet controller)\n", a.Describe.KubernetesVersion)
	fmt.Fprintf(&b, "source:      %s, active since %s\n", a.Source, a.ActiveSince.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "hot swaps:   %d accepted, %d refused\n", st.Swaps, st.Refusals)
	if r := st.LastRefusal; r != nil {
		fmt.Fprintf(&b, "last refused: %s from %s at %s (%s): %s\n", r.Digest, r.Source, r.At.UTC().Format(time.RFC3339), r.Reason, r.Detail)
	}
	writeGates(&b, a.Describe.Features)
	_, err = io.WriteString(out, termsafe.String(b.String()))
	return err
}

// writeGates writes a describe's feature gates, one a line, by name.
func writeGates(b *strings.Builder, features map[string]bool) {
	gates := make([]string, 0, len(features))
	for g := range features {
		gates = append(gates, g)
	}
	sort.Strings(gates)
	for _, g := range gates {
		fmt.Fprintf(b, "  feature %s=%v\n", g, features[g])
	}
}

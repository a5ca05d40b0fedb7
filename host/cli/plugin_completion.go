package cli

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// CompletionName is the executable kubectl (1.26 and later) runs to complete a plugin's arguments: with
// the binary on PATH under this name too, `kubectl ordinal <TAB>` completes commands, flags, output
// formats and the live cluster's StatefulSets.
const CompletionName = "kubectl_complete-ordinal"

// IsPluginCompletion reports whether the binary was invoked as the plugin's completion helper.
func IsPluginCompletion(argv0 string) bool {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == CompletionName
}

// PluginCompleteMain answers kubectl's completion request for `kubectl ordinal ARGS`: cobra's
// __complete protocol, which kubectl reads.
func PluginCompleteMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return PluginMain(append([]string{cobra.ShellCompRequestCmd}, args...), stdin, stdout, stderr)
}

// completeSets lists "statefulset/NAME" for the namespace's apps/v1 sets and "osts/NAME" for its
// ordinal.dev ones (none when the CRD is not served), as parseSetArg reads them.
func (o *pluginOptions) completeSets(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, ns, err := o.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx := cmdContext(cmd)
	var out []string
	for _, k := range []struct {
		t      snapshot.Target
		prefix string
	}{{snapshot.StatefulSetTarget, "statefulset/"}, {snapshot.CRDTarget, "osts/"}} {
		names, err := snapshot.SetNames(ctx, c, k.t, ns)
		if err != nil {
			continue
		}
		for _, name := range names {
			if n := k.prefix + name; strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func completeOutput(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"text", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp
}

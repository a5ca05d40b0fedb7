// Command ordinal runs the StatefulSet reconcile module: see `ordinal --help`. Invoked as kubectl-ordinal
// (a copy or a symlink on PATH) it is the kubectl plugin: `kubectl ordinal --help`; as kubectl_complete-ordinal,
// the plugin's shell completion.
package main

import (
	"os"

	"github.com/ordinal-dev/ordinal/host/cli"
)

func main() {
	if cli.IsPluginCompletion(os.Args[0]) {
		os.Exit(cli.PluginCompleteMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if cli.IsPlugin(os.Args[0]) {
		os.Exit(cli.PluginMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

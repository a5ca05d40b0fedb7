// kubectl v1.37 built from the Go module proxy (k8s.io/kubectl), as k8s.io/kubernetes/cmd/kubectl does, for
// Ordinal's end-to-end tests of `ordinal webhook` and the kubectl plugin (scripts/kubectl-build.sh).
package main

import (
	_ "k8s.io/client-go/plugin/pkg/client/auth" // client auth plugins, as upstream's main
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}

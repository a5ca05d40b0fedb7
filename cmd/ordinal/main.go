// Command ordinal runs the StatefulSet reconcile module: see `ordinal --help`.
package main

import (
	"os"

	"github.com/ordinal-dev/ordinal/host/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// setChoice is the StatefulSet a command is pointed at, kubectl's way: -n/--namespace, and a
// statefulset/NAME argument where the command takes one. It picks the set of a kubectl List that holds
// several (`kubectl get statefulsets,pods,controllerrevisions,pvc -A -o yaml`), and a snapshot's or a
// manifest's set must be the one named.
type setChoice struct{ namespace, name string }

func (c *setChoice) bindNamespace(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&c.namespace, "namespace", "n", "",
		"the StatefulSet's namespace: picks the set of a List that holds several; a snapshot's or manifest's set must be in it")
}

// setArg reads an optional statefulset/NAME argument.
func (c *setChoice) setArg(args []string) error {
	if len(args) == 0 {
		return nil
	}
	_, name, err := parseSetArg(args[0])
	if err != nil {
		return withCode(ExitUsage, err)
	}
	c.name = name
	return nil
}

func (c setChoice) empty() bool { return c.namespace == "" && c.name == "" }

func (c setChoice) matches(namespace, name string) bool {
	return (c.namespace == "" || c.namespace == namespace) && (c.name == "" || c.name == name)
}

func (c setChoice) String() string {
	var parts []string
	if c.name != "" {
		parts = append(parts, "statefulset/"+c.name)
	}
	if c.namespace != "" {
		parts = append(parts, "in namespace "+c.namespace)
	}
	return strings.Join(parts, " ")
}

// checkSnapshot refuses a snapshot whose set is not the one chosen. Only the set's metadata is read.
func (c setChoice) checkSnapshot(snapshot []byte) error {
	if c.empty() {
		return nil
	}
	var s struct {
		Metadata struct{ Namespace, Name string } `json:"metadata"`
	}
	if !decodeSnapshotSet(snapshot, &s) {
		return nil // not JSON: the module says what is wrong
	}
	if !c.matches(s.Metadata.Namespace, s.Metadata.Name) {
		return fmt.Errorf("the snapshot's StatefulSet is %s/%s, not %s", s.Metadata.Namespace, s.Metadata.Name, c)
	}
	return nil
}

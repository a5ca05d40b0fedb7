package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// setChoice is the StatefulSet a command is pointed at, kubectl's way: -n/--namespace, and a
// statefulset/NAME argument where the command takes one. It picks the set of a kubectl List that holds
// several (`kubectl get statefulsets,pods,controllerrevisions,pvc -A -o yaml`), and a snapshot's or a
// manifest's set must be the one named.
type setChoice struct {
	namespace, name string
	// kind, when the argument spelled one (statefulset/web, osts/web): a set of the other kind is not it.
	kind *snapshot.Target
}

func (c *setChoice) bindNamespace(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&c.namespace, "namespace", "n", "",
		"namespace of the set to pick from a List")
}

// setArg reads an optional statefulset/NAME argument.
func (c *setChoice) setArg(args []string) error {
	if len(args) == 0 {
		return nil
	}
	t, name, err := parseSetArg(args[0])
	if err != nil {
		return withCode(ExitUsage, err)
	}
	c.name = name
	if strings.Contains(args[0], "/") {
		c.kind = &t
	}
	return nil
}

func (c setChoice) empty() bool { return c.namespace == "" && c.name == "" }

// matches reports whether a set (its apiVersion as the document has it; "" is apps/v1) is the one chosen.
func (c setChoice) matches(apiVersion, namespace, name string) bool {
	if c.kind != nil && setTarget(apiVersion) != *c.kind {
		return false
	}
	return (c.namespace == "" || c.namespace == namespace) && (c.name == "" || c.name == name)
}

// setTarget is the kind a document's StatefulSet apiVersion names (none or an apps/* version: apps/v1).
func setTarget(apiVersion string) snapshot.Target {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group = "" // no group/version
	}
	return snapshot.TargetOfGroup(group)
}

func (c setChoice) String() string {
	var parts []string
	switch {
	case c.name != "" && c.kind != nil && c.kind.Custom:
		parts = append(parts, "statefulsets."+c.kind.GroupVersion.Group+"/"+c.name)
	case c.name != "":
		parts = append(parts, "statefulset/"+c.name)
	}
	if c.namespace != "" {
		parts = append(parts, "in namespace "+c.namespace)
	}
	return strings.Join(parts, " ")
}

// checkSnapshot refuses a snapshot whose set is not the one chosen. Only the set's metadata is read.
func (c setChoice) checkSnapshot(snapshot snapshotFile) error {
	if c.empty() || !snapshot.object {
		return nil // not JSON: the module says what is wrong
	}
	apiVersion, namespace, name := snapshot.setMeta()
	if name == "" { // "/" would read as a set of no name: the file is no snapshot of any set
		return fmt.Errorf("it names no StatefulSet (a snapshot has a \"statefulSet\" with a metadata.name), so it is no snapshot of %s", c)
	}
	if !c.matches(apiVersion, namespace, name) {
		return fmt.Errorf("the snapshot's StatefulSet is %s/%s, not %s", namespace, name, c)
	}
	return nil
}

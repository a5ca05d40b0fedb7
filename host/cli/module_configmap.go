package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/policy"
)

// configMapModules is --module-configmap for the commands that show what the controller will do (kubectl
// ordinal preview|timeline|status, ordinal webhook): the modules a set may name (ordinal.dev/module: NAME)
// that the controller's module ConfigMap supplies, its keys NAME.wasm beside the active module's, each
// through the controller's own gate (newModuleGate) before it runs. Without it those commands know the
// embedded modules only, and a set naming a supplied one cannot be previewed.
type configMapModules struct {
	ref, key string
}

func (c *configMapModules) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&c.ref, "module-configmap", "", "the controller's module ConfigMap, NAMESPACE/NAME")
	f.StringVar(&c.key, "module-configmap-key", "ordinal.wasm", "the active module's key there")
	appendHelp(cmd, "--module-configmap NAMESPACE/NAME is the controller's module ConfigMap: a set that names a module "+
		"(ordinal.dev/module: NAME) runs the one under its key NAME.wasm, after the controller's conformance gate; "+
		"--module-configmap-key is the active module's key there, not a module a set names.")
}

// gate parses the flag and builds the controller's gate for the modules it supplies.
func (c *configMapModules) gate(mopts *moduleOptions, features map[string]bool) (ns, name string, gate *module.Swapper, err error) {
	ns, name, ok := strings.Cut(c.ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", nil, withCode(ExitUsage, fmt.Errorf("--module-configmap must be NAMESPACE/NAME, not %q", c.ref))
	}
	gate, err = newModuleGate(mopts, &module.Ref{}, false, features)
	return ns, name, gate, err
}

// supply gives reg the ConfigMap's modules as they are now (a command that runs once).
func (c *configMapModules) supply(ctx context.Context, mopts *moduleOptions, reg *module.Registry, pols *policy.Registry, client kubernetes.Interface, features map[string]bool) error {
	if c.ref == "" {
		return nil
	}
	ns, name, gate, err := c.gate(mopts, features)
	if err != nil {
		return err
	}
	cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("--module-configmap %s: %w", c.ref, err))
	}
	reg.Supply(gate.CheckOnly, module.SuppliedModules(cm, c.key))
	if pols != nil {
		pols.Supply(module.SuppliedPolicies(cm))
	}
	return nil
}

// watch keeps reg supplied with the ConfigMap's modules for the life of ctx (the webhook).
func (c *configMapModules) watch(ctx context.Context, mopts *moduleOptions, reg *module.Registry, pols *policy.Registry, client kubernetes.Interface, features map[string]bool) error {
	if c.ref == "" {
		return nil
	}
	ns, name, gate, err := c.gate(mopts, features)
	if err != nil {
		return err
	}
	go module.WatchModuleConfigMap(ctx, nil, reg, pols, gate.CheckOnly, client, ns, name, c.key)
	return nil
}

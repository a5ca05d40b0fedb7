package cli

import (
	"context"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/host/policy"
)

// policyContextFlags are a plugin command's flags for what a set's policies read: --signals-configmap.
type policyContextFlags struct{ ref string }

func (f *policyContextFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.ref, "signals-configmap", "", "ConfigMap NAMESPACE/NAME of policy signals")
	appendHelp(cmd, "--signals-configmap NAMESPACE/NAME is the ConfigMap of signals the controller gives the sets' policies "+
		"(its --signals-configmap), read once: the policies see them as in a sync.")
}

// fetch resolves the policies set names and reads their context from the cluster
// (policy.ReadLiveContext, as the webhook's previews read it; nothing when the set names none,
// nothing live without a client).
func (f *policyContextFlags) fetch(ctx context.Context, c kubernetes.Interface, set *appsv1.StatefulSet, pods []*corev1.Pod,
	get func(context.Context, string) (policy.Module, error)) (policy.LiveContext, error) {
	pctx, err := policy.ReadLiveContext(ctx, c, set, pods, get, f.ref)
	if err != nil {
		return pctx, withCode(ExitUsage, err)
	}
	return pctx, nil
}

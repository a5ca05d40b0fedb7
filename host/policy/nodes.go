package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/abi"
)

// Nodes are the nodes pods run on, each as {"metadata":{"name","labels"}} (abi.PolicyContext.Nodes), listed
// from the API server for previews of a live set (the controller reads its informer's: NodesOf); an error
// fails the caller rather than let such a policy decide without them.
func Nodes(ctx context.Context, client kubernetes.Interface, pods []*corev1.Pod) ([]json.RawMessage, error) {
	if !onNodes(pods) {
		return nil, nil
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the nodes a policy of the set reads: %w", err)
	}
	nodes := make([]*corev1.Node, len(list.Items))
	for i := range list.Items {
		nodes[i] = &list.Items[i]
	}
	return NodesOf(nodes, pods)
}

func onNodes(pods []*corev1.Pod) bool {
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			return true
		}
	}
	return false
}

// NodesOf are those of nodes that pods run on, each as {"metadata":{"name","labels"}}, in the order of
// their JSON.
func NodesOf(nodes []*corev1.Node, pods []*corev1.Pod) ([]json.RawMessage, error) {
	want := map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			want[p.Spec.NodeName] = true
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	var out []json.RawMessage
	for _, n := range nodes {
		if want[n.Name] {
			b, err := NodeJSON(n.Name, n.Labels)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i]) < string(out[j]) })
	return out, nil
}

// NodeJSON is a node as policies are given it: its name and labels.
func NodeJSON(name string, labels map[string]string) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{"name": name, "labels": labels}})
}

// Live reads from the API server what the policies ask of a live set beyond its snapshot: the budgets
// (abi.ContextPodDisruptionBudgets) and the nodes (abi.ContextNodes) its pods run on, each only when one of
// the policies asks for it. The controller's syncs and `kubectl ordinal status` read them so.
func Live(ctx context.Context, client kubernetes.Interface, ns string, pods []*corev1.Pod, policies []Module) (budgets, nodes []json.RawMessage, err error) {
	if Wants(policies, abi.ContextPodDisruptionBudgets) {
		if budgets, err = Budgets(ctx, client, ns, pods); err != nil {
			return nil, nil, err
		}
	}
	if Wants(policies, abi.ContextNodes) {
		if nodes, err = Nodes(ctx, client, pods); err != nil {
			return nil, nil, err
		}
	}
	return budgets, nodes, nil
}

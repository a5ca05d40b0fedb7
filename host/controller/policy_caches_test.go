package controller

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
)

// asking is a policy that asks for the context what names.
type asking string

func (a asking) Name() string        { return "asking" }
func (a asking) Wants(c string) bool { return c == string(a) }
func (asking) Evaluate(context.Context, []byte) ([]byte, error) {
	return []byte(`{"abi":1,"holds":[]}`), nil
}

// A sync's policies read the budgets of the set's namespace that select its pods and the nodes its pods run
// on from caches started when a sync first asks (nothing is watched before), each listed once, not per
// sync; a budget's change syncs again the sets of its namespace, a node's new labels every set.
func TestPolicyCachesServeTheContext(t *testing.T) {
	ctx := context.Background()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	client := fake.NewClientset(
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "prod"}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "prod"},
			Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "dev"}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"topology.kubernetes.io/zone": "a"}},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{}, Images: []corev1.ContainerImage{{Names: []string{"big"}}}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}},
	)
	var mu sync.Mutex
	changed := map[string]int{}
	pc := newPolicyCaches(client, "", func(ns string) { mu.Lock(); changed[ns]++; mu.Unlock() })
	defer pc.Stop()
	pods := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "prod", Labels: map[string]string{"app": "db"}}, Spec: corev1.PodSpec{NodeName: "n1"}}}

	if budgets, nodes, err := pc.context(ctx, "prod", pods, []policy.Module{asking("none")}); err != nil || budgets != nil || nodes != nil || len(client.Actions()) != 0 {
		t.Fatalf("policies asking for neither: %s %s %v, %d API calls", budgets, nodes, err, len(client.Actions()))
	}
	all := []policy.Module{asking(abi.ContextPodDisruptionBudgets), asking(abi.ContextNodes)}
	budgets, nodes, err := pc.context(ctx, "prod", pods, all)
	if err != nil || len(budgets) != 1 || !strings.Contains(string(budgets[0]), `"namespace":"prod"`) || !strings.Contains(string(budgets[0]), `"kind":"PodDisruptionBudget"`) {
		t.Fatalf("budgets %s, %v: want prod's db alone", budgets, err)
	}
	if len(nodes) != 1 || string(nodes[0]) != `{"metadata":{"labels":{"topology.kubernetes.io/zone":"a"},"name":"n1"}}` {
		t.Fatalf("nodes %s: want n1's name and labels", nodes)
	}
	calls := len(client.Actions()) // the informers' list and watch
	for range 3 {
		if _, _, err := pc.context(ctx, "prod", pods, all); err != nil {
			t.Fatal(err)
		}
	}
	if len(client.Actions()) != calls {
		t.Fatalf("%d more API calls for three more syncs: want none (the caches)", len(client.Actions())-calls)
	}

	pdb, _ := client.PolicyV1().PodDisruptionBudgets("dev").Get(ctx, "db", metav1.GetOptions{})
	pdb.Status.DisruptionsAllowed = 1
	if _, err := client.PolicyV1().PodDisruptionBudgets("dev").UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	node, _ := client.CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{})
	node.Labels = map[string]string{"topology.kubernetes.io/zone": "b"}
	if _, err := client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // the fake's watch delivers asynchronously; no timing is asserted
	for {
		mu.Lock()
		dev, anyNs := changed["dev"], changed[""]
		mu.Unlock()
		if dev > 0 && anyNs > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("changes seen: %v: want dev's budget and a node's labels", changed)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A budget's change syncs its namespace's policy sets only when it can let a held delete go.
func TestAllowsMore(t *testing.T) {
	base := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, DisruptionsAllowed: 1, CurrentHealthy: 4}}
	for _, c := range []struct {
		name string
		edit func(*policyv1.PodDisruptionBudget)
		want bool
	}{
		{"a recount allowing the same", func(b *policyv1.PodDisruptionBudget) { b.Status.CurrentHealthy = 5 }, false},
		{"a spend recorded", func(b *policyv1.PodDisruptionBudget) { b.Status.DisruptionsAllowed = 0 }, false},
		{"more allowed", func(b *policyv1.PodDisruptionBudget) { b.Status.DisruptionsAllowed = 2 }, true},
		{"its spec changed", func(b *policyv1.PodDisruptionBudget) { b.Generation = 3 }, true},
		{"its status caught up", func(b *policyv1.PodDisruptionBudget) { b.Status.ObservedGeneration = 3 }, true},
	} {
		cur := base.DeepCopy()
		c.edit(cur)
		if got := allowsMore(base, cur); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

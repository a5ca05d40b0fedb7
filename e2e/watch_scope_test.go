//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Issue 34 item 2: a controller told to watch one namespace and a label selector (--watch-namespace,
// --label-selector: the aliases of --namespace and --selector) runs with nothing but a Role in that
// namespace — the ClusterRole's rules of examples/deploy/rbac.yaml without nodes, as the chart renders for
// controller.watchNamespace — so an informer listing beyond the namespace would be refused (a 403 in its
// metrics). It rolls the labelled set of its namespace, and leaves alone a labelled set of another
// namespace and an unlabelled set of its own, both created before it started (so its first list had them
// if anything did).
func TestWatchOnlySomeSets(t *testing.T) {
	requireController(t)
	ctx := testContext(t)
	ns, other := newNamespace(t, ctx), newNamespace(t, ctx)
	saConfig := namespacedServiceAccount(t, ns)

	tier := func(s *appsv1.StatefulSet) {
		s.Labels = map[string]string{"tier": "db"}
		s.Spec.Template.Labels["tier"] = "db"
	}
	createSet(t, ctx, other, newSet("outside", 2, tier))
	createSet(t, ctx, ns, newSet("unlabelled", 2))

	c := startController(t, ns, ctrlOpts{extraArgs: []string{"--kubeconfig", saConfig,
		"--watch-namespace", ns, "--label-selector", "tier=db"}})
	c.waitReady(ctx)
	createSet(t, ctx, ns, newSet("inside", 3, tier))
	waitRolledOut(t, ctx, ns, "inside", 3)
	patchSet(t, ctx, ns, "inside", setVersion("v2"))
	rolled := waitRolledOut(t, ctx, ns, "inside", 3)
	if rolled.Status.UpdateRevision == "" || rolled.Status.UpdatedReplicas != 3 {
		t.Errorf("the selected set did not roll: %s", statusString(rolled))
	}

	for _, left := range []struct{ ns, name string }{{other, "outside"}, {ns, "unlabelled"}} {
		s := getSet(t, ctx, left.ns, left.name)
		pods, err := cfg.kc.CoreV1().Pods(left.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + left.name})
		if err != nil {
			t.Fatal(err)
		}
		if s.Status.ObservedGeneration != 0 || len(pods.Items) != 0 {
			t.Errorf("set %s/%s outside the selection was touched: %s, %d pods", left.ns, left.name, statusString(s), len(pods.Items))
		}
		if lines := c.logLines(left.name); len(lines) != 0 {
			t.Errorf("the controller's log names %s: %q", left.name, lines)
		}
	}
	if m := forbiddenRE.FindString(c.metricsText(t)); m != "" {
		t.Errorf("a request was forbidden under the namespace's Role: %s", m)
	}
}

// namespacedServiceAccount creates a ServiceAccount in ns bound by a Role there to the rules of
// examples/deploy/rbac.yaml's ClusterRole but nodes (cluster-scoped), and returns a kubeconfig for it.
func namespacedServiceAccount(t *testing.T, ns string) string {
	t.Helper()
	ctx := testContext(t)
	b, err := os.ReadFile(filepath.Join(cfg.root, "examples", "deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules []rbacv1.PolicyRule
	for _, doc := range strings.Split(string(b), "\n---") {
		var cr rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &cr); err != nil {
			t.Fatalf("examples/deploy/rbac.yaml: %v", err)
		}
		if cr.Kind != "ClusterRole" || cr.Name != "ordinal-controller" {
			continue
		}
		for _, r := range cr.Rules {
			if !slices.Contains(r.Resources, "nodes") {
				rules = append(rules, r)
			}
		}
	}
	if len(rules) == 0 {
		t.Fatal("examples/deploy/rbac.yaml has no ClusterRole ordinal-controller")
	}
	const name = "scoped-controller"
	if _, err := cfg.kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.kc.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.kc.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Role is in force once the API server's authorizer has it: wait for a list to be allowed.
	waitFor(t, ctx, "the Role to allow the ServiceAccount", time.Minute, func() bool {
		r, err := cfg.kc.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "system:serviceaccount:" + ns + ":" + name,
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Resource: "pods"}}}, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed
	})
	return tokenKubeconfig(t, ctx, ns, name)
}

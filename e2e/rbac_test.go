//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

var forbiddenRE = regexp.MustCompile(`rest_client_requests_total\{code="403"[^}]*\} [1-9]`)

// Issue 13 item 6 (the controller's half): the controller runs with the identity of the ServiceAccount
// examples/deploy creates, under exactly its RBAC (applied from the repository's files), with a token from
// the TokenRequest API: leader election in ordinal-system, a rollout, a hot swap from the module ConfigMap
// the deployment names, claims kept and released on scale-down, for an apps/v1 and an ordinal.dev/v1 set.
// Any permission the code needs and the RBAC lacks shows as a 403 or a "forbidden" in the log.
func TestControllerRunsUnderTheDeployedRBAC(t *testing.T) {
	requireHookEnv(t)
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	saConfig := serviceAccountKubeconfig(t, ctx, "examples/deploy", "ordinal-controller")
	// The lease is the one the Role names; this run's identity is its own.
	c := startController(t, ns, ctrlOpts{extraArgs: []string{"--kubeconfig", saConfig, "--leader-elect=true",
		"--leader-election-namespace", "ordinal-system", "--leader-election-id", "ordinal-controller", "--identity", "rbac-" + ns,
		"--module-configmap", "ordinal-system/ordinal-module"}})
	c.waitReady(ctx)
	claims := withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType)
	createSet(t, ctx, ns, newSet("rbac", 3, claims))
	// Both kinds (the harness passes --apps-v1). The cluster enforces OwnerReferencesPermissionEnforcement:
	// each pod's blockOwnerDeletion owner reference needs update on its kind's statefulsets/finalizers.
	dyn, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		t.Fatal(err)
	}
	createOrdinalSet(t, ctx, dyn, ns, newSet("orbac", 2, claims))
	// A set whose policies read budgets and nodes and spend disruptions: the caches' list and watch, the
	// spend's status update (and its re-read) under the deployed RBAC.
	one := intstr.FromInt32(1)
	if _, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "prbac"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "prbac"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	withPolicies := newSet("prbac", 2)
	withPolicies.Annotations = map[string]string{"ordinal.dev/policies": "pdb,zones"}
	createSet(t, ctx, ns, withPolicies)
	waitRolledOut(t, ctx, ns, "rbac", 3)
	waitOrdinalRolledOut(t, ctx, dyn, ns, "orbac", 2)
	waitRolledOut(t, ctx, ns, "prbac", 2)
	waitFor(t, ctx, "the budget allows a disruption", time.Minute, func() bool {
		p, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "prbac", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1
	})
	patchSet(t, ctx, ns, "prbac", setVersion("v2"))
	rolled := waitRolledOut(t, ctx, ns, "prbac", 2)
	if rolled.Status.UpdatedReplicas != 2 {
		t.Errorf("the policy set did not roll out: %s", statusString(rolled))
	}

	// A hot swap from the ConfigMap the deployment names, read under the Role that names it (a TinyGo
	// variant: a ConfigMap holds at most 1 MiB).
	equivalent := readModule(t, filepath.Join(modulesDir(), "ordinal-maxunavailable-off.wasm"))
	cms := cfg.kc.CoreV1().ConfigMaps("ordinal-system")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ordinal-module"},
		BinaryData: map[string][]byte{"ordinal.wasm": equivalent}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(context.Background(), "ordinal-module", metav1.DeleteOptions{}) })
	c.waitModule(t, "the ConfigMap's module active", 2*time.Minute, func(st moduleStatus) bool { return st.Active.Digest == digestOf(equivalent) })
	patchSet(t, ctx, ns, "rbac", setVersion("v2"))
	waitRolledOut(t, ctx, ns, "rbac", 3)
	patchSet(t, ctx, ns, "rbac", `{"spec":{"replicas":1}}`)
	patchOrdinalSet(t, ctx, dyn, ns, "orbac", setVersion("v2"))
	waitRolledOut(t, ctx, ns, "rbac", 1)
	waitOrdinalRolledOut(t, ctx, dyn, ns, "orbac", 2)
	patchOrdinalSet(t, ctx, dyn, ns, "orbac", `{"spec":{"replicas":1}}`)
	waitOrdinalRolledOut(t, ctx, dyn, ns, "orbac", 1)

	if m := forbiddenRE.FindString(c.metricsText(t)); m != "" {
		t.Errorf("requests refused under the deployed RBAC: %s\nlog:\n%s", m, c.logTail(30))
	}
	if l := c.logLines("forbidden"); len(l) > 0 {
		t.Errorf("forbidden in the controller's log under the deployed RBAC:\n%s", strings.Join(l, "\n"))
	}
}

// serviceAccountKubeconfig applies a deploy directory's ServiceAccount and RBAC (and examples/deploy's
// namespace) from the repository's files, and writes a kubeconfig that authenticates as that ServiceAccount
// with a token from the TokenRequest API: a component run with it has exactly the deployed permissions.
func serviceAccountKubeconfig(t *testing.T, ctx context.Context, dir, serviceAccount string) string {
	t.Helper()
	for _, f := range []string{filepath.Join("examples", "deploy", "namespace.yaml"), filepath.Join(dir, "serviceaccount.yaml"), filepath.Join(dir, "rbac.yaml")} {
		if out, errOut, code := kubectl(t, ctx, "", "apply", "-f", filepath.Join(cfg.root, f)); code != 0 {
			t.Fatalf("kubectl apply -f %s: exit %d\n%s%s", f, code, out, errOut)
		}
	}
	return tokenKubeconfig(t, ctx, "ordinal-system", serviceAccount)
}

// tokenKubeconfig is a kubeconfig for the cluster with a TokenRequest token of the ServiceAccount ns/name.
func tokenKubeconfig(t *testing.T, ctx context.Context, ns, serviceAccount string) string {
	t.Helper()
	exp := int64(3600)
	tok, err := cfg.kc.CoreV1().ServiceAccounts(ns).CreateToken(ctx, serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := clientcmd.LoadFromFile(cfg.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	sa := clientcmdapi.NewConfig()
	sa.Clusters["e2e"] = admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	sa.AuthInfos[serviceAccount] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	sa.Contexts["sa"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: serviceAccount}
	sa.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), serviceAccount+".kubeconfig")
	if err := clientcmd.WriteToFile(*sa, path); err != nil {
		t.Fatal(err)
	}
	return path
}

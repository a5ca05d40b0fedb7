// Package helm_test checks the Helm chart in ordinal/: `helm lint` and `helm template` through Helm's Go
// packages (no helm binary), and that it renders the RBAC, the controller's args and the image tag of the
// kustomize manifests in ../deploy.
package helm_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "ordinal"
	namespace = "ordinal-system" // the namespace of ../deploy
	deployDir = "../deploy"
)

// object is one rendered document: its bytes and the fields every object has.
type object struct {
	source     string
	raw        []byte
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// render is `helm template --namespace ordinal-system` with these values (set over values.yaml).
func render(t *testing.T, c *chart.Chart, vals map[string]any) []object {
	t.Helper()
	rv, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{
		Name: "ordinal", Namespace: namespace, Revision: 1, IsInstall: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(c, rv)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var objs []object
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue // NOTES.txt, _helpers.tpl
		}
		for _, doc := range splitYAML(t, name, []byte(files[name])) {
			var o object
			if err := yaml.Unmarshal(doc, &o); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
				t.Fatalf("%s: a document without apiVersion, kind or metadata.name:\n%s", name, doc)
			}
			o.source, o.raw = name, doc
			objs = append(objs, o)
		}
	}
	return objs
}

// splitYAML returns the non-empty documents of a YAML stream.
func splitYAML(t *testing.T, name string, b []byte) [][]byte {
	t.Helper()
	var docs [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, doc)
		}
		if len(m) > 0 {
			docs = append(docs, doc)
		}
	}
}

func readObjects(t *testing.T, path string) []object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []object
	for _, doc := range splitYAML(t, path, b) {
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		o.source, o.raw = path, doc
		objs = append(objs, o)
	}
	return objs
}

func find(objs []object, kind, name string) []object {
	var found []object
	for _, o := range objs {
		if o.Kind == kind && (name == "" || o.Metadata.Name == name) {
			found = append(found, o)
		}
	}
	return found
}

func one(t *testing.T, objs []object, kind, name string) object {
	t.Helper()
	found := find(objs, kind, name)
	if len(found) != 1 {
		t.Fatalf("%d %s %q rendered, want 1", len(found), kind, name)
	}
	return found[0]
}

func decode(t *testing.T, o object, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(o.raw, into); err != nil {
		t.Fatalf("%s %s (%s): %v", o.Kind, o.Metadata.Name, o.source, err)
	}
}

func webhookValues(mode string) map[string]any {
	return map[string]any{
		"webhook": map[string]any{"enabled": true, "certificates": map[string]any{"mode": mode}},
		"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}},
	}
}

func TestLint(t *testing.T) {
	for _, vals := range []map[string]any{nil, webhookValues("self-signed"), webhookValues("cert-manager")} {
		linter := lint.All(chartDir, vals, namespace, false)
		for _, m := range linter.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint: %s", m)
			} else {
				t.Logf("helm lint: %s", m)
			}
		}
	}
}

func TestRenderDefaults(t *testing.T) {
	objs := render(t, loadChart(t), nil)
	for _, want := range []struct{ kind, name string }{
		{"ServiceAccount", "ordinal-controller"},
		{"ClusterRole", "ordinal-controller"},
		{"ClusterRoleBinding", "ordinal-controller"},
		{"Role", "ordinal-controller-leader-election"},
		{"RoleBinding", "ordinal-controller-leader-election"},
		{"Role", "ordinal-controller-module-source"},
		{"RoleBinding", "ordinal-controller-module-source"},
		{"Deployment", "ordinal-controller"},
		{"Service", "ordinal-controller-metrics"},
		{"PodDisruptionBudget", "ordinal-controller"},
	} {
		one(t, objs, want.kind, want.name)
	}
	for _, kind := range []string{"ValidatingWebhookConfiguration", "ServiceMonitor", "Secret", "Certificate"} {
		if found := find(objs, kind, ""); len(found) > 0 {
			t.Errorf("defaults render a %s", kind)
		}
	}
	for _, o := range objs {
		cluster := strings.HasPrefix(o.Kind, "Cluster")
		if !cluster && o.Metadata.Namespace != namespace {
			t.Errorf("%s %s in namespace %q, want the release namespace %q", o.Kind, o.Metadata.Name, o.Metadata.Namespace, namespace)
		}
	}
}

func TestRenderWebhookSelfSigned(t *testing.T) {
	objs := render(t, loadChart(t), webhookValues("self-signed"))
	one(t, objs, "Deployment", "ordinal-webhook")
	one(t, objs, "Service", "ordinal-webhook")
	one(t, objs, "ServiceMonitor", "ordinal-controller")
	one(t, objs, "ServiceMonitor", "ordinal-webhook")
	one(t, objs, "PodDisruptionBudget", "ordinal-webhook")
	if n := len(find(objs, "Certificate", "")) + len(find(objs, "Issuer", "")); n > 0 {
		t.Errorf("self-signed mode renders %d cert-manager objects", n)
	}
	var secret struct {
		Type string            `json:"type"`
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(one(t, objs, "Secret", "ordinal-webhook-tls").raw, &secret); err != nil {
		t.Fatal(err)
	}
	if secret.Type != "kubernetes.io/tls" {
		t.Errorf("Secret type %q, want kubernetes.io/tls", secret.Type)
	}
	for _, k := range []string{"tls.crt", "tls.key", "ca.crt"} {
		if b, err := base64.StdEncoding.DecodeString(secret.Data[k]); err != nil || !bytes.Contains(b, []byte("-----BEGIN")) {
			t.Errorf("Secret %s is not base64 PEM: %v", k, err)
		}
	}
	vwc := webhookConfiguration(t, objs)
	if len(vwc.Webhooks) != 1 {
		t.Fatalf("%d webhooks, want 1", len(vwc.Webhooks))
	}
	if got := vwc.Webhooks[0].ClientConfig.CABundle; len(got) == 0 || got != secret.Data["ca.crt"] {
		t.Errorf("caBundle %.20q..., want the Secret's ca.crt", got)
	}
	if _, ok := vwc.Metadata.Annotations["cert-manager.io/inject-ca-from"]; ok {
		t.Error("self-signed mode has the cert-manager inject-ca-from annotation")
	}
}

func TestRenderWebhookCertManager(t *testing.T) {
	objs := render(t, loadChart(t), webhookValues("cert-manager"))
	one(t, objs, "Deployment", "ordinal-webhook")
	cert := one(t, objs, "Certificate", "ordinal-webhook")
	one(t, objs, "Issuer", "ordinal-webhook-selfsigned")
	if found := find(objs, "Secret", ""); len(found) > 0 {
		t.Errorf("cert-manager mode renders %d Secrets; cert-manager writes ordinal-webhook-tls", len(found))
	}
	var spec struct {
		Spec struct {
			SecretName string `json:"secretName"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(cert.raw, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Spec.SecretName != "ordinal-webhook-tls" {
		t.Errorf("Certificate secretName %q, want ordinal-webhook-tls (the Deployment's volume)", spec.Spec.SecretName)
	}
	vwc := webhookConfiguration(t, objs)
	if got, want := vwc.Metadata.Annotations["cert-manager.io/inject-ca-from"], namespace+"/ordinal-webhook"; got != want {
		t.Errorf("inject-ca-from %q, want %q", got, want)
	}
	if got := vwc.Webhooks[0].ClientConfig.CABundle; got != "" {
		t.Errorf("caBundle %q rendered; cert-manager injects it", got)
	}

	// An existing issuer: no Issuer of the chart's own.
	vals := webhookValues("cert-manager")
	vals["webhook"].(map[string]any)["certificates"].(map[string]any)["certManager"] = map[string]any{
		"issuerRef": map[string]any{"name": "corp-ca", "kind": "ClusterIssuer"},
	}
	objs = render(t, loadChart(t), vals)
	if found := find(objs, "Issuer", ""); len(found) > 0 {
		t.Error("an Issuer is rendered with issuerRef set")
	}
	if !bytes.Contains(one(t, objs, "Certificate", "ordinal-webhook").raw, []byte("corp-ca")) {
		t.Error("the Certificate does not name issuerRef corp-ca")
	}
}

type vwcDoc struct {
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Webhooks []struct {
		ClientConfig struct {
			CABundle string `json:"caBundle"`
		} `json:"clientConfig"`
	} `json:"webhooks"`
}

func webhookConfiguration(t *testing.T, objs []object) vwcDoc {
	t.Helper()
	var v vwcDoc
	if err := yaml.Unmarshal(one(t, objs, "ValidatingWebhookConfiguration", "ordinal-preview").raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// roleRules returns the rules of every ClusterRole and Role by "Kind/name", each rule as canonical JSON
// (lists sorted), the rules sorted: equal maps grant exactly the same.
func roleRules(t *testing.T, objs []object) map[string][]string {
	t.Helper()
	roles := map[string][]string{}
	for _, o := range objs {
		if o.Kind != "ClusterRole" && o.Kind != "Role" {
			continue
		}
		var role rbacv1.ClusterRole // a Role's rules read the same
		decode(t, o, &role)
		key := o.Kind + "/" + o.Metadata.Name
		if _, dup := roles[key]; dup {
			t.Fatalf("%s twice", key)
		}
		rules := []string{}
		for _, r := range role.Rules {
			for _, l := range [][]string{r.APIGroups, r.Resources, r.ResourceNames, r.Verbs, r.NonResourceURLs} {
				sort.Strings(l)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			rules = append(rules, string(b))
		}
		sort.Strings(rules)
		roles[key] = rules
	}
	return roles
}

func TestSameRBACAsKustomize(t *testing.T) {
	chartObjs := render(t, loadChart(t), webhookValues("self-signed"))
	chartRoles := roleRules(t, chartObjs)
	var deployed []object
	for _, f := range []string{"rbac.yaml", "webhook/rbac.yaml"} {
		deployed = append(deployed, readObjects(t, filepath.Join(deployDir, f))...)
	}
	kustomizeRoles := roleRules(t, deployed)
	if len(kustomizeRoles) == 0 {
		t.Fatal("no roles in the kustomize manifests")
	}
	for name, want := range kustomizeRoles {
		got, ok := chartRoles[name]
		if !ok {
			t.Errorf("%s: in the kustomize manifests, not in the chart", name)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the chart's rules differ from the kustomize manifests'\nchart:\n  %s\nkustomize:\n  %s",
				name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
	for name := range chartRoles {
		if _, ok := kustomizeRoles[name]; !ok {
			t.Errorf("%s: in the chart, not in the kustomize manifests", name)
		}
	}

	// The bindings give those roles to the same ServiceAccounts (in the release namespace).
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, o := range find(deployed, kind, "") {
			var want, got rbacv1.RoleBinding
			decode(t, o, &want)
			decode(t, one(t, chartObjs, kind, o.Metadata.Name), &got)
			if !reflect.DeepEqual(got.RoleRef, want.RoleRef) || !reflect.DeepEqual(got.Subjects, want.Subjects) {
				t.Errorf("%s %s: roleRef/subjects %+v %+v, want %+v %+v", kind, o.Metadata.Name, got.RoleRef, got.Subjects, want.RoleRef, want.Subjects)
			}
		}
	}
}

func container(t *testing.T, o object) (appsv1.Deployment, []string, string) {
	t.Helper()
	var d appsv1.Deployment
	decode(t, o, &d)
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%s %s: %d containers", o.source, o.Metadata.Name, n)
	}
	c := d.Spec.Template.Spec.Containers[0]
	return d, c.Args, c.Image
}

// kustomizeTag is newTag of the image in a kustomization.yaml.
func kustomizeTag(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct {
			Name   string `json:"name"`
			NewTag string `json:"newTag"`
		} `json:"images"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	for _, img := range k.Images {
		if img.Name == "ghcr.io/ordinal-dev/ordinal" && img.NewTag != "" {
			return img.NewTag
		}
	}
	t.Fatalf("%s: no newTag for ghcr.io/ordinal-dev/ordinal", path)
	return ""
}

func TestDeploymentsMatchKustomize(t *testing.T) {
	c := loadChart(t)
	tag := kustomizeTag(t, filepath.Join(deployDir, "kustomization.yaml"))
	if c.Metadata.AppVersion != tag {
		t.Errorf("Chart.yaml appVersion %q, kustomization.yaml newTag %q: keep them equal", c.Metadata.AppVersion, tag)
	}
	if wt := kustomizeTag(t, filepath.Join(deployDir, "webhook", "kustomization.yaml")); wt != tag {
		t.Errorf("webhook/kustomization.yaml newTag %q, ../kustomization.yaml %q", wt, tag)
	}
	objs := render(t, c, webhookValues("self-signed"))
	for _, d := range []struct{ name, file string }{
		{"ordinal-controller", "deployment.yaml"},
		{"ordinal-webhook", "webhook/deployment.yaml"},
	} {
		want, wantArgs, _ := container(t, one(t, readObjects(t, filepath.Join(deployDir, d.file)), "Deployment", d.name))
		got, gotArgs, image := container(t, one(t, objs, "Deployment", d.name))
		if !reflect.DeepEqual(gotArgs, wantArgs) {
			t.Errorf("%s args:\n  %s\nwant (%s):\n  %s", d.name, strings.Join(gotArgs, "\n  "), d.file, strings.Join(wantArgs, "\n  "))
		}
		if want := "ghcr.io/ordinal-dev/ordinal:" + tag; image != want {
			t.Errorf("%s image %q, want %q", d.name, image, want)
		}
		if *got.Spec.Replicas != *want.Spec.Replicas {
			t.Errorf("%s replicas %d, want %d", d.name, *got.Spec.Replicas, *want.Spec.Replicas)
		}
		if !reflect.DeepEqual(got.Spec.Selector, want.Spec.Selector) {
			t.Errorf("%s selector %v, want %v", d.name, got.Spec.Selector, want.Spec.Selector)
		}
		if g, w := got.Spec.Template.Spec.ServiceAccountName, want.Spec.Template.Spec.ServiceAccountName; g != w {
			t.Errorf("%s serviceAccountName %q, want %q", d.name, g, w)
		}
	}
}

func TestRejectsUnknownCertificateMode(t *testing.T) {
	c := loadChart(t)
	rv, err := chartutil.ToRenderValues(c, webhookValues("vault"), chartutil.ReleaseOptions{Name: "ordinal", Namespace: namespace}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Render(c, rv); err == nil || !strings.Contains(err.Error(), "self-signed or cert-manager") {
		t.Errorf("mode vault: %v, want the chart's error", err)
	}
}

// Without leader election and module source, neither their Roles nor their args.
func TestOptionalRoles(t *testing.T) {
	objs := render(t, loadChart(t), map[string]any{
		"controller":      map[string]any{"replicas": 1, "leaderElection": map[string]any{"enabled": false}},
		"moduleConfigMap": "",
	})
	if roles := find(objs, "Role", ""); len(roles) > 0 {
		t.Errorf("%d Roles rendered, want none", len(roles))
	}
	if pdbs := find(objs, "PodDisruptionBudget", ""); len(pdbs) > 0 {
		t.Error("a PodDisruptionBudget for one replica (it would block node drains)")
	}
	_, args, _ := container(t, one(t, objs, "Deployment", "ordinal-controller"))
	joined := strings.Join(args, " ")
	if !strings.Contains(joined, "--leader-elect=false") || strings.Contains(joined, "--leader-election-") || strings.Contains(joined, "--module-configmap") {
		t.Errorf("args %q", joined)
	}
}

// CRD mode: the chart ships the CRD statefulsets.ordinal.dev in crds/ (Helm installs it before the
// templates), the bytes of examples/deploy/crd.yaml (host/crd's test keeps both equal to the generated one).
func TestChartShipsCRD(t *testing.T) {
	c := loadChart(t)
	want, err := os.ReadFile(filepath.Join(deployDir, "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crds := c.CRDObjects()
	if len(crds) != 1 || crds[0].Name != "crds/statefulsets.ordinal.dev.yaml" {
		t.Fatalf("CRDs %v, want crds/statefulsets.ordinal.dev.yaml", crds)
	}
	if !bytes.Equal(crds[0].File.Data, want) {
		t.Error("crds/statefulsets.ordinal.dev.yaml differs from examples/deploy/crd.yaml: run 'make crd'")
	}
}

// controller.manageAppsV1 adds --apps-v1 (also apps/v1 StatefulSets) to the kustomize args; the default, as
// examples/deploy, is CRD mode alone (TestDeploymentsMatchKustomize).
func TestManageAppsV1(t *testing.T) {
	_, want, _ := container(t, one(t, readObjects(t, filepath.Join(deployDir, "deployment.yaml")), "Deployment", "ordinal-controller"))
	for _, manage := range []bool{false, true} {
		objs := render(t, loadChart(t), map[string]any{"controller": map[string]any{"manageAppsV1": manage}})
		_, args, _ := container(t, one(t, objs, "Deployment", "ordinal-controller"))
		var rest []string
		n := 0
		for _, a := range args {
			if a == "--apps-v1" {
				n++
			} else {
				rest = append(rest, a)
			}
		}
		if wantN := map[bool]int{false: 0, true: 1}[manage]; n != wantN {
			t.Errorf("manageAppsV1=%v: --apps-v1 %d times in %q, want %d", manage, n, args, wantN)
		}
		if !reflect.DeepEqual(rest, want) {
			t.Errorf("manageAppsV1=%v: args besides --apps-v1\n  %s\nwant (deployment.yaml)\n  %s", manage, strings.Join(rest, "\n  "), strings.Join(want, "\n  "))
		}
	}
}

// Deleting the CRD deletes every ordinal.dev set and, through owner references, their pods: neither
// `kubectl delete -k examples/deploy` nor `helm uninstall` may include it (Helm never deletes crds/).
func TestUninstallNeverDeletesTheCRD(t *testing.T) {
	for _, dir := range []string{deployDir, filepath.Join(deployDir, "webhook")} {
		b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var k struct {
			Resources []string `json:"resources"`
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatal(err)
		}
		if len(k.Resources) == 0 {
			t.Fatalf("%s/kustomization.yaml lists no resources", dir)
		}
		for _, r := range k.Resources {
			for _, o := range readObjects(t, filepath.Join(dir, r)) {
				if o.Kind == "CustomResourceDefinition" {
					t.Errorf("%s/kustomization.yaml includes the CRD (%s): kubectl delete -k would delete every ordinal.dev set", dir, r)
				}
			}
		}
	}
	templates, _ := filepath.Glob("ordinal/templates/*.yaml")
	if len(templates) == 0 {
		t.Fatal("no chart templates")
	}
	for _, f := range templates {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "kind: CustomResourceDefinition") {
			t.Errorf("%s: a CRD in templates/ is deleted by helm uninstall; it belongs in crds/", f)
		}
	}
}

// Issue 31: with the webhook on, its pods could not start until the user created the client-CA ConfigMap
// by hand. webhook.clientCA.caCert makes the chart create it (the pods mount it); without it the chart
// creates none and the deployment names the one the user provides.
func TestWebhookClientCAFromValues(t *testing.T) {
	const pem = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----"
	vals := webhookValues("self-signed")
	vals["webhook"].(map[string]any)["clientCA"] = map[string]any{"caCert": pem}
	objs := render(t, loadChart(t), vals)
	cm := one(t, objs, "ConfigMap", "ordinal-webhook-client-ca")
	var got struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(cm.raw, &got); err != nil || strings.TrimSpace(got.Data["ca.crt"]) != pem {
		t.Fatalf("ca.crt %q (%v)", got.Data["ca.crt"], err)
	}
	if d := one(t, objs, "Deployment", "ordinal-webhook"); !strings.Contains(string(d.raw), "name: ordinal-webhook-client-ca") {
		t.Errorf("the webhook does not mount the ConfigMap the chart made:\n%s", d.raw)
	}
	if found := find(render(t, loadChart(t), webhookValues("self-signed")), "ConfigMap", "ordinal-webhook-client-ca"); len(found) != 0 {
		t.Errorf("without caCert the chart made the client-CA ConfigMap (the user's would be overwritten)")
	}
}

// Issue 31: the kustomize base sets up the webhook's client CA too: kustomization.yaml's configMapGenerator
// makes the ConfigMap the Deployment mounts (same name as the chart's, in the Deployment's namespace, key
// ca.crt, the file --client-ca-file reads) from client-ca.crt, the file the user replaces. The shipped
// placeholder holds no certificate, so an unconfigured webhook refuses to start instead of trusting a CA
// nobody chose. (e2e TestWebhookKustomizeClientCA renders the base through kubectl's kustomize.)
func TestKustomizeWebhookClientCA(t *testing.T) {
	dir := filepath.Join(deployDir, "webhook")
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		ConfigMapGenerator []struct {
			Name, Namespace, Behavior string
			Files, Literals, Envs     []string
		} `json:"configMapGenerator"`
		GeneratorOptions *struct {
			DisableNameSuffixHash bool `json:"disableNameSuffixHash"`
		} `json:"generatorOptions"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValuesFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmName, err := vals.PathValue("webhook.clientCA.configMapName")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	decode(t, one(t, readObjects(t, filepath.Join(dir, "deployment.yaml")), "Deployment", "ordinal-webhook"), &d)
	var volume, mountPath string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cmName {
			volume = v.Name
		}
	}
	if volume == "" {
		t.Fatalf("deployment.yaml mounts no ConfigMap %s (the chart's webhook.clientCA.configMapName)", cmName)
	}
	c := d.Spec.Template.Spec.Containers[0]
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			mountPath = m.MountPath
		}
	}
	var caFile string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--client-ca-file="); ok {
			caFile = v
		}
	}
	if mountPath == "" || caFile == "" || filepath.Dir(caFile) != mountPath {
		t.Fatalf("--client-ca-file=%q is not in the ConfigMap's mount %q", caFile, mountPath)
	}
	key := filepath.Base(caFile)

	n := 0
	for _, g := range k.ConfigMapGenerator {
		if g.Name != cmName {
			continue
		}
		n++
		if g.Namespace != d.Namespace {
			t.Errorf("configMapGenerator %s: namespace %q, the Deployment's is %q", g.Name, g.Namespace, d.Namespace)
		}
		if g.Behavior != "" && g.Behavior != "create" {
			t.Errorf("configMapGenerator %s: behavior %q in the base", g.Name, g.Behavior)
		}
		if len(g.Literals) != 0 || len(g.Envs) != 0 || len(g.Files) != 1 {
			t.Fatalf("configMapGenerator %s: %+v, want one file", g.Name, g)
		}
		k, file, ok := strings.Cut(g.Files[0], "=")
		if !ok || k != key {
			t.Errorf("configMapGenerator %s: files %q, want the key %s (--client-ca-file=%s)", g.Name, g.Files, key, caFile)
		}
		placeholder, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("configMapGenerator %s: %v", g.Name, err)
		}
		if bytes.Contains(placeholder, []byte("-----BEGIN")) {
			t.Errorf("%s ships a certificate: the base must not trust a CA the user did not put there", file)
		}
		if !strings.Contains(string(placeholder), "Replace this file") {
			t.Errorf("%s does not say to replace it", file)
		}
	}
	if n != 1 {
		t.Errorf("examples/deploy/webhook/kustomization.yaml: %d configMapGenerator entries named %s, want 1 (kubectl apply -k sets the client CA up)", n, cmName)
	}
	// The hash suffix stays on: kustomize writes the hashed name into the volume, so a new CA rolls the pods.
	if k.GeneratorOptions != nil && k.GeneratorOptions.DisableNameSuffixHash {
		t.Errorf("generatorOptions.disableNameSuffixHash: a changed CA would not roll the webhook's pods")
	}
}

// controller.watchNamespace and controller.selector (issue 34): the two flags, and in one namespace the
// ClusterRole's rules as a Role there (bound there), but the nodes, cluster-scoped, in a ClusterRole alone.
func TestWatchNamespaceAndSelector(t *testing.T) {
	all := roleRules(t, render(t, loadChart(t), nil))["ClusterRole/ordinal-controller"]
	objs := render(t, loadChart(t), map[string]any{"controller": map[string]any{"watchNamespace": "prod", "selector": "tier=db"}})
	_, args, _ := container(t, one(t, objs, "Deployment", "ordinal-controller"))
	for _, want := range []string{"--namespace=prod", "--selector=tier=db"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	roles := roleRules(t, objs)
	if _, ok := roles["ClusterRole/ordinal-controller"]; ok {
		t.Error("one namespace watched, yet the ClusterRole ordinal-controller is rendered")
	}
	var wantRole, nodes []string
	for _, r := range all {
		if strings.Contains(r, `"nodes"`) {
			nodes = append(nodes, r)
		} else {
			wantRole = append(wantRole, r)
		}
	}
	if len(nodes) != 1 {
		t.Fatalf("the ClusterRole's rules name nodes %d times, want once: %q", len(nodes), all)
	}
	if got := roles["Role/ordinal-controller"]; !reflect.DeepEqual(got, wantRole) {
		t.Errorf("Role ordinal-controller's rules\n  %s\nwant the ClusterRole's but nodes\n  %s", strings.Join(got, "\n  "), strings.Join(wantRole, "\n  "))
	}
	if got := roles["ClusterRole/ordinal-controller-nodes"]; !reflect.DeepEqual(got, nodes) {
		t.Errorf("ClusterRole ordinal-controller-nodes: %q, want %q", got, nodes)
	}
	role, binding := one(t, objs, "Role", "ordinal-controller"), one(t, objs, "RoleBinding", "ordinal-controller")
	if role.Metadata.Namespace != "prod" || binding.Metadata.Namespace != "prod" {
		t.Errorf("Role in %q, RoleBinding in %q, want both in prod", role.Metadata.Namespace, binding.Metadata.Namespace)
	}
	var rb rbacv1.RoleBinding
	decode(t, binding, &rb)
	if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != "ordinal-controller" || len(rb.Subjects) != 1 || rb.Subjects[0].Namespace != "ordinal-system" {
		t.Errorf("RoleBinding: %+v", rb)
	}
	one(t, objs, "ClusterRoleBinding", "ordinal-controller-nodes")
}

// controller.shards above 1 renders the kustomize overlay ../deploy-sharded: the base's args plus --shards
// and --identity, the Role on every Lease of the release namespace, and a PodDisruptionBudget as the base's;
// without leader election it is refused.
func TestShards(t *testing.T) {
	c := loadChart(t)
	if roles := roleRules(t, render(t, c, nil)); roles["Role/ordinal-controller-shards"] != nil {
		t.Error("one shard (the default), yet the shards' Role is rendered")
	}
	objs := render(t, c, map[string]any{"controller": map[string]any{"replicas": 3, "shards": 16}})

	b, err := os.ReadFile(filepath.Join("..", "deploy-sharded", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Patches []struct {
			Patch string `json:"patch"`
		} `json:"patches"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil || len(k.Patches) != 1 {
		t.Fatalf("deploy-sharded/kustomization.yaml: %v, %d patches", err, len(k.Patches))
	}
	var ops []struct {
		Op, Path string
		Value    any
	}
	if err := yaml.Unmarshal([]byte(k.Patches[0].Patch), &ops); err != nil {
		t.Fatal(err)
	}
	want, wantArgs, _ := container(t, one(t, readObjects(t, filepath.Join(deployDir, "deployment.yaml")), "Deployment", "ordinal-controller"))
	wantReplicas := *want.Spec.Replicas
	for _, op := range ops {
		switch {
		case op.Op == "add" && op.Path == "/spec/template/spec/containers/0/args/-":
			wantArgs = append(wantArgs, op.Value.(string))
		case op.Op == "replace" && op.Path == "/spec/replicas":
			wantReplicas = int32(op.Value.(float64))
		default:
			t.Fatalf("deploy-sharded: unexpected patch %+v", op)
		}
	}
	got, args, _ := container(t, one(t, objs, "Deployment", "ordinal-controller"))
	if !reflect.DeepEqual(args, wantArgs) || *got.Spec.Replicas != wantReplicas {
		t.Errorf("replicas %d, args\n  %s\nwant (deploy-sharded) %d,\n  %s", *got.Spec.Replicas, strings.Join(args, "\n  "), wantReplicas, strings.Join(wantArgs, "\n  "))
	}
	gotRoles, wantRoles := roleRules(t, objs), roleRules(t, readObjects(t, filepath.Join("..", "deploy-sharded", "rbac.yaml")))
	if w := wantRoles["Role/ordinal-controller-shards"]; w == nil || !reflect.DeepEqual(gotRoles["Role/ordinal-controller-shards"], w) {
		t.Errorf("Role ordinal-controller-shards: %q, want (deploy-sharded/rbac.yaml) %q", gotRoles["Role/ordinal-controller-shards"], w)
	}
	one(t, objs, "RoleBinding", "ordinal-controller-shards")
	var gotPDB, wantPDB map[string]any
	decode(t, one(t, objs, "PodDisruptionBudget", "ordinal-controller"), &gotPDB)
	decode(t, one(t, readObjects(t, filepath.Join(deployDir, "poddisruptionbudget.yaml")), "PodDisruptionBudget", "ordinal-controller"), &wantPDB)
	if !reflect.DeepEqual(gotPDB["spec"], wantPDB["spec"]) {
		t.Errorf("PodDisruptionBudget spec %v, want (deploy/poddisruptionbudget.yaml) %v", gotPDB["spec"], wantPDB["spec"])
	}

	rv, err := chartutil.ToRenderValues(c, map[string]any{"controller": map[string]any{"shards": 4, "leaderElection": map[string]any{"enabled": false}}},
		chartutil.ReleaseOptions{Name: "ordinal", Namespace: namespace}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Render(c, rv); err == nil || !strings.Contains(err.Error(), "needs controller.leaderElection.enabled") {
		t.Errorf("shards without leader election: %v, want the chart's error", err)
	}
}

//go:build e2e

package e2e

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/host/webhook"
)

// TestWebhookKustomizeClientCA: examples/deploy/webhook sets up the webhook's client CA (issue 31). Rendered
// by kubectl's own kustomize with the e2e cluster's CA (the one that signed the client certificate
// kube-apiserver presents to webhooks) in client-ca.crt, the base makes the ConfigMap
// ordinal-webhook-client-ca-HASH in ordinal-system with that CA under ca.crt, the Deployment mounts that
// ConfigMap, and the API server accepts the whole render (--dry-run=server). Rendered as shipped, the
// ConfigMap holds no certificate and the webhook's loader refuses it.
func TestWebhookKustomizeClientCA(t *testing.T) {
	t.Parallel()
	requireHookEnv(t)
	ctx := testContext(t)
	src := filepath.Join(cfg.root, "examples", "deploy", "webhook")
	ca, err := os.ReadFile(filepath.Join(cfg.pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}

	render := func(clientCA []byte) (string, corev1.ConfigMap) {
		t.Helper()
		dir := t.TempDir()
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if e.Name() == "client-ca.crt" && clientCA != nil {
				b = clientCA
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, errOut, code := kubectl(t, ctx, "", "kustomize", dir)
		if code != 0 {
			t.Fatalf("kubectl kustomize examples/deploy/webhook: exit %d\n%s", code, errOut)
		}
		var cms []corev1.ConfigMap
		var dep *appsv1.Deployment
		for _, doc := range strings.Split(out, "\n---\n") {
			var meta struct{ Kind string }
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("kubectl kustomize: %v\n%s", err, doc)
			}
			switch meta.Kind {
			case "ConfigMap":
				var cm corev1.ConfigMap
				if err := yaml.Unmarshal([]byte(doc), &cm); err != nil {
					t.Fatal(err)
				}
				cms = append(cms, cm)
			case "Deployment":
				dep = &appsv1.Deployment{}
				if err := yaml.Unmarshal([]byte(doc), dep); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(cms) != 1 || !strings.HasPrefix(cms[0].Name, "ordinal-webhook-client-ca-") || cms[0].Namespace != "ordinal-system" {
			t.Fatalf("kubectl kustomize: ConfigMaps %+v, want one ordinal-system/ordinal-webhook-client-ca-HASH", cms)
		}
		if dep == nil {
			t.Fatal("kubectl kustomize: no Deployment")
		}
		mounted := false
		for _, v := range dep.Spec.Template.Spec.Volumes {
			mounted = mounted || (v.Name == "client-ca" && v.ConfigMap != nil && v.ConfigMap.Name == cms[0].Name)
		}
		if !mounted {
			t.Errorf("the Deployment's client-ca volume is not the generated ConfigMap %s: %+v", cms[0].Name, dep.Spec.Template.Spec.Volumes)
		}
		return out, cms[0]
	}

	out, cm := render(ca)
	if cm.Data["ca.crt"] != string(ca) {
		t.Errorf("ConfigMap %s ca.crt:\n%s\nwant the cluster's CA (client-ca.crt)", cm.Name, cm.Data["ca.crt"])
	}
	f := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(f, []byte(cm.Data["ca.crt"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.LoadClientCAs(f); err != nil {
		t.Errorf("the webhook would not load the generated CA: %v", err)
	}
	if b, _ := pem.Decode(ca); b == nil {
		t.Errorf("%s: no PEM", filepath.Join(cfg.pki, "ca.crt"))
	} else if c, err := x509.ParseCertificate(b.Bytes); err != nil || !c.IsCA {
		t.Errorf("%s is not a CA certificate (%v)", filepath.Join(cfg.pki, "ca.crt"), err)
	}
	if o, e, code := kubectl(t, ctx, "", "apply", "-f", filepath.Join(cfg.root, "examples", "deploy", "namespace.yaml")); code != 0 {
		t.Fatalf("kubectl apply namespace.yaml: exit %d\n%s%s", code, o, e)
	}
	applied, errOut, code := kubectl(t, ctx, out, "apply", "--dry-run=server", "-f", "-")
	if code != 0 {
		t.Fatalf("kubectl apply --dry-run=server (the rendered base): exit %d\n%s%s", code, applied, errOut)
	}
	if want := "configmap/" + cm.Name + " "; !strings.Contains(applied, want) {
		t.Errorf("kubectl apply --dry-run=server printed\n%s\nwithout %q", applied, want)
	}

	// As shipped: no certificate, so the webhook refuses to start instead of trusting an unchosen CA.
	_, shipped := render(nil)
	if shipped.Name == cm.Name {
		t.Errorf("the ConfigMap's name %s did not change with its content: a new CA would not roll the pods", cm.Name)
	}
	if err := os.WriteFile(f, []byte(shipped.Data["ca.crt"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.LoadClientCAs(f); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("the shipped placeholder: LoadClientCAs = %v, want a no PEM certificate error", err)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/crd"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRD applies the CRD statefulsets.ordinal.dev (host/crd's embedded manifest, the bytes of
// examples/deploy/crd.yaml) with server-side apply and waits until it is Established: the controller refuses
// to start without it. Idempotent: a cluster that has it already is left as the manifest says.
func installCRD(rc *rest.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal(crd.Manifest, &obj.Object); err != nil {
		return fmt.Errorf("host/crd manifest: %w", err)
	}
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	crds := dc.Resource(crdGVR)
	if _, err := crds.Apply(ctx, crd.Name, &obj, metav1.ApplyOptions{FieldManager: "ordinal-e2e", Force: true}); err != nil {
		return fmt.Errorf("apply CRD %s: %w", crd.Name, err)
	}
	for {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil && crdEstablished(got) {
			fmt.Printf("e2e: CRD %s established\n", crd.Name)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not Established (last error %v): %w", crd.Name, err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func crdEstablished(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// crdClient is a typed REST client for ordinal.dev/v1 through crd.AddToScheme: the kind decodes into
// apps/v1's Go types, as the controller reads it.
func crdClient(t *testing.T) *rest.RESTClient {
	t.Helper()
	s := runtime.NewScheme()
	if err := crd.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	rc := rest.CopyConfig(cfg.rest)
	rc.GroupVersion = &crd.GroupVersion
	rc.APIPath = "/apis"
	rc.NegotiatedSerializer = serializer.NewCodecFactory(s).WithoutConversion()
	c, err := rest.RESTClientFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const crdSetManifest = `apiVersion: ordinal.dev/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 2
  serviceName: web
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web, tier: front}
      annotations: {e2e.ordinal.dev/note: kept}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.27"}
      - {name: sidecar, image: "busybox:1.37"}
  volumeClaimTemplates:
  - metadata:
      name: data
      labels: {claim: data}
      annotations: {e2e.ordinal.dev/claim-note: kept}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`

// TestCRDStatefulSet: the CRD of examples/deploy/crd.yaml applies with client-side `kubectl apply` (its
// last-applied annotation fits), an ordinal.dev StatefulSet keeps its pod and claim templates' metadata (not
// pruned: generateEmbeddedObjectMeta), `kubectl get osts` prints the printer columns, `kubectl scale` and
// the scale subresource work (status.selector as the label selector), apps/v1's immutable fields are
// immutable (CEL), and a typed client through crd.AddToScheme reads it as an apps/v1 StatefulSet. No
// controller runs: nothing else writes the set.
func TestCRDStatefulSet(t *testing.T) {
	requireHookEnv(t) // the real kubectl
	t.Parallel()
	ctx := testContext(t)

	// The suite installed the CRD (installCRD); client-side apply over it stores the last-applied annotation.
	out, _, code := kubectl(t, ctx, "", "apply", "-f", filepath.Join(cfg.root, "examples", "deploy", "crd.yaml"))
	if code != 0 || !strings.Contains(out, "customresourcedefinition.apiextensions.k8s.io/"+crd.Name) {
		t.Fatalf("kubectl apply -f examples/deploy/crd.yaml: exit %d", code)
	}
	if _, _, code := kubectl(t, ctx, "", "wait", "--for=condition=Established", "crd/"+crd.Name, "--timeout=60s"); code != 0 {
		t.Fatal("the CRD is not Established")
	}
	dc, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dc.Resource(crdGVR).Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	applied := got.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
	if len(applied) < 1000 {
		t.Fatalf("no last-applied-configuration annotation after kubectl apply (%d bytes)", len(applied))
	}
	t.Logf("last-applied-configuration: %d bytes (limit 262144)", len(applied))

	ns := newNamespace(t, ctx)
	if _, _, code := kubectl(t, ctx, crdSetManifest, "apply", "-n", ns, "-f", "-"); code != 0 {
		t.Fatal("kubectl apply of an ordinal.dev StatefulSet failed")
	}

	// Read back through the typed client: the templates' metadata survived.
	c := crdClient(t)
	get := func() *appsv1.StatefulSet {
		t.Helper()
		var s appsv1.StatefulSet
		if err := c.Get().Namespace(ns).Resource(crd.Resource).Name("web").Do(ctx).Into(&s); err != nil {
			t.Fatalf("GET ordinal.dev/v1 statefulsets/web: %v", err)
		}
		return &s
	}
	s := get()
	if tm := s.Spec.Template.ObjectMeta; tm.Labels["app"] != "web" || tm.Labels["tier"] != "front" || tm.Annotations["e2e.ordinal.dev/note"] != "kept" {
		t.Errorf("spec.template.metadata pruned: %+v", tm)
	}
	if len(s.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("%d volumeClaimTemplates", len(s.Spec.VolumeClaimTemplates))
	}
	if cm := s.Spec.VolumeClaimTemplates[0].ObjectMeta; cm.Name != "data" || cm.Labels["claim"] != "data" || cm.Annotations["e2e.ordinal.dev/claim-note"] != "kept" {
		t.Errorf("spec.volumeClaimTemplates[0].metadata pruned: %+v", cm)
	}
	var list appsv1.StatefulSetList
	if err := c.Get().Namespace(ns).Resource(crd.Resource).Do(ctx).Into(&list); err != nil || len(list.Items) != 1 {
		t.Errorf("LIST ordinal.dev/v1 statefulsets: %d items, %v", len(list.Items), err)
	}

	// kubectl get: the short name, the printer columns, category all.
	out, _, _ = kubectl(t, ctx, "", "get", "osts", "-n", ns)
	if !strings.HasPrefix(strings.Join(strings.Fields(firstLines(out, 1)), " "), "NAME REPLICAS READY CURRENT UPDATED AGE") ||
		!strings.HasPrefix(strings.Join(strings.Fields(strings.Split(out, "\n")[1]), " "), "web 2 ") {
		t.Errorf("kubectl get osts:\n%s", out)
	}
	out, _, _ = kubectl(t, ctx, "", "get", "osts", "-n", ns, "-o", "wide")
	if f := strings.Fields(out); !strings.Contains(firstLines(out, 1), "CONTAINER") || !strings.Contains(firstLines(out, 1), "IMAGE") ||
		len(f) < 2 || f[len(f)-2] != "nginx" || f[len(f)-1] != "nginx:1.27" {
		t.Errorf("kubectl get osts -o wide:\n%s", out)
	}
	if out, _, _ = kubectl(t, ctx, "", "get", "all", "-n", ns); !strings.Contains(out, "statefulset.ordinal.dev/web") {
		t.Errorf("kubectl get all does not list the set (categories: all):\n%s", out)
	}

	// kubectl scale through the scale subresource.
	if _, _, code := kubectl(t, ctx, "", "scale", "-n", ns, "statefulsets.ordinal.dev/web", "--replicas=3"); code != 0 {
		t.Fatal("kubectl scale failed")
	}
	if r := get().Spec.Replicas; r == nil || *r != 3 {
		t.Errorf("spec.replicas %s after kubectl scale --replicas=3", ptrStr(r))
	}

	// status.selector, written through the status subresource, is the scale subresource's selector.
	status := `{"status":{"replicas":0,"selector":"app=web"}}`
	if err := c.Patch(types.MergePatchType).Namespace(ns).Resource(crd.Resource).Name("web").SubResource("status").
		Body([]byte(status)).Do(ctx).Error(); err != nil {
		t.Fatalf("status patch: %v", err)
	}
	raw, err := c.Get().Namespace(ns).Resource(crd.Resource).Name("web").SubResource("scale").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET scale: %v", err)
	}
	var scale autoscalingv1.Scale
	if err := json.Unmarshal(raw, &scale); err != nil {
		t.Fatal(err)
	}
	if scale.Status.Selector != "app=web" || scale.Spec.Replicas != 3 || scale.Status.Replicas != 0 {
		t.Errorf("scale: %s", raw)
	}

	// apps/v1's immutable fields (ValidateStatefulSetUpdate) are immutable here too; the rest is not.
	for _, p := range []struct{ field, patch string }{
		{"selector", `{"spec":{"selector":{"matchLabels":{"app":"web","x":"y"}}}}`},
		{"serviceName", `{"spec":{"serviceName":"other"}}`},
		{"podManagementPolicy", `{"spec":{"podManagementPolicy":"Parallel"}}`},
		{"volumeClaimTemplates", `{"spec":{"volumeClaimTemplates":null}}`},
	} {
		_, stderr, code := kubectl(t, ctx, "", "patch", "-n", ns, "osts", "web", "--type=merge", "-p", p.patch)
		if code == 0 || !strings.Contains(stderr, "spec."+p.field+": Invalid value: field is immutable") {
			t.Errorf("spec.%s changed: exit %d, %s", p.field, code, stderr)
		}
	}
	allowed := `{"spec":{"podManagementPolicy":"OrderedReady","minReadySeconds":5,"template":{"metadata":{"labels":{"v":"2"}}},"updateStrategy":{"type":"OnDelete"}}}`
	if _, stderr, code := kubectl(t, ctx, "", "patch", "-n", ns, "osts", "web", "--type=merge", "-p", allowed); code != 0 {
		t.Errorf("a mutable edit (podManagementPolicy unset -> its default OrderedReady, template, strategy) refused: %s", stderr)
	}
	if s := get(); s.Spec.Template.Labels["v"] != "2" || s.Spec.MinReadySeconds != 5 {
		t.Errorf("after the edit: template labels %v, minReadySeconds %d", s.Spec.Template.Labels, s.Spec.MinReadySeconds)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/host/crd"
)

// An ordinal.dev set's status is validated as kube-apiserver validates an apps/v1 set's
// (ValidateStatefulSetStatusUpdate): the same status writes are refused, on the same fields, by the real
// kube-apiserver for both kinds. `make chaos` found the difference: a sync from a stale cache computed
// currentReplicas -1, which the CRD stored (apps/v1 refuses it, and the write is retried) and `kubectl
// ordinal migrate --to apps` then could not carry over. No controller runs in the namespace.
func TestCRDStatusValidationIsAppsV1s(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	dc, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []struct {
		name       string
		gvr        schema.GroupVersionResource
		apiVersion string
	}{
		{"apps/v1", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, "apps/v1"},
		{"ordinal.dev/v1", crd.GroupVersion.WithResource(crd.Resource), crd.GroupVersion.String()},
	}
	for _, k := range kinds {
		var obj map[string]any
		manifest := strings.Replace(crdSetManifest, "apiVersion: ordinal.dev/v1", "apiVersion: "+k.apiVersion, 1)
		if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
			t.Fatal(err)
		}
		if _, err := dc.Resource(k.gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create the %s set: %v", k.name, err)
		}
	}
	// writeStatus replaces the set's status; it returns the API server's answer.
	writeStatus := func(ctx context.Context, gvr schema.GroupVersionResource, status map[string]any) error {
		u, err := dc.Resource(gvr).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		u.Object["status"] = status
		_, err = dc.Resource(gvr).Namespace(ns).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		return err
	}
	valid := map[string]any{"replicas": int64(2), "readyReplicas": int64(2), "currentReplicas": int64(1), "updatedReplicas": int64(1),
		"availableReplicas": int64(2), "collisionCount": int64(2), "observedGeneration": int64(1)}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range valid {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		name   string
		status map[string]any
		field  string // the field the refusal names ("": accepted)
		says   string // and what it says of it
	}{
		{"a valid status", valid, "", ""},
		{"a negative count", with("currentReplicas", int64(-1)), "status.currentReplicas", "greater than or equal to 0"},
		{"a negative replicas", with("replicas", int64(-1), "readyReplicas", int64(0), "currentReplicas", int64(0), "updatedReplicas", int64(0), "availableReplicas", int64(0)),
			"status.replicas", "greater than or equal to 0"},
		{"a negative observedGeneration", with("observedGeneration", int64(-1)), "status.observedGeneration", "greater than or equal to 0"},
		{"more ready than replicas", with("readyReplicas", int64(3)), "status.readyReplicas", "cannot be greater than status.replicas"},
		{"more updated than replicas", with("updatedReplicas", int64(3)), "status.updatedReplicas", "cannot be greater than status.replicas"},
		{"more available than ready", with("readyReplicas", int64(1)), "status.availableReplicas", "cannot be greater than status.readyReplicas"},
		{"the collision count decremented", with("collisionCount", int64(1)), "status.collisionCount", "cannot be decremented"},
	} {
		for _, k := range kinds {
			err := writeStatus(ctx, k.gvr, c.status)
			switch {
			case c.field == "" && err != nil:
				t.Errorf("%s, %s: refused: %v", c.name, k.name, err)
			case c.field == "":
			case !apierrors.IsInvalid(err):
				t.Errorf("%s, %s: %v, want Invalid on %s", c.name, k.name, err, c.field)
			case !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.says):
				t.Errorf("%s, %s: refused with %q, want it to name %s and say %q", c.name, k.name, err, c.field, c.says)
			}
		}
	}
}

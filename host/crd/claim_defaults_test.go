package crd

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
)

// The CRD defaults volumeClaimTemplates as kube-apiserver defaults an apps/v1 set's (hack/crd-defaults): the
// field is immutable, and a set `kubectl ordinal migrate` copied from apps/v1 carries those defaults, so the
// user's manifest must be defaulted to the same templates for its apply to pass the CRD's immutability rule.
// Judged on every StatefulSet of the apiserver-defaults corpus: the templates of the input, defaulted by the
// CRD's schema as kube-apiserver defaults a custom resource (crdDefault), are the templates kube-apiserver
// answered for apps/v1. e2e TestMigrateToOrdinalAndBack applies a manifest after a migration on the real one.
func TestClaimTemplateDefaultsAreKubeAPIServers(t *testing.T) {
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(Manifest, &crd); err != nil || len(crd.Spec.Versions) != 1 {
		t.Fatalf("the CRD: %v, %d versions", err, len(crd.Spec.Versions))
	}
	schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	sets := 0
	for _, fx := range kubetest.Fixtures(t, "../kube/testdata/apiserver-defaults") {
		want := templatesOf(fx.Answer)
		if fx.Kind != "StatefulSet" || want == nil {
			continue
		}
		sets++
		obj := map[string]any{"apiVersion": Group + "/" + Version, "kind": Kind, "metadata": map[string]any{"name": "x"}, "spec": fx.Input["spec"]}
		crdDefault(obj, schema)
		// kube-apiserver also writes each quantity canonically (0.5Gi as 512Mi, 5368709120 as a string), which a
		// CRD cannot: a manifest that spells a template's quantity otherwise than apps/v1 stored it is refused
		// (docs/migration.md)
		got := templatesOf(obj)
		canonicalQuantities(t, got)
		canonicalQuantities(t, want)
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s: the CRD defaults the templates to\n %s\nkube-apiserver to\n %s", fx.Name, g, w)
		}
	}
	if sets == 0 {
		t.Fatal("no StatefulSet with volumeClaimTemplates in the apiserver-defaults corpus")
	}
}

// templatesOf is an object's spec.volumeClaimTemplates, nil when it has none.
func templatesOf(obj map[string]any) []any {
	spec, _ := obj["spec"].(map[string]any)
	vct, _ := spec["volumeClaimTemplates"].([]any)
	return vct
}

// crdDefault defaults x by schema as apiextensions-apiserver does (pkg/apiserver/schema/defaulting,
// algorithm.go, whose package brings the whole CEL validator with it): an absent property with a default gets
// a copy of it, then every property, defaulted or not, and every array item is defaulted by its own schema.
func crdDefault(x any, schema map[string]any) {
	switch x := x.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		for k, p := range props {
			if d, ok := p.(map[string]any)["default"]; ok {
				if _, found := x[k]; !found {
					b, _ := json.Marshal(d)
					var c any
					_ = json.Unmarshal(b, &c)
					x[k] = c
				}
			}
		}
		for k, v := range x {
			if p, ok := props[k].(map[string]any); ok {
				crdDefault(v, p)
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for _, v := range x {
				crdDefault(v, items)
			}
		}
	}
}

// canonicalQuantities writes each template's storage requests and limits as kube-apiserver stores them.
func canonicalQuantities(t *testing.T, templates []any) {
	for _, tm := range templates {
		spec, _ := tm.(map[string]any)["spec"].(map[string]any)
		res, _ := spec["resources"].(map[string]any)
		for _, list := range []string{"requests", "limits"} {
			rl, _ := res[list].(map[string]any)
			for k, v := range rl {
				s, ok := v.(string)
				if n, isNum := v.(json.Number); isNum { // a quantity may be given as a JSON number
					s, ok = n.String(), true
				}
				q, err := resource.ParseQuantity(s)
				if !ok {
					err = fmt.Errorf("%v is neither a string nor a number", v)
				}
				if err != nil {
					t.Fatalf("a template's %s %s: %v", list, k, err)
				}
				rl[k] = q.String()
			}
		}
	}
}

package crd

import (
	"bytes"
	"encoding"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The committed copies of the generated CRD (`make crd` writes all three; `make check-crd` regenerates).
var copies = []string{"../../examples/deploy/crd.yaml", "../../examples/helm/ordinal/crds/statefulsets.ordinal.dev.yaml"}

func TestCopiesEqual(t *testing.T) {
	for _, p := range copies {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, Manifest) {
			t.Errorf("%s differs from host/crd/statefulsets.ordinal.dev.yaml: run 'make crd'", p)
		}
	}
}

// props is the part of a JSONSchemaProps the tests read.
type props struct {
	Type                 string           `json:"type"`
	Properties           map[string]props `json:"properties"`
	Items                *props           `json:"items"`
	AdditionalProperties *props           `json:"additionalProperties"`
	Required             []string         `json:"required"`
	IntOrString          bool             `json:"x-kubernetes-int-or-string"`
	PreserveUnknown      bool             `json:"x-kubernetes-preserve-unknown-fields"`
	EmbeddedResource     bool             `json:"x-kubernetes-embedded-resource"`
}

type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind, ListKind, Plural, Singular string
			ShortNames, Categories           []string
		} `json:"names"`
		Scope    string `json:"scope"`
		Versions []struct {
			Name                     string
			Served, Storage          bool
			AdditionalPrinterColumns []struct {
				Name, Type, JSONPath string
				Priority             int32
			}
			Subresources struct {
				Status *struct{} `json:"status"`
				Scale  *struct {
					SpecReplicasPath, StatusReplicasPath, LabelSelectorPath string
				} `json:"scale"`
			}
			Schema struct {
				OpenAPIV3Schema props `json:"openAPIV3Schema"`
			}
		} `json:"versions"`
	} `json:"spec"`
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	var m manifest
	if err := yaml.Unmarshal(Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Spec.Versions) != 1 {
		t.Fatalf("%d versions, want 1", len(m.Spec.Versions))
	}
	return m
}

func TestManifestNames(t *testing.T) {
	m := readManifest(t)
	n := m.Spec.Names
	v := m.Spec.Versions[0]
	if m.APIVersion != "apiextensions.k8s.io/v1" || m.Kind != "CustomResourceDefinition" || m.Metadata.Name != Name ||
		m.Spec.Group != Group || m.Spec.Scope != "Namespaced" || n.Kind != Kind || n.ListKind != Kind+"List" ||
		n.Plural != Resource || n.Singular != "statefulset" || !slices.Equal(n.ShortNames, []string{"osts"}) ||
		!slices.Equal(n.Categories, []string{"all"}) || v.Name != Version || !v.Served || !v.Storage {
		t.Errorf("names: %+v %+v, version %s served %v storage %v", m.Metadata, m.Spec.Names, v.Name, v.Served, v.Storage)
	}
	if v.Subresources.Status == nil {
		t.Error("no status subresource")
	}
	if s := v.Subresources.Scale; s == nil || s.SpecReplicasPath != ".spec.replicas" || s.StatusReplicasPath != ".status.replicas" ||
		s.LabelSelectorPath != ".status.selector" {
		t.Errorf("scale subresource %+v", s)
	}
	var cols []string
	for _, c := range v.AdditionalPrinterColumns {
		cols = append(cols, c.Name+"="+c.JSONPath+"/"+string(rune('0'+c.Priority)))
	}
	want := []string{"Replicas=.spec.replicas/0", "Ready=.status.readyReplicas/0", "Current=.status.currentReplicas/0",
		"Updated=.status.updatedReplicas/0", "Age=.metadata.creationTimestamp/0",
		"Container=.spec.template.spec.containers[0].name/1", "Image=.spec.template.spec.containers[0].image/1"}
	if !slices.Equal(cols, want) {
		t.Errorf("printer columns\n  %v\nwant\n  %v", cols, want)
	}
}

// Client-side `kubectl apply` stores the object as JSON in the annotation
// kubectl.kubernetes.io/last-applied-configuration, and an object's annotations may total 256 KiB: the CRD
// must stay well under it (upstream's descriptions would make it 350 kB; the Makefile drops them).
func TestManifestFitsClientSideApply(t *testing.T) {
	j, err := yaml.YAMLToJSON(Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, j); err != nil {
		t.Fatal(err)
	}
	const limit, margin = 256 << 10, 64 << 10
	if c.Len() > limit-margin {
		t.Errorf("the CRD is %d bytes of JSON: over %d, too close to kubectl apply's annotation limit %d", c.Len(), limit-margin, limit)
	}
	t.Logf("CRD: %d bytes of YAML, %d of compact JSON", len(Manifest), c.Len())
}

var (
	objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()
	textMarshaler  = reflect.TypeFor[encoding.TextMarshaler]()
	jsonMarshaler  = reflect.TypeFor[json.Marshaler]()
)

// jsonFields returns the JSON names of a struct's fields, inlined structs' fields included, with their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && f.Anonymous {
			for k, v := range jsonFields(f.Type) {
				fields[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

// checkSchema compares the schema at path with the Go type's JSON: every field of every struct is a
// property (none missing: the API server would prune it; none extra), lists have items, maps
// additionalProperties. Types with their own JSON (Time, Quantity, IntOrString) are leaves. An embedded
// ObjectMeta (pod and claim templates) must keep labels and annotations: the pruning trap.
func checkSchema(t *testing.T, path string, typ reflect.Type, s props) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == objectMetaType {
		for _, k := range []string{"labels", "annotations", "name"} {
			if _, ok := s.Properties[k]; !ok {
				t.Errorf("%s: no %s in the schema: the API server would prune it (generateEmbeddedObjectMeta)", path, k)
			}
		}
		return
	}
	if reflect.PointerTo(typ).Implements(jsonMarshaler) || reflect.PointerTo(typ).Implements(textMarshaler) {
		if s.Type == "" && !s.IntOrString && !s.PreserveUnknown {
			t.Errorf("%s (%s): neither a type nor int-or-string", path, typ)
		}
		return
	}
	switch typ.Kind() {
	case reflect.Struct:
		if s.Type != "object" {
			t.Errorf("%s: type %q, want object", path, s.Type)
		}
		fields := jsonFields(typ)
		var names []string
		for name := range fields {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			ps, ok := s.Properties[name]
			if !ok {
				t.Errorf("%s.%s: in %s, not in the schema (the API server would prune it)", path, name, typ)
				continue
			}
			checkSchema(t, path+"."+name, fields[name], ps)
		}
		for name := range s.Properties {
			if _, ok := fields[name]; !ok {
				t.Errorf("%s.%s: in the schema, not in %s", path, name, typ)
			}
		}
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			if s.Type != "string" {
				t.Errorf("%s: []byte is type %q, want string", path, s.Type)
			}
			return
		}
		if s.Type != "array" || s.Items == nil {
			t.Errorf("%s: type %q, items %v, want an array", path, s.Type, s.Items)
			return
		}
		checkSchema(t, path+"[]", typ.Elem(), *s.Items)
	case reflect.Map:
		if s.Type != "object" || s.AdditionalProperties == nil {
			t.Errorf("%s: type %q, want an object with additionalProperties", path, s.Type)
			return
		}
		checkSchema(t, path+"{}", typ.Elem(), *s.AdditionalProperties)
	case reflect.String:
		if s.Type != "string" {
			t.Errorf("%s: type %q, want string", path, s.Type)
		}
	case reflect.Bool:
		if s.Type != "boolean" {
			t.Errorf("%s: type %q, want boolean", path, s.Type)
		}
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		if s.Type != "integer" {
			t.Errorf("%s: type %q, want integer", path, s.Type)
		}
	case reflect.Float32, reflect.Float64:
		if s.Type != "number" {
			t.Errorf("%s: type %q, want number", path, s.Type)
		}
	default:
		t.Errorf("%s: unexpected Go kind %s", path, typ.Kind())
	}
}

// The embedded CRD's schema has exactly the fields of apps/v1's StatefulSetSpec and StatefulSetStatus (plus
// status.selector), to the leaves: a stale CRD after a k8s.io/api upgrade, or one generated without
// embedded object metadata, fails here (`make check-crd` compares it with a fresh generation).
func TestManifestSchemaIsAppsV1(t *testing.T) {
	root := readManifest(t).Spec.Versions[0].Schema.OpenAPIV3Schema
	checkSchema(t, "spec", reflect.TypeFor[appsv1.StatefulSetSpec](), root.Properties["spec"])
	checkSchema(t, "status", reflect.TypeFor[StatefulSetStatus](), root.Properties["status"])
	if got := root.Properties["status"].Properties["selector"].Type; got != "string" {
		t.Errorf("status.selector: type %q, want string", got)
	}
	for _, p := range []string{"template", "volumeClaimTemplates[]"} {
		s := root.Properties["spec"].Properties[strings.TrimSuffix(p, "[]")]
		if strings.HasSuffix(p, "[]") {
			s = *s.Items
		}
		if _, ok := s.Properties["metadata"].Properties["labels"]; !ok {
			t.Errorf("spec.%s.metadata has no labels", p)
		}
	}
	if req := root.Properties["spec"].Required; !slices.Equal(req, []string{"selector", "template"}) {
		t.Errorf("spec required %v, want [selector template] (apps/v1's)", req)
	}
}

// StatefulSetStatus and StatefulSetCondition repeat apps/v1's fields (types.go says why): the same JSON
// names and Go types, plus status.selector, so a k8s.io/api upgrade that adds a field fails here.
func TestStatusTypesAreAppsV1(t *testing.T) {
	same := func(name string, ours, theirs reflect.Type, extra ...string) {
		t.Helper()
		of, tf := jsonFields(ours), jsonFields(theirs)
		for _, e := range extra {
			delete(of, e)
		}
		for k, ot := range of {
			tt, ok := tf[k]
			switch {
			case !ok:
				t.Errorf("%s.%s: not in apps/v1's %s", name, k, theirs)
			case k == "conditions":
				if ot != reflect.TypeFor[[]StatefulSetCondition]() || tt != reflect.TypeFor[[]appsv1.StatefulSetCondition]() {
					t.Errorf("%s.conditions: %s, apps/v1 %s", name, ot, tt)
				}
			case ot != tt:
				t.Errorf("%s.%s: %s, apps/v1 %s", name, k, ot, tt)
			}
		}
		for k := range tf {
			if _, ok := of[k]; !ok {
				t.Errorf("%s.%s: in apps/v1's %s, not in ours: add it to types.go and run 'make crd'", name, k, theirs)
			}
		}
	}
	tags := func(typ reflect.Type) map[string]string {
		m := map[string]string{}
		for i := range typ.NumField() {
			f := typ.Field(i)
			m[f.Name] = f.Tag.Get("json")
		}
		return m
	}
	for _, p := range [][2]reflect.Type{
		{reflect.TypeFor[StatefulSetStatus](), reflect.TypeFor[appsv1.StatefulSetStatus]()},
		{reflect.TypeFor[StatefulSetCondition](), reflect.TypeFor[appsv1.StatefulSetCondition]()},
	} {
		theirs := tags(p[1])
		for name, tag := range tags(p[0]) {
			if want, ok := theirs[name]; ok && tag != want {
				t.Errorf("%s.%s: json tag %q, apps/v1 %q", p[0], name, tag, want)
			}
		}
	}
	same("status", reflect.TypeFor[StatefulSetStatus](), reflect.TypeFor[appsv1.StatefulSetStatus](), "selector")
	same("status.conditions[]", reflect.TypeFor[StatefulSetCondition](), reflect.TypeFor[appsv1.StatefulSetCondition]())
}

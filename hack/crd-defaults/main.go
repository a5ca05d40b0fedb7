// Command crd-defaults adds to controller-gen's CRD (stdin to stdout) the defaults kube-apiserver gives an
// apps/v1 StatefulSet's volumeClaimTemplates, which controller-gen cannot express: they belong to
// core/v1's PersistentVolumeClaim, a type host/crd does not own (`make crd`).
//
// Why: spec.volumeClaimTemplates is immutable, and kube-apiserver compares it after defaulting. An
// ordinal.dev/v1 set that `kubectl ordinal migrate` copied from apps/v1 carries those defaults, so without
// them in the CRD the user's own manifest, applied afterwards, was refused as a change to the templates.
// The defaults are host/kube/testdata/apiserver-defaults' answers (host/crd's tests hold them equal).
package main

import (
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

// claimTemplateDefaults are the defaults of each volumeClaimTemplates item, by path in its schema:
// SetDefaults_PersistentVolumeClaim's (a volume mode, the Pending phase) and the type kube-apiserver
// writes into every template.
var claimTemplateDefaults = []struct {
	path  []string
	value any
}{
	{[]string{"apiVersion"}, "v1"},
	{[]string{"kind"}, "PersistentVolumeClaim"},
	{[]string{"spec", "volumeMode"}, "Filesystem"},
	{[]string{"status"}, map[string]any{"phase": "Pending"}},
	{[]string{"status", "phase"}, "Pending"}, // a template that gives status without a phase
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crd-defaults:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	b, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	var crd map[string]any
	if err := yaml.Unmarshal(b, &crd); err != nil {
		return err
	}
	versions, _ := at(crd, "spec", "versions").([]any)
	if len(versions) == 0 {
		return fmt.Errorf("no spec.versions: not a CustomResourceDefinition")
	}
	for _, v := range versions {
		item, ok := at(v, "schema", "openAPIV3Schema", "properties", "spec", "properties", "volumeClaimTemplates", "items").(map[string]any)
		if !ok {
			return fmt.Errorf("version %v: no spec.volumeClaimTemplates items in its schema", at(v, "name"))
		}
		for _, d := range claimTemplateDefaults {
			prop := item
			for _, p := range d.path {
				if prop, ok = at(prop, "properties", p).(map[string]any); !ok {
					return fmt.Errorf("version %v: volumeClaimTemplates items have no property %v", at(v, "name"), d.path)
				}
			}
			prop["default"] = d.value
		}
	}
	y, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "---\n%s", y) // as controller-gen writes it
	return err
}

// at is the value at path in nested maps, nil where there is none.
func at(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

package abi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
)

var (
	kubernetesVersionPattern = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+`)
	gateNamePattern          = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// CheckDescribe reads a module's describe output and checks it by the rules of describe.schema.json,
// without a JSON Schema engine: hosts check describe on every module load, and the schema library's
// package initialisation alone cost every ordinal process ~16 ms and 1.7 MB. TestCheckDescribeAgreesWithSchema
// (abi/schemacheck) holds the two to the same answers.
func CheckDescribe(raw []byte) (Describe, error) {
	var d Describe
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return d, fmt.Errorf("describe: not a JSON object")
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch k {
		case "abi", "module", "moduleVersion", "kubernetesVersion", "features", "customSetKinds", "writeFailures", "unchangedObjects", "objectDeltas", "extensions":
		default:
			return d, fmt.Errorf("describe: unknown field %q", k)
		}
	}
	for _, k := range []string{"abi", "module", "moduleVersion", "kubernetesVersion", "features"} {
		if _, ok := fields[k]; !ok {
			return d, fmt.Errorf("describe: missing field %q", k)
		}
	}
	// Exact, as the schema's "integer" (1.0 is one; 1.0000000000000000001 is not, though a float64 reads it as 1).
	var num json.Number
	r, ok := new(big.Rat), false
	if raw := bytes.TrimSpace(fields["abi"]); len(raw) > 0 && raw[0] != '"' && strictDecode(raw, &num) == nil { // a Number takes "1" too
		_, ok = r.SetString(num.String())
	}
	if !ok || !r.IsInt() || r.Num().Cmp(big.NewInt(1)) < 0 || r.Num().Cmp(big.NewInt(math.MaxInt32)) > 0 {
		return d, fmt.Errorf("describe: abi: want an integer from 1 to %d, got %.40s", math.MaxInt32, fields["abi"])
	}
	d.ABI = int(r.Num().Int64())
	for _, s := range []struct {
		name string
		dst  *string
	}{{"module", &d.Module}, {"moduleVersion", &d.ModuleVersion}, {"kubernetesVersion", &d.KubernetesVersion}} {
		if err := strictDecode(fields[s.name], s.dst); err != nil || *s.dst == "" {
			return d, fmt.Errorf("describe: %s: want a non-empty string", s.name)
		}
	}
	if !kubernetesVersionPattern.MatchString(d.KubernetesVersion) {
		return d, fmt.Errorf("describe: kubernetesVersion %q does not match %s", d.KubernetesVersion, kubernetesVersionPattern)
	}
	var gates map[string]json.RawMessage
	if err := strictDecode(fields["features"], &gates); err != nil || gates == nil {
		return d, fmt.Errorf("describe: features: want an object of gate name to boolean")
	}
	d.Features = make(map[string]bool, len(gates))
	for name, v := range gates {
		if !gateNamePattern.MatchString(name) {
			return d, fmt.Errorf("describe: features: gate name %q does not match %s", name, gateNamePattern)
		}
		var b bool
		if err := strictDecode(v, &b); err != nil {
			return d, fmt.Errorf("describe: features.%s: want a boolean", name)
		}
		d.Features[name] = b
	}
	if v, ok := fields["customSetKinds"]; ok {
		if err := strictDecode(v, &d.CustomSetKinds); err != nil {
			return d, fmt.Errorf("describe: customSetKinds: want a boolean")
		}
	}
	if v, ok := fields["writeFailures"]; ok {
		if err := strictDecode(v, &d.WriteFailures); err != nil {
			return d, fmt.Errorf("describe: writeFailures: want a boolean")
		}
	}
	if v, ok := fields["unchangedObjects"]; ok {
		if err := strictDecode(v, &d.UnchangedObjects); err != nil {
			return d, fmt.Errorf("describe: unchangedObjects: want a boolean")
		}
	}
	if v, ok := fields["objectDeltas"]; ok {
		if err := strictDecode(v, &d.ObjectDeltas); err != nil {
			return d, fmt.Errorf("describe: objectDeltas: want a boolean")
		}
	}
	if v, ok := fields["extensions"]; ok {
		ext, err := checkExtensions(v)
		if err != nil {
			return d, err
		}
		d.Extensions = ext
	}
	return d, nil
}

var extensionNamePattern = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// checkExtensions reads describe's extensions by describe.schema.json's rules.
func checkExtensions(raw json.RawMessage) ([]Extension, error) {
	var items []json.RawMessage
	if err := strictDecode(raw, &items); err != nil {
		return nil, fmt.Errorf("describe: extensions: want an array")
	}
	out := make([]Extension, 0, len(items))
	for i, item := range items {
		var fields map[string]json.RawMessage
		if err := strictDecode(item, &fields); err != nil || fields == nil {
			return nil, fmt.Errorf("describe: extensions[%d]: want an object", i)
		}
		var e Extension
		for k := range fields {
			switch k {
			case "name", "annotation", "upstreamIssue":
			default:
				return nil, fmt.Errorf("describe: extensions[%d]: unknown field %q", i, k)
			}
		}
		for _, f := range []struct {
			name string
			dst  *string
		}{{"name", &e.Name}, {"annotation", &e.Annotation}, {"upstreamIssue", &e.UpstreamIssue}} {
			v, ok := fields[f.name]
			if !ok {
				return nil, fmt.Errorf("describe: extensions[%d]: missing field %q", i, f.name)
			}
			if err := strictDecode(v, f.dst); err != nil || *f.dst == "" {
				return nil, fmt.Errorf("describe: extensions[%d].%s: want a non-empty string", i, f.name)
			}
		}
		if !extensionNamePattern.MatchString(e.Name) {
			return nil, fmt.Errorf("describe: extensions[%d].name %q does not match %s", i, e.Name, extensionNamePattern)
		}
		out = append(out, e)
	}
	return out, nil
}

// strictDecode decodes one value, refusing null (which encoding/json would accept as "leave it zero").
func strictDecode(raw json.RawMessage, dst any) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return fmt.Errorf("null")
	}
	return json.Unmarshal(raw, dst)
}

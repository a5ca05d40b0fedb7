package abi

import (
	"bytes"
	"embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schemas holds the JSON Schemas (draft 2020-12) of the ABI documents, for hosts
// that want to serve or copy them.
//
//go:embed schema/*.schema.json
var Schemas embed.FS

const schemaBase = "https://github.com/ordinal-dev/ordinal/abi/schema/"

// Schema file names inside Schemas (under schema/).
const (
	SnapshotSchema = "snapshot.schema.json"
	PlanSchema     = "plan.schema.json"
	DescribeSchema = "describe.schema.json"
)

// compiled is built once: the schemas are static and compiling is the costly part.
var compiled = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	names := []string{SnapshotSchema, PlanSchema, DescribeSchema}
	for _, name := range names {
		raw, err := Schemas.ReadFile("schema/" + name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("abi: schema %s: %w", name, err)
		}
		if err := c.AddResource(schemaBase+name, doc); err != nil {
			return nil, fmt.Errorf("abi: schema %s: %w", name, err)
		}
	}
	out := make(map[string]*jsonschema.Schema, len(names))
	for _, name := range names {
		s, err := c.Compile(schemaBase + name)
		if err != nil {
			return nil, fmt.Errorf("abi: schema %s: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
})

// ValidateSnapshot checks a snapshot's envelope against snapshot.schema.json.
// The objects inside are checked by the module, not by the schema.
func ValidateSnapshot(doc []byte) error { return validate(SnapshotSchema, doc) }

// ValidatePlan checks a module's reconcile output against plan.schema.json.
func ValidatePlan(doc []byte) error { return validate(PlanSchema, doc) }

// ValidateDescribe checks a module's describe output against describe.schema.json.
func ValidateDescribe(doc []byte) error { return validate(DescribeSchema, doc) }

func validate(name string, doc []byte) error {
	schemas, err := compiled()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("%s: not JSON: %w", name, err)
	}
	if err := schemas[name].Validate(inst); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

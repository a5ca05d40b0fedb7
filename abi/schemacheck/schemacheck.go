// Package schemacheck validates ABI documents against the JSON Schemas in abi/schema/, with a JSON Schema
// engine. It is for tests and tools: the host itself checks only describe, by abi.CheckDescribe, so that
// the engine (whose package initialisation costs every process ~16 ms) is not linked into ordinal.
package schemacheck

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ordinal-dev/ordinal/abi"
)

const schemaBase = "https://github.com/ordinal-dev/ordinal/abi/schema/"

// compiled is built once: the schemas are static and compiling is the costly part.
var compiled = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	names := []string{abi.SnapshotSchema, abi.PlanSchema, abi.DescribeSchema, abi.PolicyDescribeSchema, abi.PolicyInputSchema, abi.PolicyAnswerSchema}
	for _, name := range names {
		raw, err := abi.Schemas.ReadFile("schema/" + name)
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
func ValidateSnapshot(doc []byte) error { return validate(abi.SnapshotSchema, doc) }

// ValidatePlan checks a module's reconcile output against plan.schema.json.
func ValidatePlan(doc []byte) error { return validate(abi.PlanSchema, doc) }

// ValidateDescribe checks a module's describe output against describe.schema.json.
func ValidateDescribe(doc []byte) error { return validate(abi.DescribeSchema, doc) }

// ValidatePolicyDescribe, ValidatePolicyInput and ValidatePolicyAnswer check the policy ABI's documents
// (POLICY.md) against their schemas.
func ValidatePolicyDescribe(doc []byte) error { return validate(abi.PolicyDescribeSchema, doc) }
func ValidatePolicyInput(doc []byte) error    { return validate(abi.PolicyInputSchema, doc) }
func ValidatePolicyAnswer(doc []byte) error   { return validate(abi.PolicyAnswerSchema, doc) }

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

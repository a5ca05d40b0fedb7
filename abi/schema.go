package abi

import "embed"

// Schemas holds the JSON Schemas (draft 2020-12) of the ABI documents, for hosts
// that want to serve or copy them.
//
//go:embed schema/*.schema.json
var Schemas embed.FS

// Schema file names inside Schemas (under schema/).
const (
	SnapshotSchema = "snapshot.schema.json"
	PlanSchema     = "plan.schema.json"
	DescribeSchema = "describe.schema.json"
	// The policy ABI's documents (POLICY.md).
	PolicyDescribeSchema = "policy-describe.schema.json"
	PolicyInputSchema    = "policy-input.schema.json"
	PolicyAnswerSchema   = "policy-answer.schema.json"
)

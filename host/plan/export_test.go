package plan

// The two ways Decode reads a plan, for tests that hold them to the same answers.
var (
	DecodeOnce    = decodeOnce
	DecodeByParts = decodeByParts
)

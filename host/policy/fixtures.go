package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/policyfixture"
)

// ErrWrongAnswer is CheckFixture's error for a policy that answered a fixture otherwise than it says.
var ErrWrongAnswer = errors.New("the answer is not the fixture's")

// CheckFixture evaluates a fixture's input with p as a set's sync does (p.Evaluate) and returns the answer;
// the error wraps ErrWrongAnswer when the answer is not the fixture's (the same JSON value), or is p's
// failure. The gate of a supplied policy and `ordinal policy test` both judge a fixture here.
func CheckFixture(ctx context.Context, p *wasm.Policy, f policyfixture.Fixture) ([]byte, error) {
	out, err := p.Evaluate(ctx, f.Input)
	if err != nil {
		return nil, err
	}
	if !policyfixture.SameAnswer(out, f.Answer) {
		return out, fmt.Errorf("%w: answered %.300s, the fixture says %.300s", ErrWrongAnswer, compact(out), compact(f.Answer))
	}
	return out, nil
}

// compact is JSON on one line, for a message (b itself when it is not JSON).
func compact(b []byte) []byte {
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		return b
	}
	return c.Bytes()
}

// CheckName is the gate's check of a policy's name: a supplied policy describes itself by the name it is
// supplied under (NAME.policy.wasm).
func CheckName(p *wasm.Policy, name string) error {
	if p.Name() != name {
		return fmt.Errorf("it is supplied as %q and describes itself as %q", name, p.Name())
	}
	return nil
}

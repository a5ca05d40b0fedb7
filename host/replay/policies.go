package replay

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// policiesOfSet are the policies the set names (abi.AnnotationPolicies), in its order, each loaded once by
// Options.NamedPolicy and put behind a breaker of the replay's own on its virtual clock (policy.OnClock). A
// set that names none runs none.
func (e *engine) policiesOfSet() ([]policy.Module, error) {
	value, ok := jsonobj.GetObj(e.api.StatefulSet(), "metadata.annotations")[abi.AnnotationPolicies].(string)
	if !ok {
		return nil, nil
	}
	if e.opts.NamedPolicy == nil {
		return policy.Resolve(e.ctx, value, nil)
	}
	return policy.Resolve(e.ctx, value, func(ctx context.Context, name string) (policy.Module, error) {
		if m := e.policies[name]; m != nil {
			return m, nil
		}
		m, err := e.opts.NamedPolicy(ctx, name)
		if err != nil {
			return nil, err
		}
		m = policy.OnClock(m, e.clock.Now)
		if e.policies == nil {
			e.policies = map[string]policy.Module{}
		}
		e.policies[name] = m
		return m, nil
	})
}

// setSignals changes what the host supplies the set's policies: each signal set, or removed where null,
// each change told to note.
func (e *engine) setSignals(signals map[string]json.RawMessage, note func(format string, args ...any)) {
	for _, k := range slices.Sorted(maps.Keys(signals)) {
		v := signals[k]
		if string(v) == "null" {
			delete(e.signals, k)
			note("signal %s removed", k)
			continue
		}
		if e.signals == nil {
			e.signals = map[string]json.RawMessage{}
		}
		e.signals[k] = v
		note("signal %s = %s", k, string(v))
	}
}

// timeless is a policy's failure as a timeline records it: a timeout on the direct path says that the call
// timed out, not which of the two limits stopped it (its timeout, or its work budget: whichever a looping
// policy reaches first on this machine at this moment), nor the engine's error under it. The Extism path has
// only the timeout, and says so already.
func timeless(f policy.Failure) policy.Failure {
	var we *wasm.Error
	if !errors.As(f.Err, &we) || we.Kind != wasm.ErrTimeout || we.Path != "direct" {
		return f
	}
	c := *we
	c.Msg, c.Err = "exceeded its timeout or its work budget", nil
	return policy.Failure{Policy: f.Policy, Err: &c}
}

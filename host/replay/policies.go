package replay

import (
	"fmt"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// policiesOfSet are the policies the set names (abi.AnnotationPolicies), in its order, each loaded once by
// Options.NamedPolicy. A set that names none runs none.
func (e *engine) policiesOfSet() ([]policy.Module, error) {
	value, ok := jsonobj.GetObj(e.api.StatefulSet(), "metadata.annotations")[abi.AnnotationPolicies].(string)
	if !ok {
		return nil, nil
	}
	names, err := policy.Names(value)
	if err != nil {
		return nil, err
	}
	var out []policy.Module
	for _, name := range names {
		m := e.policies[name]
		if m == nil {
			if e.opts.NamedPolicy == nil {
				return nil, fmt.Errorf("the set names the policy %q (%s), and this replay was given no policies (--policy)", name, abi.AnnotationPolicies)
			}
			if m, err = e.opts.NamedPolicy(e.ctx, name); err != nil {
				return nil, fmt.Errorf("the set names the policy %q (%s): %w", name, abi.AnnotationPolicies, err)
			}
			if e.policies == nil {
				e.policies = map[string]policy.Module{}
			}
			e.policies[name] = m
		}
		out = append(out, m)
	}
	return out, nil
}

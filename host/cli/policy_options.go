package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/readlimit"
	"github.com/ordinal-dev/ordinal/policies"
)

// policies is the process's policy registry (host/policy.Registry): the shipped policies and the modules of
// --policy, loaded with these options' limits; the controller and the webhook add the module ConfigMap's.
// The caller closes it.
func (o *moduleOptions) policies(ctx context.Context) (*policy.Registry, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	reg := policy.NewRegistry(o.loadPolicy, policies.Builtin())
	for _, path := range o.policyFiles {
		b, err := readlimit.File(path, wasm.DefaultMaxModuleBytes, "policy "+path, "")
		if err != nil {
			reg.Close()
			return nil, withCode(ExitUsage, fmt.Errorf("reading policy: %w", err))
		}
		if err := reg.AddFile(ctx, b, path); err != nil {
			reg.Close()
			if errors.Is(err, policy.ErrDuplicate) {
				return nil, withCode(ExitUsage, err)
			}
			return nil, withCode(ExitModuleFailure, err)
		}
	}
	return reg, nil
}

// loadPolicy loads a policy module with these options' limits: every policy of the process, and `ordinal
// policy test`'s, is loaded so.
func (o *moduleOptions) loadPolicy(ctx context.Context, code []byte) (*wasm.Policy, error) {
	return wasm.LoadPolicy(ctx, code, wasm.Config{Timeout: o.timeout, MemoryLimitPages: o.memoryLimitMB * 16})
}

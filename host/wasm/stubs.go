package wasm

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// extismEnv is the import module of the Extism PDK. The guest links against it
// for its Extism exports; the direct exports never call it.
const extismEnv = "extism:host/env"

// stubCalledError is what a stub host function panics with; wazero turns the
// panic into an error returned from the guest call, and classify reports it.
type stubCalledError struct{ module, name string }

func (e *stubCalledError) Error() string {
	return fmt.Sprintf("module called %s.%s, which the direct path does not provide (only the Extism path does)", e.module, e.name)
}

// instantiateStubs satisfies the module's extism:host/env imports with functions
// of the same signatures that fail if called, so the direct path can instantiate
// a PDK-built module without the Extism kernel. Any import from a module other
// than WASI or extism:host/env makes the module unusable.
func instantiateStubs(ctx context.Context, rt wazero.Runtime, compiled wazero.CompiledModule) error {
	var stubs []api.FunctionDefinition
	for _, def := range compiled.ImportedFunctions() {
		module, name, _ := def.Import()
		switch module {
		case wasi_snapshot_preview1.ModuleName:
		case extismEnv:
			stubs = append(stubs, def)
		default:
			return badModule("load", "module imports %s.%s; an Ordinal host provides only %s and %s",
				module, name, wasi_snapshot_preview1.ModuleName, extismEnv)
		}
	}
	if len(stubs) == 0 {
		return nil
	}
	b := rt.NewHostModuleBuilder(extismEnv)
	for _, def := range stubs {
		_, name, _ := def.Import()
		called := &stubCalledError{module: extismEnv, name: name}
		fn := api.GoModuleFunc(func(context.Context, api.Module, []uint64) { panic(called) })
		b.NewFunctionBuilder().WithGoModuleFunction(fn, def.ParamTypes(), def.ResultTypes()).Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return &Error{Kind: ErrBadModule, Op: "load", Msg: "cannot stub " + extismEnv + " imports: " + err.Error(), Err: err}
	}
	return nil
}

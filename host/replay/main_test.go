package replay

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/ordinal-dev/ordinal/host/embedded"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/policies"
)

// testModule is the embedded module, compiled once for the package's tests; testExtended the extended
// one, for scenarios whose set names it (ordinal.dev/module: extended).
var testModule, testExtended *wasm.Module

func TestMain(m *testing.M) {
	ctx := context.Background()
	verifyEncodedObjects = true // every replay of the tests checks the encode-once rule
	world.VerifyOwnerGraph = true
	wasm.VerifyTrackedChanges = true // and every delta built from the world's changes, against the digests
	mod, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "loading the embedded module:", err)
		os.Exit(1)
	}
	testModule = mod
	if testExtended, err = wasm.Load(ctx, embedded.ExtendedModule(), wasm.Config{}); err != nil {
		fmt.Fprintln(os.Stderr, "loading the extended module:", err)
		os.Exit(1)
	}
	code := m.Run()
	mod.Close(ctx)
	testExtended.Close(ctx)
	os.Exit(code)
}

func testOptions() Options {
	return Options{Module: testModule, LoadModule: func(ctx context.Context, path string) (hostplan.Reconciler, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return wasm.Load(ctx, b, wasm.Config{})
	}, NamedModule: func(_ context.Context, name string) (hostplan.Reconciler, error) {
		if name != "extended" {
			return nil, fmt.Errorf("no module %q", name)
		}
		return testExtended, nil
	}, NamedPolicy: namedTestPolicy}
}

// testPolicies are the shipped policies (policies.Builtin), loaded once for the package's tests.
var (
	testPoliciesMu sync.Mutex
	testPolicies   = map[string]*wasm.Policy{}
)

func namedTestPolicy(ctx context.Context, name string) (policy.Module, error) {
	testPoliciesMu.Lock()
	defer testPoliciesMu.Unlock()
	if p := testPolicies[name]; p != nil {
		return p, nil
	}
	code, ok := policies.Builtin()[name]
	if !ok {
		return nil, fmt.Errorf("no policy %q", name)
	}
	p, err := wasm.LoadPolicy(ctx, code, wasm.Config{})
	if err != nil {
		return nil, err
	}
	testPolicies[name] = p
	return p, nil
}

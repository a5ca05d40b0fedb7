package wasm_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/policies"
)

func loadPolicy(t *testing.T, code []byte, cfg wasm.Config) *wasm.Policy {
	t.Helper()
	p, err := wasm.LoadPolicy(context.Background(), code, cfg)
	if err != nil {
		t.Fatalf("LoadPolicy: %v", err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// The shipped handoff policy loads, describes itself, and decides through wasm exactly as its Go does
// natively (policies/handoff's fixture tests): here it holds the primary's delete.
func TestPolicyLoadsAndEvaluates(t *testing.T) {
	p := loadPolicy(t, policies.Builtin()["handoff"], wasm.Config{})
	if d := p.Describe(); d.Policy != "handoff" || d.Kind != "policy" || d.ABI != 1 || p.Name() != "handoff" {
		t.Fatalf("describe %+v", d)
	}
	in := []byte(`{"abi":1,"from":0,"context":{},
	  "snapshot":{"abi":1,"now":"2026-11-26T10:00:00Z","statefulSet":{"metadata":{"name":"web"}},
	    "pods":[{"metadata":{"name":"web-1","labels":{"role":"primary"}}}]},
	  "plan":{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"default","name":"web-1"}],"requeueAfterSeconds":0,"events":[]}}`)
	out, err := p.Evaluate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"abi":1,"holds":[{"action":0,"reason":"RoleNotHandedOff","message":"pod web-1 still carries role=primary: waiting for the role to move to another pod (at most 10m0s more)","retryAfterSeconds":600}]}`
	if string(out) != want {
		t.Fatalf("answer %s\nwant   %s", out, want)
	}
	if err := schemacheck.ValidatePolicyAnswer(out); err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.ValidatePolicyDescribe(p.DescribeJSON()); err != nil {
		t.Fatal(err)
	}
}

// A reconcile module is not a policy, nor a policy a reconcile module.
func TestPolicyAndReconcileModulesAreNotInterchangeable(t *testing.T) {
	if _, err := wasm.LoadPolicy(context.Background(), embedded.Module(), wasm.Config{}); !errors.Is(err, wasm.ErrBadModule) {
		t.Fatalf("the reconcile module loaded as a policy: %v", err)
	}
	if _, err := wasm.Load(context.Background(), policies.Builtin()["handoff"], wasm.Config{}); !errors.Is(err, wasm.ErrBadModule) {
		t.Fatalf("a policy loaded as a reconcile module: %v", err)
	}
}

// A policy has a reconcile module's fences: a loop ends at the timeout, a trap and running out of memory are
// errors, an answer over the output limit is refused; the policy still answers the next call. So on either
// path: badpolicy has only the Extism exports, baddirect the direct ones too (abi/POLICY.md section 1.1).
func TestPolicyFences(t *testing.T) {
	for _, c := range []struct {
		module string
		direct bool
	}{{"badpolicy", false}, {"baddirect", true}} {
		t.Run(c.module, func(t *testing.T) { testPolicyFences(t, c.module, c.direct) })
	}
}

func testPolicyFences(t *testing.T, module string, direct bool) {
	code, err := os.ReadFile(filepath.Join("testdata", module+".wasm"))
	if err != nil {
		t.Fatalf("%v (rebuild with testdata/build.sh)", err)
	}
	// The 2 s Timeout ends the loop, which never ends on its own: how soon says nothing of the machine. For
	// the others it would be a wall-clock budget (the Extism path's oom case takes 1.9-2.2 s on a loaded
	// machine, and failed as a timeout), so they run under a 10-minute hang guard.
	cfg := wasm.Config{Timeout: 10 * time.Minute, MemoryLimitPages: 256, MaxOutputBytes: 64 << 10}
	bounded := loadPolicy(t, code, cfg)
	cfg.Timeout = 2 * time.Second
	looping := loadPolicy(t, code, cfg)
	if bounded.Direct() != direct || looping.Direct() != direct {
		t.Fatalf("called through its direct exports: %v, want %v", bounded.Direct(), direct)
	}
	for _, c := range []struct {
		input string
		want  error
	}{{"loop", wasm.ErrTimeout}, {"trap", wasm.ErrTrap}, {"oom", wasm.ErrOutOfMemory}, {"big", wasm.ErrBadModule}} {
		t.Run(c.input, func(t *testing.T) {
			p := bounded
			if c.input == "loop" {
				p = looping
			}
			out, err := p.Evaluate(context.Background(), []byte(`{"abi":1,"misbehave":"`+c.input+`"}`))
			if !errors.Is(err, c.want) || out != nil {
				t.Fatalf("err %v (out %d bytes), want %v", err, len(out), c.want)
			}
			out, err = p.Evaluate(context.Background(), []byte(`{"abi":1}`))
			if err != nil || !bytes.Equal(out, []byte(`{"abi":1,"holds":[]}`)) {
				t.Fatalf("the next call: %s, %v", out, err)
			}
		})
	}
}

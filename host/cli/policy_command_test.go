package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/policyfixture"
)

// `ordinal policy test` runs any build of a policy against its fixtures: the AssemblyScript window passes
// every fixture of policies/window, each named on its own line.
func TestPolicyTestPassesTheShippedFixtures(t *testing.T) {
	files, _ := filepath.Glob("../../policies/window/testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no fixtures under policies/window/testdata")
	}
	code, out, errs := run(t, "", "policy", "test", "../../policies/window/window-as.wasm", "../../policies/window/testdata", "--name", "window")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	for _, f := range files {
		if !strings.Contains(out, "PASS  "+filepath.Base(f)+"  ") {
			t.Errorf("no PASS line for %s:\n%s", filepath.Base(f), out)
		}
	}
	if !strings.HasPrefix(out, "policy window 0.1.0 ") || !strings.HasSuffix(out, fmt.Sprintf("\n%d fixtures, 0 failed\n", len(files))) {
		t.Errorf("output:\n%s", out)
	}
}

// A wrong answer fails its fixture (exit 5) and says what was answered; a file that is not a fixture is a
// usage error naming the file; a name the policy does not describe is one too.
func TestPolicyTestFailures(t *testing.T) {
	fixture, err := os.ReadFile("../../policies/window/testdata/inside-window.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx map[string]json.RawMessage
	if err := json.Unmarshal(fixture, &fx); err != nil {
		t.Fatal(err)
	}
	wrong := map[string]json.RawMessage{"input": fx["input"], "answer": json.RawMessage(`{"abi":1,"holds":[{"action":1,"reason":"R","message":"m"}]}`)}
	noAnswer := map[string]json.RawMessage{"input": fx["input"], "anwser": fx["answer"]}
	for _, c := range []struct {
		name, file, want string
		fixture          any
		args             []string
		code             int
	}{
		{"wrong answer", "wrong.json", "FAIL  wrong.json  \n        the answer is not the fixture's: answered {\"abi\":1,\"holds\":[]}", wrong, nil, ExitTestFailed},
		{"misspelt answer", "misspelt.json", `misspelt.json: not a fixture {"description", "input", "answer"}: json: unknown field "anwser"`, noAnswer, nil, ExitUsage},
		{"not JSON", "broken.json", "broken.json: not a fixture", "{", nil, ExitUsage},
		{"other name", "ok.json", `it is supplied as "freeze" and describes itself as "window"`, json.RawMessage(fixture), []string{"--name", "freeze"}, ExitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			b, _ := json.Marshal(c.fixture)
			if s, ok := c.fixture.(string); ok {
				b = []byte(s)
			}
			if err := os.WriteFile(filepath.Join(dir, c.file), b, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := run(t, "", append([]string{"policy", "test", "../../policies/window/window-as.wasm", dir}, c.args...)...)
			if code != c.code || !strings.Contains(out+errs, c.want) {
				t.Errorf("exit %d, want %d saying %q\nstdout %s\nstderr %s", code, c.code, c.want, out, errs)
			}
		})
	}
}

// What passes `ordinal policy test` passes the controller's gate of a supplied policy, and what fails the
// one fails the other: the ConfigMap's fixture array given to both.
func TestPolicyTestAgreesWithTheGate(t *testing.T) {
	ctx := context.Background()
	code, err := os.ReadFile("../wasm/testdata/badpolicy.wasm") // the policy "bad": holds nothing for plain input
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fixtures string
		pass     bool
	}{
		{`[{"description":"nothing held","input":{"abi":1},"answer":{"abi":1,"holds":[]}}]`, true},
		{`[{"input":{"abi":1},"answer":{"abi":1,"holds":[{"action":0,"reason":"R","message":"m"}]}}]`, false},
		{`[{"input":{"abi":1}}]`, false},
		{`[]`, false},
	} {
		file := filepath.Join(t.TempDir(), "bad.policy.fixtures.json")
		if err := os.WriteFile(file, []byte(c.fixtures), 0o644); err != nil {
			t.Fatal(err)
		}
		exit, out, errs := run(t, "", "policy", "test", "../wasm/testdata/badpolicy.wasm", file, "--name", "bad")
		r := policy.NewRegistry(func(ctx context.Context, code []byte) (*wasm.Policy, error) {
			return wasm.LoadPolicy(ctx, code, wasm.Config{})
		}, nil)
		r.Supply(map[string]policy.Supplied{"bad": {Code: code, Fixtures: []byte(c.fixtures)}})
		_, gateErr := r.Get(ctx, "bad")
		r.Close()
		if (exit == ExitOK) != c.pass || (gateErr == nil) != c.pass {
			t.Errorf("%s: policy test exit %d (%s%s), the gate %v; want both to pass: %v", c.fixtures, exit, out, errs, gateErr, c.pass)
		}
		if gateErr != nil && !errors.Is(gateErr, policy.ErrRefused) {
			t.Errorf("%s: the gate: %v", c.fixtures, gateErr)
		}
	}
	if _, err := policyfixture.ParseArray([]byte(`[]`)); err == nil {
		t.Error("an empty array of fixtures is read without an error")
	}
}

// `ordinal policy fixtures` writes a directory's fixtures as the array the ConfigMap carries, which `policy
// test` reads back as the same fixtures.
func TestPolicyFixturesBundle(t *testing.T) {
	code, out, errs := run(t, "", "policy", "fixtures", "../../policies/window/testdata")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	got, err := policyfixture.ParseArray([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want, err := policyfixture.ReadDir("../../policies/window/testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d fixtures in the array, %d files", len(got), len(want))
	}
	for i := range want {
		if got[i].Description != want[i].Description || !policyfixture.SameAnswer(got[i].Input, want[i].Input) || !policyfixture.SameAnswer(got[i].Answer, want[i].Answer) {
			t.Errorf("fixture %d is not %s", i, want[i].Name)
		}
	}
	bundle := filepath.Join(t.TempDir(), "window.policy.fixtures.json")
	if err := os.WriteFile(bundle, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "", "policy", "test", "../../policies/window/window-as.wasm", bundle, "--name", "window"); code != ExitOK {
		t.Errorf("policy test of the bundle: exit %d, stderr %s", code, errs)
	}
	if code, _, errs := run(t, "", "policy", "fixtures", t.TempDir()); code != ExitUsage || !strings.Contains(errs, "no fixtures in") {
		t.Errorf("an empty directory: exit %d, stderr %s", code, errs)
	}
}

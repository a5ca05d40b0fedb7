// Package nodehost_test checks that the Node.js host in this directory (Extism JavaScript SDK, no Go
// involved) gets byte-for-byte the plans the Go host gets. The Node host's own tests (`node --test`,
// run by `make test-node`) check every conformance case as JSON values; this test compares raw
// bytes, which only the Go host can provide, on a sample: the first case of every 4th conformance group,
// malformed snapshots, and the describe document.
package nodehost_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// nodeHost returns the node binary, skipping the test when the Node host cannot run here
// (`make test-node` installs node and the SDK; `make test` runs it before the Go tests).
func nodeHost(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed (make test-node installs it): ", err)
	}
	if _, err := os.Stat("node_modules/@extism/extism/package.json"); err != nil {
		t.Skip("Extism JS SDK not installed: run `npm ci` in examples/node-host (make test-node does)")
	}
	return node
}

// runNode runs reconcile.mjs with the input on stdin and returns stdout and the exit code.
func runNode(t *testing.T, node string, input []byte, args ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(node, append([]string{"reconcile.mjs"}, args...)...)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("running node: %v", err)
		}
		code = exit.ExitCode()
	}
	if code == 4 || code == 1 {
		t.Fatalf("node host failed (exit %d): %s", code, stderr.String())
	}
	return out, code
}

func TestNodeHostMatchesGoHostBytes(t *testing.T) {
	node := nodeHost(t)
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })

	cases, err := conformance.All()
	if err != nil {
		t.Fatal(err)
	}
	// The first case of every 4th group (a node process per input; `make test-node` runs all of
	// them in one process and compares them as values).
	inputs := map[string][]byte{}
	groups := 0
	for i, c := range cases {
		group, _, _ := strings.Cut(c.Name, "/")
		if i > 0 && strings.HasPrefix(cases[i-1].Name, group+"/") {
			continue
		}
		if groups%4 == 0 {
			inputs[c.Name] = c.Snapshot
		}
		groups++
	}
	if groups < 10 {
		t.Fatalf("only %d conformance groups found", groups)
	}
	examples, _ := filepath.Glob("../*.snapshot.json")
	for _, e := range examples {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		inputs["examples/"+filepath.Base(e)] = b
	}
	for name, s := range map[string]string{
		"empty": "", "truncated": `{"abi":1,`, "abi2": `{"abi":2}`, "no-statefulSet": `{"abi":1,"now":"2026-05-01T12:00:00Z"}`,
		"unicode": `{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":{"metadata":{"name":"wéb\u2028<&>"}}}`,
	} {
		inputs["malformed/"+name] = []byte(s)
	}

	for name, input := range inputs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := m.Reconcile(ctx, input)
			if err != nil {
				t.Fatal(err)
			}
			got, code := runNode(t, node, input)
			if !bytes.Equal(got, append(want, '\n')) {
				t.Errorf("Node host plan differs from the Go host's (exit %d)\n node: %.300s\n   go: %.300s", code, got, want)
			}
		})
	}

	t.Run("describe", func(t *testing.T) {
		got, _ := runNode(t, node, nil, "--describe")
		if want := m.DescribeJSON(); !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("describe differs\n node: %s\n   go: %s", got, want)
		}
	})
}

package cli

import (
	"bytes"
	"strings"
	"testing"
)

// endless is standard input that never ends (2 GB of zeros once reached 4.5 GB of RSS before refusal).
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.read += int64(len(p))
	return len(p), nil
}

// Every input is read at most to its limit plus one byte, and the error says which limit and how to
// raise it. (Issue 11 hole 6: `-f /dev/zero`, `--module /dev/zero` and `replay /dev/zero` grew until
// killed.)
func TestBoundedInputs(t *testing.T) {
	in := &endless{}
	var out, errb bytes.Buffer
	code := Main([]string{"reconcile", "-f", "-", "--memory-limit-mib", "2", "--cache-dir", ""}, in, &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "larger than the 2 MiB limit (raise it with --memory-limit-mib)") {
		t.Fatalf("endless stdin: exit %d, stderr %s", code, errb.String())
	}
	if in.read > 4<<20 {
		t.Fatalf("read %d bytes of an endless standard input for a 2 MiB limit", in.read)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reconcile", "-f", "/dev/zero", "--memory-limit-mib", "2"}, "snapshot /dev/zero is larger than the 2 MiB limit"},
		{[]string{"reconcile", "-f", "../../examples/web-fresh.snapshot.json", "--module", "/dev/zero"}, "module /dev/zero is larger than the 64 MiB limit"},
		{[]string{"replay", "/dev/zero"}, "scenario /dev/zero is larger than the 64 MiB limit"},
		{[]string{"preview", "-f", "/dev/zero", "--from", "../../examples/web-fresh.snapshot.json", "--memory-limit-mib", "2"}, "edited StatefulSet /dev/zero is larger than the 2 MiB limit"},
		{[]string{"preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", "/dev/zero", "--memory-limit-mib", "2"}, "snapshot /dev/zero is larger than the 2 MiB limit"},
	} {
		code, stdout, stderr := run(t, "", tc.args...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/internal/yamljson"
)

// endless is standard input that never ends (2 GB of zeros once reached 4.5 GB of RSS before refusal):
// the byte fill over and over.
type endless struct {
	fill byte
	read int64
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.fill
	}
	e.read += int64(len(p))
	return len(p), nil
}

// Every input is read at most to its limit plus one byte, and the error says which limit and how to
// raise it. (Issue 11 hole 6: `-f /dev/zero`, `--module /dev/zero` and `replay /dev/zero` grew until
// killed.)
func TestBoundedInputs(t *testing.T) {
	for _, tc := range []struct {
		fill byte
		want string
	}{
		{'{', "larger than the 2 MiB limit (raise it with --memory-limit-mib)"},                // JSON, endless
		{' ', "larger than the 262144-byte limit for YAML (raise it with --memory-limit-mib)"}, // YAML, endless
	} {
		in := &endless{fill: tc.fill}
		var out, errb bytes.Buffer
		code := Main([]string{"reconcile", "-f", "-", "--memory-limit-mib", "2", "--cache-dir", ""}, in, &out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Fatalf("endless stdin: exit %d, stderr %s", code, errb.String())
		}
		if in.read > 4<<20 {
			t.Fatalf("read %d bytes of an endless standard input for a 2 MiB limit", in.read)
		}
	}
	large := filepath.Join(t.TempDir(), "large.json")
	if err := os.WriteFile(large, nil, 0o600); err != nil || os.Truncate(large, 3<<20) != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reconcile", "-f", large, "--memory-limit-mib", "2"}, "is larger than the 2 MiB limit"},
		{[]string{"reconcile", "-f", "../../examples/web-fresh.snapshot.json", "--module", "/dev/zero"}, "module /dev/zero is larger than the 64 MiB limit"},
		{[]string{"preview", "-f", large, "--from", "../../examples/web-fresh.snapshot.json", "--memory-limit-mib", "2"}, "is larger than the 2 MiB limit"},
		{[]string{"preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", large, "--memory-limit-mib", "2"}, "is larger than the 2 MiB limit"},
	} {
		code, stdout, stderr := run(t, "", tc.args...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// Issue 32, finding 10: `reconcile -f /dev/zero` was refused only after reading the whole 256 MiB limit
// (~610 MB, 12-20 s on a loaded machine): zeros could have been YAML until the end. A NUL byte, which
// neither JSON nor YAML text holds, is now refused after the first 4 KiB, by every command that reads a
// document, with an error that says what the input is not.
func TestBinaryInputRefusedAtOnce(t *testing.T) {
	in := &endless{}
	var out, errb bytes.Buffer
	code := -1
	n := allocated(func() { code = Main([]string{"reconcile", "-f", "-", "--cache-dir", ""}, in, &out, &errb) })
	if code != ExitUsage || !strings.Contains(errb.String(), "snapshot on standard input is not JSON or YAML: byte 0 is NUL") {
		t.Fatalf("endless zeros on stdin: exit %d, stderr %s", code, errb.String())
	}
	if in.read > 64<<10 || n > 4<<20 {
		t.Fatalf("endless zeros on stdin: read %d bytes, allocated %d, refusing them", in.read, n)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reconcile", "-f", "/dev/zero"}, "snapshot /dev/zero is not JSON or YAML"},
		{[]string{"replay", "/dev/zero"}, "scenario /dev/zero is not JSON or YAML"},
		{[]string{"preview", "-f", "/dev/zero", "--from", "../../examples/web-fresh.snapshot.json"}, "edited StatefulSet /dev/zero is not JSON or YAML"},
		{[]string{"preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", "/dev/zero"}, "snapshot /dev/zero is not JSON or YAML"},
		{[]string{"test", "/dev/zero"}, "test file /dev/zero is not JSON or YAML"},
	} {
		var code int
		var stdout, stderr string
		n := allocated(func() { code, stdout, stderr = run(t, "", tc.args...) })
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, stdout, stderr, tc.want)
		}
		if n > 4<<20 {
			t.Errorf("%v: allocated %d bytes refusing /dev/zero", tc.args, n)
		}
	}
}

// podList is a kubectl List of a StatefulSet and its pods, as JSON, of about size bytes.
func podList(t *testing.T, size int) []byte {
	t.Helper()
	set := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "u-web"},
		"spec": map[string]any{"replicas": 3, "serviceName": "web", "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.25"}}}}}}
	pod := func(n int) any {
		name := fmt.Sprintf("web-%d", n)
		return map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": "default", "uid": "u-" + name,
				"labels":          map[string]any{"app": "web", "controller-revision-hash": "web-6b7f8c9d5", "statefulset.kubernetes.io/pod-name": name},
				"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u-web", "controller": true}}},
			"spec": map[string]any{"hostname": name, "subdomain": "web", "nodeName": "node-1",
				"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.25", "ports": []any{map[string]any{"containerPort": 80, "name": "web"}}}}},
			"status": map[string]any{"phase": "Running", "podIP": "10.0.0.1", "conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"},
				map[string]any{"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"}}}}
	}
	one, _ := json.Marshal(pod(100000))
	items := []any{set}
	for n := 0; n < size/(len(one)+1)-1; n++ {
		items = append(items, pod(n))
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	return b
}

// allocated is the bytes the heap allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Issue 32, finding 3: YAML took 30-46 times its size in memory to read (an 18 MB List: 495 MiB; 106 MB:
// 4.8 GB), so the input limit did not bound memory. A YAML input is now read to an eighth of the limit
// JSON has (yamljson.Limit) and refused, unparsed, beyond it: reading an input of either format, up to
// its limit and past it, allocates at most a small multiple of the input limit.
func TestYAMLMemoryBoundedByTheInputLimit(t *testing.T) {
	const limit = 2 << 20 // --memory-limit-mib 2
	opts := &moduleOptions{memoryLimitMB: limit >> 20, timeout: time.Second}
	read := func(doc []byte) (err error) {
		b, err := opts.readDocument(bytes.NewReader(doc), "-", "snapshot")
		if err == nil {
			_, err = snapshotInput(recognise(b, limit), "-", setChoice{}, fieldValidation{})
		}
		return err
	}
	toYAML := func(js []byte) []byte {
		y, err := yaml.JSONToYAML(js)
		if err != nil {
			t.Fatal(err)
		}
		return y
	}
	small, large := toYAML(podList(t, limit/16)), toYAML(podList(t, limit*3/4))
	if len(small) > limit/8 || len(large) > limit || len(large) < limit*3/4 {
		t.Fatalf("the YAML Lists are %d and %d bytes, not within the YAML and the JSON limit", len(small), len(large))
	}
	for _, tc := range []struct {
		name    string
		doc     []byte
		refused string
	}{
		{"YAML within its limit", small, ""},
		{"YAML within the JSON limit", large, "larger than the 262144-byte limit for YAML"},
		{"JSON within its limit", podList(t, limit-limit/16), ""},
	} {
		var err error
		n := allocated(func() { err = read(tc.doc) })
		t.Logf("%s: %d bytes read, %d allocated (%.1f times the input limit): %v", tc.name, len(tc.doc), n, float64(n)/limit, err)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "as JSON")):
			t.Errorf("%s: got %v, want it refused (%q) suggesting JSON", tc.name, err, tc.refused)
		}
		// JSON's typed decoding allocates about 17 times a compact List's size in all (its peak is a third of
		// that); YAML allocated 43 times its size.
		if n > 20*limit {
			t.Errorf("%s: reading %d bytes allocated %d, more than 20 times the %d-byte input limit", tc.name, len(tc.doc), n, limit)
		}
	}
}

// A YAML List is read a piece at a time (yamljson: each item on its own), so it costs about what the same
// List as JSON costs, not the 30 to 60 times its size a YAML library's whole conversion took (a 30 MB List:
// 880 MB of RSS before, 280 MB after). Its JSON is byte for byte the whole conversion's.
func TestYAMLListReadAPieceAtATime(t *testing.T) {
	const limit = 32 << 20
	opts := &moduleOptions{memoryLimitMB: limit >> 20, timeout: time.Second}
	js := podList(t, 3<<20)
	doc, err := yaml.JSONToYAML(js)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(doc)) > yamljson.Limit(limit) || len(doc) < 1<<20 {
		t.Fatalf("the YAML List is %d bytes, not within the YAML limit and above a MiB", len(doc))
	}
	var read []byte
	n := allocated(func() { read, err = opts.readDocument(bytes.NewReader(doc), "-", "snapshot") })
	if err != nil {
		t.Fatal(err)
	}
	whole, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		t.Fatal(err)
	}
	if in := recognise(read, limit); in.kind != inputList || !bytes.Equal(in.json, whole) {
		t.Fatalf("the List read as %v, its JSON the whole conversion's: %v", in.kind, bytes.Equal(in.json, whole))
	}
	t.Logf("a %d-byte YAML List: %d bytes allocated to read (%.1f times its size)", len(doc), n, float64(n)/float64(len(doc)))
	if n > 8*uint64(len(doc)) {
		t.Errorf("reading a %d-byte YAML List allocated %d bytes, more than 8 times its size", len(doc), n)
	}
}

// A List is read one item at a time and only the set's objects are kept (snapshot.Selection): a 33 MB
// YAML List of 336,000 small pods took 1.35 GB, 40 times its size, decoded whole. A set with more pods
// than a snapshot holds in the module's memory (twice the replicas a replay takes with it: 64 at 1 MiB)
// is refused once that many are kept, naming the bound; pods of another namespace are never counted.
func TestListKeepsOnlyWhatASnapshotHolds(t *testing.T) {
	list := func(mine, strangers int) string {
		items := []any{map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
			"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "u-web"},
			"spec": map[string]any{"replicas": 3, "serviceName": "web", "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.25"}}}}}}}
		pod := func(ns string, n int) any {
			return map[string]any{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": fmt.Sprintf("web-%d", n), "namespace": ns, "labels": map[string]any{"app": "web"}}}
		}
		for n := range mine {
			items = append(items, pod("default", n))
		}
		for n := range strangers {
			items = append(items, pod("other", n))
		}
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
		return string(b)
	}
	const refusal = "the List holds more than 64 Pods of StatefulSet default/web, more than a snapshot holds with the module's 1 MiB memory limit"
	code, _, errs := run(t, list(65, 0), "reconcile", "--memory-limit-mib", "1", "-f", "-")
	if code != ExitUsage || !strings.Contains(errs, refusal) {
		t.Errorf("65 pods of the set at 1 MiB: exit %d, want %d and %q:\n%s", code, ExitUsage, refusal, errs)
	}
	if _, _, errs := run(t, list(64, 1000), "reconcile", "--memory-limit-mib", "1", "-f", "-"); strings.Contains(errs, "more than 64") {
		t.Errorf("64 pods of the set and 1000 of another namespace were refused: %s", errs)
	}
}

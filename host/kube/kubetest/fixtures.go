// Package kubetest holds the host's test objects (objects.go) and reads, for tests, host/kube's fixtures of kube-apiserver's own answers
// (host/kube/testdata/apiserver-defaults, made by `make apiserver-defaults`): host/kube holds its defaulting
// to them, and host/replay/world its in-memory API server's creates.
package kubetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Fixture is one file of testdata/apiserver-defaults: a manifest and kube-apiserver's answer to its
// server-side dry-run create.
type Fixture struct {
	Name, Kind    string
	Input, Answer jsonobj.Obj
}

// Fixtures reads the whole corpus from dir (host/kube/testdata/apiserver-defaults, relative to the test's
// package).
func Fixtures(t testing.TB, dir string) []Fixture {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 200 {
		t.Fatalf("%d fixtures in %s, want the corpus of at least 200", len(files), dir)
	}
	var out []Fixture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fx struct {
			Kind          string
			Input, Answer json.RawMessage
		}
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		in, err := jsonobj.DecodeObj(fx.Input)
		if err != nil {
			t.Fatalf("%s: input: %v", f, err)
		}
		answer, err := jsonobj.DecodeObj(fx.Answer)
		if err != nil {
			t.Fatalf("%s: answer: %v", f, err)
		}
		out = append(out, Fixture{strings.TrimSuffix(filepath.Base(f), ".json"), fx.Kind, in, answer})
	}
	return out
}

// WithoutAdmission takes out of an API server's answer what its default admission plugins added on
// create, which neither the host's defaulting nor the in-memory API server of replays models:
// ServiceAccount (the token volume and its mounts, the default account), DefaultTolerationSeconds,
// Priority (priority and preemptionPolicy), StorageObjectInUseProtection's finalizer and
// DefaultStorageClass. None of them touches a StatefulSet, so none changes a revision.
func WithoutAdmission(kind string, input, answer jsonobj.Obj) {
	switch kind {
	case "Pod":
		spec := jsonobj.GetObj(answer, "spec")
		notToken := func(o jsonobj.Obj) bool { return !strings.HasPrefix(jsonobj.GetStr(o, "name"), "kube-api-access-") }
		keepOnly(spec, "volumes", notToken)
		for _, key := range []string{"initContainers", "containers"} {
			for _, c := range jsonobj.GetArr(spec, key) {
				keepOnly(c.(jsonobj.Obj), "volumeMounts", notToken)
			}
		}
		if jsonobj.GetStr(input, "spec.serviceAccountName") == "" && jsonobj.GetStr(input, "spec.serviceAccount") == "" {
			delete(spec, "serviceAccountName")
			delete(spec, "serviceAccount")
		}
		keepOnly(spec, "tolerations", func(o jsonobj.Obj) bool {
			k := jsonobj.GetStr(o, "key")
			return k != "node.kubernetes.io/not-ready" && k != "node.kubernetes.io/unreachable"
		})
		delete(spec, "priority")
		delete(spec, "preemptionPolicy")
	case "PersistentVolumeClaim":
		delete(jsonobj.GetObj(answer, "metadata"), "finalizers")
		if _, ok := jsonobj.GetObj(input, "spec")["storageClassName"]; !ok {
			delete(jsonobj.GetObj(answer, "spec"), "storageClassName") // DefaultStorageClass: the cluster's default class
		}
	}
}

// keepOnly filters the array o[key] of objects, removing the key when nothing is left.
func keepOnly(o jsonobj.Obj, key string, keep func(jsonobj.Obj) bool) {
	var out []any
	for _, v := range jsonobj.GetArr(o, key) {
		if keep(v.(jsonobj.Obj)) {
			out = append(out, v)
		}
	}
	if out == nil {
		delete(o, key)
	} else {
		o[key] = out
	}
}

// JSON is v as encoding/json writes it (map keys sorted), for comparing a fixture's answer with jsoncmp.
func JSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The host's defaulting gives what the real kube-apiserver v1.37.1 stored for every manifest of the corpus
// in testdata/apiserver-defaults (its answers to server-side dry-run creates, made by `make
// apiserver-defaults`), less what its admission plugins add (withoutAdmission).
// apiServerFixture is one file of testdata/apiserver-defaults: a manifest and kube-apiserver's answer.
type apiServerFixture struct {
	Name, Kind    string
	Input, Answer Obj
}

// apiServerFixtures reads the whole corpus.
func apiServerFixtures(t *testing.T) []apiServerFixture {
	t.Helper()
	files, _ := filepath.Glob("../../testdata/apiserver-defaults/*.json")
	if len(files) < 200 {
		t.Fatalf("%d fixtures in testdata/apiserver-defaults, want the corpus of at least 200", len(files))
	}
	var out []apiServerFixture
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
		out = append(out, apiServerFixture{strings.TrimSuffix(filepath.Base(f), ".json"), fx.Kind, in, answer})
	}
	return out
}

func TestDefaultingMatchesRealAPIServer(t *testing.T) {
	for _, fx := range apiServerFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			in, want := fx.Input, fx.Answer
			// Through the in-memory API server's create, as replays and previews make objects.
			api := NewAPIServer(jsonobj.GetStr(in, "metadata.namespace"), NewClock(time.Unix(0, 0)))
			if err := api.Create(fx.Kind, jsonobj.CloneObj(in)); err != nil {
				t.Fatalf("in-memory API server refused what kube-apiserver accepted: %v", err)
			}
			got := api.Get(fx.Kind, jsonobj.GetStr(in, "metadata.name"))
			// Type meta is a property of the wire (informers drop it); the rest is server bookkeeping.
			for _, o := range []Obj{got, want} {
				delete(o, "apiVersion")
				delete(o, "kind")
				for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation"} {
					delete(jsonobj.GetObj(o, "metadata"), k)
				}
			}
			withoutAdmission(fx.Kind, in, want)
			if d := jsoncmp.Diff(mustJSON(want), mustJSON(got)); d != "" {
				t.Errorf("defaulting differs from kube-apiserver's answer (want = API server, got = host):\n%s", d)
			}
		})
	}
}

// withoutAdmission takes out of an API server's answer what its default admission plugins added on
// create, which the in-memory API server of replays does not model: ServiceAccount (the token volume
// and its mounts, the default account), DefaultTolerationSeconds, Priority (priority and
// preemptionPolicy), StorageObjectInUseProtection's finalizer and DefaultStorageClass. None of them
// touches a StatefulSet, so none changes a revision.
func withoutAdmission(kind string, input, answer Obj) {
	switch kind {
	case "Pod":
		spec := jsonobj.GetObj(answer, "spec")
		notToken := func(o Obj) bool { return !strings.HasPrefix(jsonobj.GetStr(o, "name"), "kube-api-access-") }
		keepOnly(spec, "volumes", notToken)
		for _, key := range []string{"initContainers", "containers"} {
			for _, c := range jsonobj.GetArr(spec, key) {
				keepOnly(c.(Obj), "volumeMounts", notToken)
			}
		}
		if jsonobj.GetStr(input, "spec.serviceAccountName") == "" && jsonobj.GetStr(input, "spec.serviceAccount") == "" {
			delete(spec, "serviceAccountName")
			delete(spec, "serviceAccount")
		}
		keepOnly(spec, "tolerations", func(o Obj) bool {
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
func keepOnly(o Obj, key string, keep func(Obj) bool) {
	var out []any
	for _, v := range jsonobj.GetArr(o, key) {
		if keep(v.(Obj)) {
			out = append(out, v)
		}
	}
	if out == nil {
		delete(o, key)
	} else {
		o[key] = out
	}
}

package annotation_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/annotation"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// The guest defines the extensions' keys and values (guest/statefulset); annotation.Keys repeats them for
// the hosts. Held to the extended module here, so the two cannot drift: its describe's extensions are
// Keys' (name and key), every ordinal.dev/ key the guest's source spells is a key of Keys (or the pod
// annotation it writes), and for each key with a list of values the module takes each of them without an
// InvalidAnnotation and refuses another with one that lists them.
func TestKeysAreTheExtendedModules(t *testing.T) {
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.ExtendedModule(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	byKey := map[string]annotation.Key{}
	for _, k := range annotation.Keys {
		byKey[k.Key] = k
	}

	exts := m.Describe().Extensions
	for _, e := range exts {
		if k, ok := byKey[e.Annotation]; !ok || k.Extension != e.Name || k.Instead == "" {
			t.Errorf("the module's extension %s (%s) is not a key of annotation.Keys that turns it on: %+v", e.Name, e.Annotation, k)
		}
	}
	for _, k := range annotation.Keys {
		if k.Extension != "" && !slices.ContainsFunc(exts, func(e abi.Extension) bool { return e.Name == k.Extension }) {
			t.Errorf("key %s names the extension %s, which the extended module does not describe", k.Key, k.Extension)
		}
	}

	files, err := filepath.Glob("../../guest/statefulset/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the guest's source: %v", err)
	}
	spelt := regexp.MustCompile(`"(ordinal\.dev/[^"]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range spelt.FindAllStringSubmatch(string(src), -1) {
			if _, ok := byKey[s[1]]; !ok && s[1] != abi.AnnotationInPlaceUpdate {
				t.Errorf("%s spells %s, which annotation.Keys lacks", filepath.Base(f), s[1])
			}
		}
	}

	for _, k := range annotation.Keys {
		if k.Extension == "" || k.Values == nil {
			continue
		}
		for _, v := range append(slices.Clone(k.Values), "Bogus") {
			ann := map[string]string{k.Key: v}
			if k.Key == abi.AnnotationOnProgressDeadline { // it modifies a deadline
				ann[abi.AnnotationProgressDeadlineSeconds] = "600"
			}
			var refusal string
			for _, ev := range events(t, m, ann) {
				if ev.Reason == abi.EventInvalidAnnotation && strings.HasPrefix(ev.Message, k.Key+": ") {
					refusal = ev.Message
				}
			}
			switch {
			case v != "Bogus" && refusal != "":
				t.Errorf("%s: %q is in annotation.Keys' list, and the module refuses it: %s", k.Key, v, refusal)
			case v == "Bogus" && refusal == "":
				t.Errorf("%s: %q: the module does not refuse it", k.Key, v)
			case v == "Bogus" && !sameList(refusal, k):
				t.Errorf("%s: the module's refusal %q lists other values than annotation.Keys' %v", k.Key, refusal, k.Values)
			}
		}
	}
}

// sameList reports whether the module's refusal of "Bogus" (`KEY: "Bogus" is none of A, B, C: ...` or
// `is neither "A" nor "B": ...`) lists exactly k's values.
func sameList(refusal string, k annotation.Key) bool {
	list, ok := strings.CutPrefix(refusal, k.Key+`: "Bogus" is `)
	if i := strings.Index(list, ":"); ok && i >= 0 {
		list = list[:i]
	}
	for _, w := range k.Values {
		if !strings.Contains(list, w) {
			return false
		}
		list = strings.Replace(list, w, "", 1)
	}
	// what is left is the list's words and punctuation, no other value
	return ok && strings.Trim(strings.NewReplacer("none of", "", "neither", "", "nor", "", `"`, "", ",", "").Replace(list), " ") == ""
}

// events are the events of the module's plan for a set of one replica with these annotations.
func events(t *testing.T, m *wasm.Module, ann map[string]string) []abi.Event {
	t.Helper()
	set := kubetest.Set()
	set.Spec.Replicas = ptr.To[int32](1)
	set.Annotations = ann
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = kube.DefaultStatefulSetJSON(b); err != nil {
		t.Fatal(err)
	}
	var defaulted appsv1.StatefulSet
	if err := json.Unmarshal(b, &defaulted); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Build(snapshot.Objects{Set: &defaulted}, snapshot.StatefulSetTarget, time.Unix(1_800_000_000, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Reconcile(context.Background(), snap.JSON)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := hostplan.Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	return plan.Events
}

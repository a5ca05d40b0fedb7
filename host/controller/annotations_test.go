package controller

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	"github.com/ordinal-dev/ordinal/host/module"
)

// The controller says what previews say of a set's ordinal.dev/ annotations its module will not act on as
// asked (annotation.Check): a Warning event per finding, once per generation, module and findings, not on
// every sync of the set; a new value or a fix and its return are news again. A value the module itself
// reads is the module's to refuse (its InvalidAnnotation), not repeated by the host.
func TestControllerWarnsOfAnnotationsItsModuleIgnores(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := loadModule(ctx, embedded.Module())
	if err != nil {
		t.Fatal(err)
	}
	active := &module.Ref{}
	active.Install(m, module.InfoOf(m), func() { m.Close(ctx) })
	registry := module.NewRegistry(loadModule, map[string][]byte{"extended": embedded.ExtendedModule()})
	defer registry.Close()
	set := defaulted(t, kubetest.Set())
	set.Spec.Replicas = ptr.To[int32](0)
	set.Annotations = map[string]string{abi.AnnotationPodUpdatePolicy: abi.PodUpdateInPlaceOnly}
	c := newFakeController(t, ctx, active, &fakeAPI{}, set)
	c.cfg.Modules = registry
	rec := record.NewFakeRecorder(100)
	c.recorder = rec

	// syncs syncs the set n times and returns the events recorded, "Warning Reason" first in each.
	syncs := func(n int) []string {
		t.Helper()
		for range n {
			c.consistency.Clear(types.NamespacedName{Namespace: "ns", Name: "web"}, "") // the fake API's answers never reach the informers
			if _, err := c.sync(ctx, "ns/web"); err != nil {
				t.Fatal(err)
			}
		}
		var out []string
		for len(rec.Events) > 0 {
			out = append(out, <-rec.Events)
		}
		return out
	}
	// annotate gives the set these annotations, once the informer shows them.
	annotate := func(ann map[string]string) {
		t.Helper()
		cur, err := c.client.AppsV1().StatefulSets("ns").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Annotations = ann
		// as the API server does on every write (the fake does not): the controller keeps a set's encoding per
		// resourceVersion
		rv, _ := strconv.Atoi(cur.ResourceVersion)
		cur.ResourceVersion = strconv.Itoa(rv + 1)
		if _, err := c.client.AppsV1().StatefulSets("ns").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute) // the fake's watch delivers asynchronously; no timing is asserted
		for {
			if got, err := c.setsIn("ns").Get("web"); err == nil && maps.Equal(got.Annotations, ann) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the informer never showed the annotations %v", ann)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// want checks that events are exactly one per reason, each containing its words.
	want := func(events []string, reasons map[string][]string) {
		t.Helper()
		var got []string
		for _, e := range events {
			if f := strings.Fields(e); len(f) > 1 && f[0] == "Warning" && f[1] != "InvalidAnnotation" { // the module's own
				got = append(got, f[1])
			}
		}
		slices.Sort(got)
		if w := slices.Sorted(maps.Keys(reasons)); !slices.Equal(got, w) {
			t.Fatalf("warning events %q, want one each of %v", events, w)
		}
		for reason, words := range reasons {
			for _, e := range events {
				if !strings.HasPrefix(e, "Warning "+reason+" ") {
					continue
				}
				for _, s := range words {
					if !strings.Contains(e, s) {
						t.Errorf("event %q does not say %q", e, s)
					}
				}
			}
		}
	}

	// The faithful module: pod-update-policy is ignored. Said once over three syncs.
	want(syncs(3), map[string][]string{
		"ExtensionIgnored": {abi.AnnotationPodUpdatePolicy, `"InPlaceOnly"`, "in-place-update", abi.AnnotationModule + ": extended", "recreated"},
	})

	// Another value: said again.
	annotate(map[string]string{abi.AnnotationPodUpdatePolicy: abi.PodUpdateInPlaceIfPossible})
	want(syncs(2), map[string][]string{"ExtensionIgnored": {`"InPlaceIfPossible"`}})

	// The extended module has the extension: nothing to say.
	annotate(map[string]string{abi.AnnotationModule: "extended", abi.AnnotationPodUpdatePolicy: abi.PodUpdateInPlaceIfPossible})
	want(syncs(2), nil)

	// Back on the faithful module, then fixed, then broken again the same way: said each time it is news.
	annotate(map[string]string{abi.AnnotationPaused: "true"})
	want(syncs(2), map[string][]string{"ExtensionIgnored": {abi.AnnotationPaused, "not paused"}})
	annotate(map[string]string{abi.AnnotationPaused: "false"})
	want(syncs(1), nil)
	annotate(map[string]string{abi.AnnotationPaused: "true"})
	want(syncs(2), map[string][]string{"ExtensionIgnored": {abi.AnnotationPaused, "not paused"}})

	// A misspelt key is read by nothing: said once, with the key meant.
	annotate(map[string]string{abi.AnnotationModule: "extended", "ordinal.dev/pod-updte-policy": "InPlaceOnly"})
	want(syncs(3), map[string][]string{"UnknownAnnotation": {"ordinal.dev/pod-updte-policy", "did you mean " + abi.AnnotationPodUpdatePolicy + "?"}})

	// A value outside the extension's list, on a module without it: ignored, and not one it takes.
	annotate(map[string]string{abi.AnnotationPodUpdatePolicy: "InPlace"})
	want(syncs(2), map[string][]string{
		"ExtensionIgnored":      {`"InPlace"`},
		"InvalidExtensionValue": {`"InPlace"`, "ReCreate, InPlaceIfPossible, InPlaceOnly"},
	})

	// Many misspelt keys: three events, the last naming the rest.
	annotate(map[string]string{"ordinal.dev/a": "1", "ordinal.dev/b": "1", "ordinal.dev/c": "1", "ordinal.dev/d": "1", "ordinal.dev/e": "1"})
	if events := syncs(2); len(events) != 3 || !strings.Contains(events[2], "(and 2 more: UnknownAnnotation ordinal.dev/d, UnknownAnnotation ordinal.dev/e;") {
		t.Errorf("events %q: want three, the last naming the two more", events)
	}
	// A scale (a new generation, the annotations as they were) says nothing again.
	cur, err := c.client.AppsV1().StatefulSets("ns").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Replicas = ptr.To[int32](0)
	cur.Generation++
	rv, _ := strconv.Atoi(cur.ResourceVersion)
	cur.ResourceVersion = strconv.Itoa(rv + 1)
	if _, err := c.client.AppsV1().StatefulSets("ns").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) { // the fake's watch is asynchronous
		if got, err := c.setsIn("ns").Get("web"); err == nil && got.Generation == cur.Generation {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the informer never showed the new generation")
		}
	}
	want(syncs(2), nil)

	// The same value on the extended module: the host says nothing; the module refuses the value itself.
	annotate(map[string]string{abi.AnnotationModule: "extended", abi.AnnotationPodUpdatePolicy: "InPlace"})
	events := syncs(2)
	want(events, nil)
	if !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, "Warning InvalidAnnotation ") }) {
		t.Errorf("events %q: want the module's InvalidAnnotation", events)
	}
}

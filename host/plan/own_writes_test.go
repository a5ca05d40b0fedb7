package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/plan"
)

func sentResourceVersion(t *testing.T, a abi.Action) string {
	t.Helper()
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(a.Object, &o); err != nil {
		t.Fatal(err)
	}
	return o.Metadata.ResourceVersion
}

// A sync that updates a claim twice with the same bytes (a pending pod's claims: UpdateStatefulPod repeats
// UpdatePodClaimForRetentionPolicy) sends the second at the resourceVersion its first returned: the
// snapshot's would be refused with a Conflict against the sync's own write. Other bytes are sent as planned.
func TestApplyRebasesARepeatedUpdateOnItsOwnWrite(t *testing.T) {
	base := filepath.Join("..", "..", "internal", "conformance", "cases", "write-failures", "sim-fresh-parallel-start3-two-claims.step-01.first")
	snap, err := os.ReadFile(base + ".snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	scope, err := firewall.ScopeFromSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(base + ".plan.json")
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := plan.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	first := upstream.Actions[0] // update PersistentVolumeClaim data-web-3: the retention policy's owner
	first.Error = ""             // the case reports it refused; here it is written
	if first.Verb != abi.VerbUpdate || first.Kind != abi.KindPersistentVolumeClaim {
		t.Fatalf("the case's first action is %s %s, want a claim update", first.Verb, first.Kind)
	}
	snapRV := sentResourceVersion(t, first)
	other := first // the claim as the snapshot has it: the same object, other bytes
	var obj map[string]any
	if err := json.Unmarshal(first.Object, &obj); err != nil {
		t.Fatal(err)
	}
	delete(obj["metadata"].(map[string]any), "ownerReferences")
	if other.Object, err = json.Marshal(obj); err != nil {
		t.Fatal(err)
	}

	p := &abi.Plan{Actions: []abi.Action{first, first, other}}
	w := &fakeWriter{}
	if _, err := plan.Apply(context.Background(), scope, p, w, plan.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := []string{sentResourceVersion(t, w.sent[0]), sentResourceVersion(t, w.sent[1]), sentResourceVersion(t, w.sent[2])}; got[0] != snapRV || got[1] != "rv1" || got[2] != snapRV {
		t.Errorf("resourceVersions sent %v, want [%s rv1 %s]: the repeat at its first write's, other bytes as planned", got, snapRV, snapRV)
	}
	if string(p.Actions[1].Object) != string(first.Object) {
		t.Errorf("the plan was changed: %s", p.Actions[1].Object)
	}

}

// resizePod is web-0 of the resize tests, formatted with its resourceVersion, revision label, image and cpu.
const resizePod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"prod","uid":"web-0-uid","resourceVersion":"%s","labels":{"app":"web","controller-revision-hash":"%s"},` +
	`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"web-uid","controller":true,"blockOwnerDeletion":true}]},` +
	`"spec":{"containers":[{"name":"app","image":"%s","resources":{"requests":{"cpu":"%s"}}}]}}`

// resizeScope is the firewall's scope of a 1-pod InPlaceIfPossible set whose web-0 (at web-a, app:1, 100m) moves
// to web-b (app:2, 200m): web-b, the revision the update moves the pod to, holds the set's template.
func resizeScope(t *testing.T) *firewall.Scope {
	t.Helper()
	const revision = `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"web-b","namespace":"prod","uid":"web-b-uid",` +
		`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"web-uid","controller":true,"blockOwnerDeletion":true}]},` +
		`"data":{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"app:2","resources":{"requests":{"cpu":"200m"}}}]}}}},"revision":2}`
	snap := `{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":{"apiVersion":"apps/v1","kind":"StatefulSet",` +
		`"metadata":{"name":"web","namespace":"prod","uid":"web-uid","resourceVersion":"10","annotations":{"` + abi.AnnotationPodUpdatePolicy + `":"InPlaceIfPossible"}},` +
		`"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"app:2","resources":{"requests":{"cpu":"200m"}}}]}}}},` +
		`"pods":[` + fmt.Sprintf(resizePod, "7", "web-a", "app:1", "100m") + `],"revisions":[` + revision + `],"claims":[]}`
	scope, err := firewall.ScopeFromSnapshot([]byte(snap))
	if err != nil {
		t.Fatal(err)
	}
	return scope
}

// An in-place update (extension in-place-update) resizes a pod, then updates it at the same resourceVersion:
// the update is sent at the version the resize returned. An update at another version is sent as planned,
// and so is one after a refused resize.
func TestApplyRebasesAnUpdateOnItsOwnResize(t *testing.T) {
	scope := resizeScope(t)
	resize := abi.Action{Verb: abi.VerbResize, Kind: abi.KindPod, Namespace: "prod", Name: "web-0", Object: json.RawMessage(fmt.Sprintf(resizePod, "7", "web-a", "app:1", "200m"))}
	// the update moves the pod to web-b, and records it (ordinal.dev/in-place-update)
	moved := func(rv string) json.RawMessage {
		return json.RawMessage(strings.Replace(fmt.Sprintf(resizePod, rv, "web-b", "app:2", "200m"), `"labels":`, `"annotations":{"`+abi.AnnotationInPlaceUpdate+`":"web-b"},"labels":`, 1))
	}
	update := abi.Action{Verb: abi.VerbUpdate, Kind: abi.KindPod, Namespace: "prod", Name: "web-0", Object: moved("7")}
	stale := update
	stale.Object = moved("6")
	for _, c := range []struct {
		name    string
		actions []abi.Action
		answers map[int]error
		want    []string
	}{
		{"resize then update", []abi.Action{resize, update}, nil, []string{"7", "rv1"}},
		{"another version", []abi.Action{resize, stale}, nil, []string{"7", "6"}},
		{"a refused resize", []abi.Action{resize, update}, map[int]error{0: fmt.Errorf("refused")}, []string{"7"}},
		{"no resize", []abi.Action{update}, nil, []string{"7"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &fakeWriter{answers: c.answers}
			_, _ = plan.Apply(context.Background(), scope, &abi.Plan{Actions: c.actions}, w, plan.Options{})
			var got []string
			for _, a := range w.sent {
				got = append(got, sentResourceVersion(t, a))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("resourceVersions sent %v, want %v", got, c.want)
			}
		})
	}
}

// kubeletWriter is an API server whose kubelet answers a resize by writing the pod's status: the update sent at
// the resize's version meets a Conflict. Reread gives the pod as it is then (changed: what else changed since).
type kubeletWriter struct {
	sent    []abi.Action
	resized json.RawMessage
	changed func(pod map[string]any)
	rv      int
}

func (w *kubeletWriter) Write(_ context.Context, a *abi.Action, _ types.UID) (string, error) {
	w.sent = append(w.sent, *a)
	switch a.Verb {
	case abi.VerbResize:
		w.rv = 9 // 8 the resize's, 9 the kubelet's status write right after
		return "8", nil
	case abi.VerbUpdate:
		var o struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(a.Object, &o); err != nil || o.Metadata.ResourceVersion != fmt.Sprint(w.rv) {
			return "", apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, a.Name, errors.New("the object has been modified"))
		}
		return "10", nil
	}
	return "", nil
}

func (w *kubeletWriter) CanAdopt(context.Context) error { return nil }

func (w *kubeletWriter) Reread(_ context.Context, kind, _, _ string) (json.RawMessage, error) {
	var pod map[string]any
	if err := json.Unmarshal(w.resized, &pod); err != nil {
		return nil, err
	}
	md := pod["metadata"].(map[string]any)
	md["resourceVersion"], md["generation"], md["managedFields"] = fmt.Sprint(w.rv), 2, []any{map[string]any{"manager": "kubelet"}}
	pod["status"] = map[string]any{"phase": "Running", "containerStatuses": []any{map[string]any{"name": "app", "allocatedResources": map[string]any{"cpu": "0.2"}}}}
	if w.changed != nil {
		w.changed(pod)
	}
	return json.Marshal(pod)
}

// noReread is a kubeletWriter that cannot re-read.
type noReread struct{ w *kubeletWriter }

func (n noReread) Write(ctx context.Context, a *abi.Action, p types.UID) (string, error) {
	return n.w.Write(ctx, a, p)
}
func (n noReread) CanAdopt(ctx context.Context) error { return nil }

// The update after the plan's own resize meets the kubelet's status write (a Conflict) more often than not on
// a real node: when the pod re-read shows nothing but its status (and version, generation, managedFields)
// changed since the resize, the update is sent once more at the pod's version; anything else changed, or a
// writer that cannot re-read, and the Conflict stands.
func TestApplyResendsTheUpdateAfterTheKubeletsStatusWrite(t *testing.T) {
	scope := resizeScope(t)
	resized := json.RawMessage(fmt.Sprintf(resizePod, "7", "web-a", "app:1", "200m"))
	resize := abi.Action{Verb: abi.VerbResize, Kind: abi.KindPod, Namespace: "prod", Name: "web-0", Object: resized}
	update := abi.Action{Verb: abi.VerbUpdate, Kind: abi.KindPod, Namespace: "prod", Name: "web-0",
		Object: json.RawMessage(strings.Replace(fmt.Sprintf(resizePod, "7", "web-b", "app:2", "200m"), `"labels":`, `"annotations":{"`+abi.AnnotationInPlaceUpdate+`":"web-b"},"labels":`, 1))}
	for _, c := range []struct {
		name     string
		changed  func(map[string]any)
		noReread bool
		want     []string // the resourceVersions sent
		conflict bool
	}{
		{"the kubelet's status alone", nil, false, []string{"7", "8", "9"}, false},
		{"a label added since", func(p map[string]any) {
			p["metadata"].(map[string]any)["labels"].(map[string]any)["team"] = "db"
		}, false, []string{"7", "8"}, true},
		{"the spec changed since", func(p map[string]any) {
			p["spec"].(map[string]any)["activeDeadlineSeconds"] = 60
		}, false, []string{"7", "8"}, true},
		{"a writer that cannot re-read", nil, true, []string{"7", "8"}, true},
		{"deleted since", func(p map[string]any) {
			md := p["metadata"].(map[string]any)
			md["deletionTimestamp"], md["deletionGracePeriodSeconds"] = "2026-05-01T12:00:05Z", 30
		}, false, []string{"7", "8"}, true},
		{"another pod of the same name", func(p map[string]any) {
			p["metadata"].(map[string]any)["uid"] = "web-0-uid-2"
		}, false, []string{"7", "8"}, true},
		{"a finalizer added since", func(p map[string]any) {
			p["metadata"].(map[string]any)["finalizers"] = []any{"example.com/keep"}
		}, false, []string{"7", "8"}, true},
		{"an owner reference added since", func(p map[string]any) {
			md := p["metadata"].(map[string]any)
			md["ownerReferences"] = append(md["ownerReferences"].([]any), map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": "cm-uid"})
		}, false, []string{"7", "8"}, true},
		{"resized again by someone else since", func(p map[string]any) {
			c := p["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["resources"] = map[string]any{"requests": map[string]any{"cpu": "300m"}}
		}, false, []string{"7", "8"}, true},
		// another write between the re-read and the resend: its Conflict stands, and nothing is sent again
		{"written again after the re-read", func(p map[string]any) {
			p["metadata"].(map[string]any)["resourceVersion"] = "11"
		}, false, []string{"7", "8", "11"}, true},
		{"the same resources written otherwise (0.2 for 200m)", func(p map[string]any) {
			c := p["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["resources"] = map[string]any{"requests": map[string]any{"cpu": "0.2"}}
		}, false, []string{"7", "8", "9"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			kw := &kubeletWriter{resized: resized, changed: c.changed}
			var w plan.Writer = kw
			if c.noReread {
				w = noReread{kw}
			}
			_, err := plan.Apply(context.Background(), scope, &abi.Plan{Actions: []abi.Action{resize, update}}, w, plan.Options{})
			var got []string
			for _, a := range kw.sent {
				got = append(got, sentResourceVersion(t, a))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("resourceVersions sent %v, want %v", got, c.want)
			}
			if gotConflict := apierrors.IsConflict(err); gotConflict != c.conflict {
				t.Errorf("error %v, want a Conflict: %v", err, c.conflict)
			}
		})
	}
}

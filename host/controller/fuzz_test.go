package controller

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/firewall"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/conformance"
	ordinalname "github.com/ordinal-dev/ordinal/internal/ordinal"
)

var (
	fuzzModuleOnce sync.Once
	fuzzModule     *wasm.Module
	fuzzModuleErr  error
)

// FuzzSyncPipeline runs one sync the way the controller does, from objects to requests: mutated snapshots
// (decoded into the typed objects an informer holds) → SelectObjects → BuildSnapshot → the embedded module
// (or, when the second input is not empty, those bytes as a hostile module's output) → plan.Decode → the
// firewall → the applier, whose requests go to a fake API server. Never a panic; and when the firewall lets a
// plan through, every request stays in the set's namespace, touches only the set's pods, and deletes only
// with the UID of the object the plan was made from.
func FuzzSyncPipeline(f *testing.F) {
	cases, err := conformance.All()
	if err != nil {
		f.Fatal(err)
	}
	for i, c := range cases {
		if i%10 == 0 {
			f.Add(c.Snapshot, []byte(nil))
			f.Add(c.Snapshot, c.Plan)
		}
	}
	f.Fuzz(func(t *testing.T, snapJSON, moduleOutput []byte) {
		var in struct {
			StatefulSet *appsv1.StatefulSet             `json:"statefulSet"`
			Pods        []*corev1.Pod                   `json:"pods"`
			Revisions   []*appsv1.ControllerRevision    `json:"revisions"`
			Claims      []*corev1.PersistentVolumeClaim `json:"claims"`
		}
		if json.Unmarshal(snapJSON, &in) != nil || in.StatefulSet == nil || in.StatefulSet.Name == "" {
			return
		}
		objs, err := snapshot.SelectObjects(snapshot.Objects{Set: in.StatefulSet, Pods: in.Pods, Revisions: in.Revisions, Claims: in.Claims})
		if err != nil {
			return
		}
		snap, err := snapshot.Build(objs, snapshot.StatefulSetTarget, time.Unix(1_800_000_000, 0), nil)
		if err != nil {
			return
		}
		raw := moduleOutput
		if len(raw) == 0 {
			fuzzModuleOnce.Do(func() {
				// A 10-minute bound, not a budget: under -race on a loaded machine the compile alone passed
				// 10 s. A module that loops is still stopped by its work budget (an ErrTimeout too).
				fuzzModule, fuzzModuleErr = wasm.Load(context.Background(), embedded.Module(), wasm.Config{Timeout: 10 * time.Minute})
			})
			if fuzzModuleErr != nil {
				t.Fatal(fuzzModuleErr)
			}
			if raw, err = fuzzModule.Reconcile(context.Background(), snap.JSON); errors.Is(err, wasm.ErrTimeout) {
				t.Fatalf("the module did not end on a %d-byte snapshot: %v", len(snap.JSON), err)
			} else if err != nil {
				return // an input the module refuses (an error, never a trap, is FuzzLoad's and the guest's concern)
			}
		}
		p, err := hostplan.Decode(raw)
		if err != nil {
			return
		}
		scope, err := snap.FirewallScope()
		if err != nil {
			return
		}

		api := &fakeAPI{}
		srv := httptest.NewServer(api)
		defer srv.Close()
		rc, err := newRESTClients(&rest.Config{Host: srv.URL, QPS: -1}, snapshot.StatefulSetTarget) // no client-side throttle: a plan may hold thousands of writes
		if err != nil {
			t.Fatal(err)
		}
		w := &restWriter{
			rest: rc, target: snapshot.StatefulSetTarget, snap: snap, ns: objs.Set.Namespace,
			canAdopt: func(context.Context) error { return nil },
		}
		var refused *firewall.RefusedError
		if _, err := hostplan.Apply(context.Background(), scope, p, w, hostplan.Options{}); errors.As(err, &refused) {
			if len(api.reqs) != 0 {
				t.Fatalf("the firewall refused the plan after %d requests", len(api.reqs))
			}
			return
		}

		if len(api.reqs) > len(p.Actions) {
			t.Fatalf("%d requests for %d actions", len(api.reqs), len(p.Actions))
		}
		ns := objs.Set.Namespace
		for _, r := range api.reqs {
			if !strings.HasPrefix(r.Path, "/api/v1/namespaces/"+ns+"/") && !strings.HasPrefix(r.Path, "/apis/apps/v1/namespaces/"+ns+"/") {
				t.Fatalf("%s %s: outside the set's namespace %q", r.Method, r.Path, ns)
			}
			rest := r.Path[strings.Index(r.Path, "/namespaces/"+ns+"/")+len("/namespaces/"+ns+"/"):]
			resource, name, _ := strings.Cut(rest, "/")
			name, _, _ = strings.Cut(name, "/")
			switch resource {
			case "pods":
				if name != "" {
					if parent, _ := ordinalname.Parse(name); parent != objs.Set.Name && !(r.Method == "PATCH" && controlledBy(scope.Object(abi.KindPod, name), scope.UID)) {
						t.Fatalf("%s %s: not a pod of set %s", r.Method, r.Path, objs.Set.Name)
					}
				}
			case "statefulsets":
				if r.Method != "PUT" || name != objs.Set.Name || !strings.HasSuffix(r.Path, "/status") {
					t.Fatalf("%s %s: only the set's status may be written", r.Method, r.Path)
				}
			case "persistentvolumeclaims", "controllerrevisions":
			default:
				t.Fatalf("%s %s: resource %q", r.Method, r.Path, resource)
			}
			if r.Method == "DELETE" {
				obj := map[string]map[string]*firewall.Object{"pods": scope.Pods, "controllerrevisions": scope.Revisions, "persistentvolumeclaims": scope.Claims}[resource][name]
				if obj == nil || obj.UID == "" || !strings.Contains(r.Body, string(obj.UID)) {
					t.Fatalf("DELETE %s without the UID precondition of the object the plan was made from", r.Path)
				}
			}
		}
	})
}

// controlledBy: the object (as the snapshot had it) names uid as its controller; upstream patches such a pod
// to release it when its name no longer parses as the set's member.
func controlledBy(o *firewall.Object, uid types.UID) bool {
	if o == nil {
		return false
	}
	for _, r := range o.OwnerReferences {
		if r.Controller != nil && *r.Controller && r.UID == uid {
			return true
		}
	}
	return false
}

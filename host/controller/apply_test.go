package controller

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/ordinal-dev/ordinal/abi"
)

type recorded struct {
	Method, Path, ContentType, Body string
}

// fakeAPI records requests and answers from a table keyed by "METHOD path".
type fakeAPI struct {
	mu       sync.Mutex
	reqs     []recorded
	failures map[string]int // status code to answer with
	rv       int
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, recorded{r.Method, r.URL.Path, r.Header.Get("Content-Type"), string(body)})
	w.Header().Set("Content-Type", "application/json")
	if code, ok := f.failures[r.Method+" "+r.URL.Path]; ok {
		reason := map[int]string{404: "NotFound", 409: "AlreadyExists", 422: "Invalid", 500: "InternalError"}[code]
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"`+reason+`","code":`+itoa(code)+`}`)
		return
	}
	f.rv++
	_, _ = io.WriteString(w, `{"metadata":{"name":"x","uid":"u","resourceVersion":"`+itoa(1000+f.rv)+`"}}`)
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func newTestApplier(t testing.TB, api *fakeAPI) (*applier, map[schema.GroupResource]string) {
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	rc, err := newRESTClients(&rest.Config{Host: srv.URL, QPS: -1}, StatefulSetTarget) // no client-side rate limit
	if err != nil {
		t.Fatal(err)
	}
	wrote := map[schema.GroupResource]string{}
	setJSON := []byte(`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"ns","uid":"set-uid","resourceVersion":"7"},"spec":{"replicas":3},"status":{"replicas":1}}`)
	a := &applier{
		rest: rc, target: StatefulSetTarget,
		snap: &Snapshot{SetJSON: setJSON, UIDs: map[objectKey]types.UID{{"Pod", "web-2"}: "pod2-uid"}},
		set:  types.NamespacedName{Namespace: "ns", Name: "web"}, setUID: "set-uid",
		wrote:   func(gr schema.GroupResource, rv string) { wrote[gr] = rv },
		recheck: func(context.Context) error { return nil },
	}
	return a, wrote
}

func TestApplyMapsActionsToRequests(t *testing.T) {
	api := &fakeAPI{}
	a, wrote := newTestApplier(t, api)
	podJSON := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"i"}]}}`
	actions := []abi.Action{
		{Verb: "create", Kind: "ControllerRevision", Namespace: "ns", Name: "web-abc", Object: json.RawMessage(`{"metadata":{"name":"web-abc"},"data":{"b":1,"a":2},"revision":1}`)},
		{Verb: "create", Kind: "Pod", Namespace: "ns", Name: "web-0", Object: json.RawMessage(podJSON)},
		{Verb: "update", Kind: "Pod", Namespace: "ns", Name: "web-1", Object: json.RawMessage(`{"metadata":{"name":"web-1","resourceVersion":"5"}}`)},
		{Verb: "patch", Kind: "Pod", Namespace: "ns", Name: "web-3", PatchType: "application/strategic-merge-patch+json",
			Patch: json.RawMessage(`{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"set-uid"}],"uid":"p3"}}`)},
		{Verb: "delete", Kind: "Pod", Namespace: "ns", Name: "web-2"},
		{Verb: "delete", Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "data-web-9"},
		{Verb: "updateStatus", Kind: "StatefulSet", Namespace: "ns", Name: "web", Object: json.RawMessage(`{"status":{"replicas":3,"readyReplicas":2}}`)},
	}
	n, err := a.apply(context.Background(), actions, nil)
	if err != nil || n != len(actions) {
		t.Fatalf("apply: n=%d err=%v", n, err)
	}
	want := []recorded{
		{"POST", "/apis/apps/v1/namespaces/ns/controllerrevisions", "application/json", string(actions[0].Object)},
		{"POST", "/api/v1/namespaces/ns/pods", "application/json", podJSON},
		{"PUT", "/api/v1/namespaces/ns/pods/web-1", "application/json", string(actions[2].Object)},
		{"PATCH", "/api/v1/namespaces/ns/pods/web-3", "application/strategic-merge-patch+json", string(actions[3].Patch)},
		{"DELETE", "/api/v1/namespaces/ns/pods/web-2", "application/json", ""},
		{"DELETE", "/api/v1/namespaces/ns/persistentvolumeclaims/data-web-9", "application/json", ""},
		{"PUT", "/apis/apps/v1/namespaces/ns/statefulsets/web/status", "application/json", ""},
	}
	if len(api.reqs) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(api.reqs), len(want), api.reqs)
	}
	for i, w := range want {
		g := api.reqs[i]
		if g.Method != w.Method || g.Path != w.Path || !strings.HasPrefix(g.ContentType, w.ContentType) {
			t.Errorf("request %d: %s %s (%s), want %s %s (%s)", i, g.Method, g.Path, g.ContentType, w.Method, w.Path, w.ContentType)
		}
		if w.Body != "" && g.Body != w.Body {
			t.Errorf("request %d body:\n got %s\nwant %s", i, g.Body, w.Body)
		}
	}
	// Delete of a snapshot object: uid precondition; of an unknown object: none.
	if !strings.Contains(api.reqs[4].Body, `"preconditions":{"uid":"pod2-uid"}`) {
		t.Errorf("delete body lacks the uid precondition: %s", api.reqs[4].Body)
	}
	if strings.Contains(api.reqs[5].Body, "preconditions") {
		t.Errorf("delete of an object not in the snapshot has a precondition: %s", api.reqs[5].Body)
	}
	// updateStatus: the snapshot's set (with its resourceVersion) and the plan's status.
	var st map[string]any
	if err := json.Unmarshal([]byte(api.reqs[6].Body), &st); err != nil {
		t.Fatal(err)
	}
	if st["metadata"].(map[string]any)["resourceVersion"] != "7" || st["status"].(map[string]any)["readyReplicas"] != 2.0 ||
		st["spec"].(map[string]any)["replicas"] != 3.0 {
		t.Errorf("status body: %s", api.reqs[6].Body)
	}
	if wrote[podResource] == "" || wrote[revisionResource] == "" || wrote[StatefulSetTarget.GroupResource()] == "" || wrote[claimResource] == "" {
		t.Errorf("resourceVersions not recorded: %v", wrote)
	}
}

func TestApplyStopsAtFirstFailure(t *testing.T) {
	api := &fakeAPI{failures: map[string]int{"POST /api/v1/namespaces/ns/pods": 500}}
	a, _ := newTestApplier(t, api)
	var outcomes []error
	actions := []abi.Action{
		{Verb: "create", Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "data-web-0", Object: json.RawMessage(`{}`)},
		{Verb: "create", Kind: "Pod", Namespace: "ns", Name: "web-0", Object: json.RawMessage(`{}`)},
		{Verb: "updateStatus", Kind: "StatefulSet", Namespace: "ns", Name: "web", Object: json.RawMessage(`{"status":{}}`)},
	}
	n, err := a.apply(context.Background(), actions, func(_ int, err error) { outcomes = append(outcomes, err) })
	var ae *applyError
	if !errors.As(err, &ae) || ae.Index != 1 || n != 2 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	if len(api.reqs) != 2 || len(outcomes) != 2 || outcomes[0] != nil || outcomes[1] == nil {
		t.Fatalf("requests %d outcomes %v", len(api.reqs), outcomes)
	}
}

func TestApplyExpectedErrorsAndIgnorablePatches(t *testing.T) {
	api := &fakeAPI{failures: map[string]int{
		"POST /api/v1/namespaces/ns/pods":          409, // predicted AlreadyExists
		"PATCH /api/v1/namespaces/ns/pods/gone":    404, // vanished before release: ignored
		"PATCH /api/v1/namespaces/ns/pods/changed": 422, // release precondition failed: ignored
	}}
	a, _ := newTestApplier(t, api)
	actions := []abi.Action{
		{Verb: "create", Kind: "Pod", Namespace: "ns", Name: "web-0", Object: json.RawMessage(`{}`), Error: "AlreadyExists"},
		{Verb: "patch", Kind: "Pod", Namespace: "ns", Name: "gone", Patch: json.RawMessage(`{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"s"}]}}`)},
		{Verb: "patch", Kind: "Pod", Namespace: "ns", Name: "changed", Patch: json.RawMessage(`{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"s"}]}}`)},
		{Verb: "updateStatus", Kind: "StatefulSet", Namespace: "ns", Name: "web", Object: json.RawMessage(`{"status":{}}`)},
	}
	if n, err := a.apply(context.Background(), actions, nil); err != nil || n != 4 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	// A predicted failure that does not happen means the snapshot was stale: stop.
	api2 := &fakeAPI{}
	a2, _ := newTestApplier(t, api2)
	if _, err := a2.apply(context.Background(), actions[:1], nil); err == nil {
		t.Fatal("want an error when a predicted rejection does not happen")
	}
}

func TestApplyAdoptionRecheck(t *testing.T) {
	adopt := abi.Action{Verb: "patch", Kind: "Pod", Namespace: "ns", Name: "web-0", PatchType: "application/strategic-merge-patch+json",
		Patch: json.RawMessage(`{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":true,"kind":"StatefulSet","name":"web","uid":"set-uid"}],"uid":"p0"}}`)}
	release := abi.Action{Verb: "patch", Kind: "Pod", Namespace: "ns", Name: "web-9", Patch: json.RawMessage(`{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"set-uid"}],"uid":"p9"}}`)}
	if !isAdoptionPatch(adopt.Patch) || isAdoptionPatch(release.Patch) {
		t.Fatal("isAdoptionPatch")
	}
	api := &fakeAPI{}
	a, _ := newTestApplier(t, api)
	calls := 0
	a.recheck = func(context.Context) error { calls++; return nil }
	second := adopt
	second.Name = "web-1"
	if _, err := a.apply(context.Background(), []abi.Action{release, adopt, second}, nil); err != nil || calls != 1 {
		t.Fatalf("err=%v recheck calls=%d (want 1: once per sync, before the first adoption)", err, calls)
	}
	api2 := &fakeAPI{}
	b, _ := newTestApplier(t, api2)
	b.recheck = func(context.Context) error { return errors.New("set is being deleted") }
	n, err := b.apply(context.Background(), []abi.Action{release, adopt}, nil)
	if !errors.Is(err, errAdoptionRefused) || n != 1 || len(api2.reqs) != 1 {
		t.Fatalf("n=%d reqs=%d err=%v: a refused adoption issues no patch and stops", n, len(api2.reqs), err)
	}
}

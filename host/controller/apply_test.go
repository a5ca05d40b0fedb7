package controller

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/snapshot"
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

func newTestWriter(t testing.TB, api *fakeAPI) (*restWriter, map[schema.GroupResource]string) {
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	rc, err := newRESTClients(&rest.Config{Host: srv.URL, QPS: -1}, snapshot.StatefulSetTarget) // no client-side rate limit
	if err != nil {
		t.Fatal(err)
	}
	wrote := map[schema.GroupResource]string{}
	setJSON := []byte(`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"ns","uid":"set-uid","resourceVersion":"7"},"spec":{"replicas":3},"status":{"replicas":1}}`)
	w := &restWriter{
		rest: rc, target: snapshot.StatefulSetTarget, snap: &snapshot.Snapshot{SetJSON: setJSON}, ns: "ns",
		wrote:    func(gr schema.GroupResource, rv string) { wrote[gr] = rv },
		canAdopt: func(context.Context) error { return nil },
	}
	return w, wrote
}

// The rules of applying a plan (order, expected and ignorable errors, the adoption re-check) are
// host/plan's, tested there; this is how the controller's writer turns each action into a request.
func TestRESTWriterMapsActionsToRequests(t *testing.T) {
	api := &fakeAPI{}
	w, wrote := newTestWriter(t, api)
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
	for i := range actions {
		pre := types.UID("")
		if i == 4 {
			pre = "pod2-uid"
		}
		rv, err := w.Write(context.Background(), &actions[i], pre)
		if err != nil {
			t.Fatalf("action %d: %v", i, err)
		}
		if want := itoa(1000 + api.rv); rv != want { // what the fake API server answered with
			t.Errorf("action %d: resourceVersion %q, want %q", i, rv, want)
		}
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
	// A delete with a precondition sends it; one without sends none.
	if !strings.Contains(api.reqs[4].Body, `"preconditions":{"uid":"pod2-uid"}`) {
		t.Errorf("delete body lacks the uid precondition: %s", api.reqs[4].Body)
	}
	if strings.Contains(api.reqs[5].Body, "preconditions") {
		t.Errorf("delete without a precondition sends one: %s", api.reqs[5].Body)
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
	if wrote[podResource] == "" || wrote[revisionResource] == "" || wrote[snapshot.StatefulSetTarget.GroupResource()] == "" || wrote[claimResource] == "" {
		t.Errorf("resourceVersions not recorded: %v", wrote)
	}
}

// The API server's failures reach the applier as client-go's API errors, which is what host/plan's
// rules read.
func TestRESTWriterReturnsAPIErrors(t *testing.T) {
	api := &fakeAPI{failures: map[string]int{
		"POST /api/v1/namespaces/ns/pods":       409,
		"PATCH /api/v1/namespaces/ns/pods/gone": 404,
		"PUT /api/v1/namespaces/ns/pods/bad":    422,
	}}
	w, wrote := newTestWriter(t, api)
	for _, tc := range []struct {
		a  abi.Action
		is func(error) bool
	}{
		{abi.Action{Verb: "create", Kind: "Pod", Namespace: "ns", Name: "web-0", Object: json.RawMessage(`{}`)}, apierrors.IsAlreadyExists},
		{abi.Action{Verb: "patch", Kind: "Pod", Namespace: "ns", Name: "gone", Patch: json.RawMessage(`{}`)}, apierrors.IsNotFound},
		{abi.Action{Verb: "update", Kind: "Pod", Namespace: "ns", Name: "bad", Object: json.RawMessage(`{}`)}, apierrors.IsInvalid},
	} {
		if _, err := w.Write(context.Background(), &tc.a, ""); !tc.is(err) {
			t.Errorf("%s %s: err=%v", tc.a.Verb, tc.a.Name, err)
		}
	}
	if len(wrote) != 0 {
		t.Errorf("failed writes recorded resourceVersions: %v", wrote)
	}
}

// A refusal carries the API server's own message (a label value too long, say), not client-go's generic
// "the server rejected our request": the event and the log line say what is wrong.
func TestRESTWriterKeepsTheAPIServersMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Pod \"x-0\" is invalid: metadata.labels: Invalid value: \"x-abc\": must be no more than 63 bytes","reason":"Invalid","details":{"name":"x-0","kind":"Pod"},"code":422}`)
	}))
	defer srv.Close()
	rc, err := newRESTClients(&rest.Config{Host: srv.URL, QPS: -1}, snapshot.StatefulSetTarget)
	if err != nil {
		t.Fatal(err)
	}
	w := &restWriter{rest: rc, target: snapshot.StatefulSetTarget, snap: &snapshot.Snapshot{}, ns: "ns"}
	_, err = w.Write(context.Background(), &abi.Action{Verb: "create", Kind: "Pod", Namespace: "ns", Name: "x-0", Object: json.RawMessage(`{}`)}, "")
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "must be no more than 63 bytes") {
		t.Errorf("error %v: want the API server's Invalid message", err)
	}
}

// Every write names the controller's field manager, so another controller's writes can be told apart.
func TestRESTWriterNamesItsFieldManager(t *testing.T) {
	var managers []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		managers = append(managers, r.Method+"="+r.URL.Query().Get("fieldManager"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"metadata":{"name":"x","resourceVersion":"9"}}`)
	}))
	defer srv.Close()
	w, _ := newTestWriter(t, &fakeAPI{})
	rc, err := newRESTClients(&rest.Config{Host: srv.URL, QPS: -1}, snapshot.StatefulSetTarget)
	if err != nil {
		t.Fatal(err)
	}
	w.rest = rc
	for _, a := range []abi.Action{
		{Verb: "create", Kind: "Pod", Namespace: "ns", Name: "web-0", Object: json.RawMessage(`{}`)},
		{Verb: "update", Kind: "Pod", Namespace: "ns", Name: "web-0", Object: json.RawMessage(`{}`)},
		{Verb: "patch", Kind: "Pod", Namespace: "ns", Name: "web-0", Patch: json.RawMessage(`{}`)},
		{Verb: "updateStatus", Kind: "StatefulSet", Namespace: "ns", Name: "web", Object: json.RawMessage(`{"status":{"replicas":3}}`)},
	} {
		if _, err := w.Write(context.Background(), &a, ""); err != nil {
			t.Fatalf("%s: %v", a.Verb, err)
		}
	}
	if got := strings.Join(managers, " "); got != "POST=ordinal PUT=ordinal PATCH=ordinal PUT=ordinal" {
		t.Errorf("field managers: %s", got)
	}
}

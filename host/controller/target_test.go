package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/reference"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Events name the target's kind: a set of the CRD is referenced as ordinal.dev/v1, never as apps/v1,
// although both decode into the same Go type.
func TestTargetSchemeNamesTheKind(t *testing.T) {
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}}
	for _, tc := range []struct {
		target Target
		want   string
	}{{StatefulSetTarget, "apps/v1"}, {CRDTarget, "ordinal.dev/v1"}} {
		s, err := tc.target.scheme()
		if err != nil {
			t.Fatal(err)
		}
		ref, err := reference.GetReference(s, set)
		if err != nil {
			t.Fatal(err)
		}
		if ref.APIVersion != tc.want || ref.Kind != "StatefulSet" || ref.UID != "u1" {
			t.Errorf("%s: event reference %s %s %s, want %s StatefulSet", tc.target, ref.APIVersion, ref.Kind, ref.UID, tc.want)
		}
	}
	if _, err := (Target{GroupVersion: CRDTarget.GroupVersion, Kind: "Other", Resource: "others", Custom: true}).scheme(); err == nil {
		t.Errorf("a custom kind without Go types has a scheme")
	}
}

// The CRD's informer lists and watches through its JSON REST client into *appsv1.StatefulSet, with the
// label selector, and drops managed field sets as the shared informers do; status.selector (not in
// apps/v1's status) is ignored.
func TestCustomSetInformer(t *testing.T) {
	obj := func(name, rv string) string {
		return `{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","metadata":{"name":"` + name + `","namespace":"ns","uid":"uid-` + name +
			`","resourceVersion":"` + rv + `","managedFields":[{"manager":"kubectl","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},` +
			`"spec":{"replicas":3,"selector":{"matchLabels":{"app":"` + name + `"}},"template":{"metadata":{"labels":{"app":"` + name + `"}},"spec":{"containers":[{"name":"c","image":"i"}]}}},` +
			`"status":{"replicas":3,"selector":"app=` + name + `"}}`
	}
	var (
		mu        sync.Mutex
		selectors []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/ordinal.dev/v1/namespaces/ns/statefulsets" {
			http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
			return
		}
		mu.Lock()
		selectors = append(selectors, r.URL.Query().Get("labelSelector"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		switch {
		case q.Get("watch") != "true":
			fmt.Fprint(w, `{"apiVersion":"ordinal.dev/v1","kind":"StatefulSetList","metadata":{"resourceVersion":"10"},"items":[`+obj("web", "9")+`]}`)
			return
		case q.Get("sendInitialEvents") == "true": // a streaming list (client-go's WatchListClient), as kube-apiserver serves it
			fmt.Fprint(w, `{"type":"ADDED","object":`+obj("web", "9")+"}\n"+
				`{"type":"BOOKMARK","object":{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","metadata":{"resourceVersion":"10","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n")
		}
		fmt.Fprint(w, `{"type":"ADDED","object":`+obj("db", "11")+"}\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	rc, err := newRESTClients(&rest.Config{Host: srv.URL, QPS: -1}, CRDTarget)
	if err != nil {
		t.Fatal(err)
	}
	inf := customSetInformer(rc[CRDTarget.GroupVersion], CRDTarget, Config{Namespace: "ns"}, func(o *metav1.ListOptions) { o.LabelSelector = "tier=db" })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a budget
	defer cancel()
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("not synced")
	}
	lister := newLister(inf)
	for _, name := range []string{"web", "db"} {
		var set *appsv1.StatefulSet
		for set == nil { // until the watch event arrives
			if set, _ = lister(name); set == nil {
				if ctx.Err() != nil {
					t.Fatalf("%s never in the cache", name)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		if *set.Spec.Replicas != 3 || set.Spec.Template.Spec.Containers[0].Image != "i" || set.Status.Replicas != 3 || string(set.UID) != "uid-"+name {
			t.Errorf("%s decoded as %+v", name, set)
		}
		if mf := set.ManagedFields; len(mf) != 1 || mf[0].Manager != "kubectl" || mf[0].FieldsV1 != nil {
			t.Errorf("%s: managedFields %+v, want the entry without its field set", name, mf)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range selectors {
		if s != "tier=db" {
			t.Errorf("list or watch with labelSelector %q, want tier=db", s)
		}
	}
}

func newLister(inf cache.SharedIndexInformer) func(name string) (*appsv1.StatefulSet, error) {
	return func(name string) (*appsv1.StatefulSet, error) {
		obj, ok, err := inf.GetIndexer().GetByKey("ns/" + name)
		if !ok || err != nil {
			return nil, err
		}
		return obj.(*appsv1.StatefulSet), nil
	}
}

// A CRD set is stored as written (no apps/v1 defaulting): the snapshot carries it as kube-apiserver would
// store the same manifest as an apps/v1 StatefulSet (so revision names agree), compared here with
// kube-apiserver v1.37.2's own answers for every StatefulSet of host/kube's corpus.
func TestCustomSetSnapshotIsDefaultedAsAPIServer(t *testing.T) {
	n := 0
	for _, fx := range kubetest.Fixtures(t, "../kube/testdata/apiserver-defaults") {
		if fx.Kind != "StatefulSet" {
			continue
		}
		n++
		t.Run(fx.Name, func(t *testing.T) {
			in, _ := json.Marshal(fx.Input)
			var set appsv1.StatefulSet // what the CRD's informer decodes (its schema prunes what apps/v1 lacks)
			if err := json.Unmarshal(in, &set); err != nil {
				t.Fatal(err)
			}
			snap, err := BuildSnapshot(Objects{Set: &set}, CRDTarget, time.Unix(1e9, 0), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := jsonobj.DecodeObj(snap.SetJSON)
			if err != nil {
				t.Fatal(err)
			}
			if jsonobj.GetStr(got, "apiVersion") != "ordinal.dev/v1" {
				t.Errorf("apiVersion %q", jsonobj.GetStr(got, "apiVersion"))
			}
			gotSpec, _ := json.Marshal(got["spec"])
			wantSpec, _ := json.Marshal(fx.Answer["spec"])
			if d := jsoncmp.Diff(wantSpec, gotSpec); d != "" {
				t.Errorf("spec differs from kube-apiserver's apps/v1 answer (want = API server, got = snapshot):\n%s", d)
			}
		})
	}
	if n < 100 {
		t.Fatalf("%d StatefulSet fixtures", n)
	}
}

// A CRD set apps/v1 validation refuses is an InvalidSetError with kube-apiserver's message; an apps/v1
// set is taken as the API server stored it (no second validation).
func TestCustomSetRefusedAsAPIServer(t *testing.T) {
	set := testSet()
	set.Spec.Template.Labels = map[string]string{"app": "other"}
	_, err := BuildSnapshot(Objects{Set: set}, CRDTarget, time.Unix(1e9, 0), nil)
	var invalid *InvalidSetError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), "`selector` does not match template `labels`") {
		t.Fatalf("BuildSnapshot of an invalid CRD set: %v, want an InvalidSetError", err)
	}
	if _, err := BuildSnapshot(Objects{Set: set}, StatefulSetTarget, time.Unix(1e9, 0), nil); err != nil {
		t.Errorf("apps/v1: %v", err)
	}
}

// updateStatus of a CRD set also writes status.selector (its scale subresource's labelSelectorPath),
// which the plan's apps/v1 status lacks; apps/v1's body is the plan's status alone.
func TestStatusBodyScaleSelector(t *testing.T) {
	setJSON := []byte(`{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","metadata":{"name":"web","resourceVersion":"7"},` +
		`"spec":{"selector":{"matchLabels":{"app":"web","tier":"db"},"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}},"status":{"replicas":1,"selector":"stale"}}`)
	action := []byte(`{"status":{"replicas":3,"observedGeneration":2}}`)
	for _, tc := range []struct {
		target Target
		want   string
	}{
		{CRDTarget, `{"observedGeneration":2,"replicas":3,"selector":"app=web,tier=db,zone in (a,b)"}`},
		{StatefulSetTarget, `{"replicas":3,"observedGeneration":2}`},
	} {
		body, err := statusBody(setJSON, action, tc.target)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Metadata struct{ ResourceVersion string }
			Status   json.RawMessage
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if string(got.Status) != tc.want || got.Metadata.ResourceVersion != "7" {
			t.Errorf("%s: status %s (resourceVersion %q), want %s", tc.target, got.Status, got.Metadata.ResourceVersion, tc.want)
		}
	}
}

// Without the CRD the controller does not start: the error names the CRD and how to install it.
func TestManagerRefusesAMissingCRD(t *testing.T) {
	targets := []Target{CRDTarget, StatefulSetTarget}
	rc, err := newRESTClients(&rest.Config{Host: "http://127.0.0.1:1"}, targets...)
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	m, err := newManager(Config{Module: &ModuleRef{}, Targets: targets}, client, rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.controllers) != 2 || m.controllers[0].target != CRDTarget || m.controllers[1].target != StatefulSetTarget {
		t.Fatalf("controllers %v", m.controllers)
	}
	disc := client.Discovery().(*fakediscovery.FakeDiscovery)
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		wantErr   bool
	}{
		{"no ordinal.dev/v1", nil, true},
		{"ordinal.dev/v1 without statefulsets", []*metav1.APIResourceList{{GroupVersion: "ordinal.dev/v1", APIResources: []metav1.APIResource{{Name: "others"}}}}, true},
		{"installed", []*metav1.APIResourceList{{GroupVersion: "ordinal.dev/v1", APIResources: []metav1.APIResource{{Name: "statefulsets"}, {Name: "statefulsets/status"}}}}, false},
	} {
		disc.Resources = tc.resources
		err := m.checkServed(context.Background())
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "install the CustomResourceDefinition statefulsets.ordinal.dev") || !strings.Contains(err.Error(), "crd.yaml")) {
			t.Errorf("%s: error %q does not say which CRD to install and how", tc.name, err)
		}
	}
	if _, err := newManager(Config{Module: &ModuleRef{}, Targets: []Target{CRDTarget, CRDTarget}}, client, rc); err == nil {
		t.Errorf("a target twice: no error")
	}
}

// GetSet reads the CRD kind through the clientset's untyped REST client into apps/v1's type, and keeps
// the API server's NotFound.
func TestGetSetOfTheCRDKind(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/apis/ordinal.dev/v1/namespaces/ns/statefulsets/web" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"statefulsets.ordinal.dev \"db\" not found"}`)
			return
		}
		fmt.Fprint(w, `{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"ns","uid":"u1"},"spec":{"replicas":2},"status":{"replicas":2,"selector":"app=web"}}`)
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	set, err := GetSet(context.Background(), client, CRDTarget, "ns", "web")
	if err != nil || set.UID != "u1" || *set.Spec.Replicas != 2 || set.Status.Replicas != 2 || set.APIVersion != "" {
		t.Fatalf("GetSet = %+v, %v", set, err)
	}
	if _, err := GetSet(context.Background(), client, CRDTarget, "ns", "db"); !apierrors.IsNotFound(err) {
		t.Errorf("a missing set: %v, want NotFound", err)
	}
	// Path segments are checked before any request: no traversal out of the resource's path.
	for _, bad := range [][2]string{{"ns", "a/b"}, {"ns", ".."}, {"../../api/v1/namespaces/x/secrets", "web"}, {"ns/x", "web"}} {
		if _, err := GetSet(context.Background(), client, CRDTarget, bad[0], bad[1]); err == nil || apierrors.IsNotFound(err) {
			t.Errorf("GetSet(%q, %q) = %v, want a refusal before the request", bad[0], bad[1], err)
		}
	}
}

// DryRunApplySet sends a forced server-side apply with dryRun=All to the CRD kind's path.
func TestDryRunApplySetOfTheCRDKind(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"ns"},"spec":{"replicas":4}}`)
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	set, err := DryRunApplySet(context.Background(), client, CRDTarget, "ns", "web", []byte(`{"spec":{"replicas":4}}`), "me")
	if err != nil || *set.Spec.Replicas != 4 {
		t.Fatalf("DryRunApplySet = %+v, %v", set, err)
	}
	q := got.URL.Query()
	if got.Method != http.MethodPatch || got.URL.Path != "/apis/ordinal.dev/v1/namespaces/ns/statefulsets/web" ||
		got.Header.Get("Content-Type") != "application/apply-patch+yaml" || q.Get("dryRun") != "All" || q.Get("force") != "true" ||
		q.Get("fieldManager") != "me" || string(body) != `{"spec":{"replicas":4}}` {
		t.Errorf("request %s %s %q %v body %s", got.Method, got.URL.Path, got.Header.Get("Content-Type"), q, body)
	}
}

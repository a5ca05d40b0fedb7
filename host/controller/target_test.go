package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/snapshot"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
)

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
	rc, err := newRESTClients(&rest.Config{Host: srv.URL, QPS: -1}, snapshot.CRDTarget)
	if err != nil {
		t.Fatal(err)
	}
	inf := customSetInformer(rc[snapshot.CRDTarget.GroupVersion], snapshot.CRDTarget, Config{Namespace: "ns"}, func(o *metav1.ListOptions) { o.LabelSelector = "tier=db" })
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

func TestStatusBodyScaleSelector(t *testing.T) {
	setJSON := []byte(`{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","metadata":{"name":"web","resourceVersion":"7"},` +
		`"spec":{"selector":{"matchLabels":{"app":"web","tier":"db"},"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}},"status":{"replicas":1,"selector":"stale"}}`)
	action := []byte(`{"status":{"replicas":3,"observedGeneration":2}}`)
	for _, tc := range []struct {
		target snapshot.Target
		want   string
	}{
		{snapshot.CRDTarget, `{"observedGeneration":2,"replicas":3,"selector":"app=web,tier=db,zone in (a,b)"}`},
		{snapshot.StatefulSetTarget, `{"replicas":3,"observedGeneration":2}`},
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

func TestManagerRefusesAMissingCRD(t *testing.T) {
	targets := []snapshot.Target{snapshot.CRDTarget, snapshot.StatefulSetTarget}
	rc, err := newRESTClients(&rest.Config{Host: "http://127.0.0.1:1"}, targets...)
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	m, err := newManager(Config{Module: &module.Ref{}, Targets: targets}, client, rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.controllers) != 2 || m.controllers[0].target != snapshot.CRDTarget || m.controllers[1].target != snapshot.StatefulSetTarget {
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
	if _, err := newManager(Config{Module: &module.Ref{}, Targets: []snapshot.Target{snapshot.CRDTarget, snapshot.CRDTarget}}, client, rc); err == nil {
		t.Errorf("a target twice: no error")
	}
}

// The informer transform keeps who wrote what when (otherController reads it), not the field sets: the
// snapshot, built from the informers' objects, never carries managedFields (snapshot.Build drops them).
func TestInformerTransformTrimsManagedFields(t *testing.T) {
	p := kubetest.Pod("web-0", "ns", nil, kubetest.ControllerRef("StatefulSet", "web", "set-uid"))
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}}}
	obj, _ := trimManagedFields(p)
	if got := obj.(*corev1.Pod).ManagedFields; len(got) != 1 || got[0].Manager != "kubectl" || got[0].FieldsV1 != nil {
		t.Errorf("the informer transform kept %+v, want the entry without its fields", got)
	}
}

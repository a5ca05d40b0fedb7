package snapshot

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// A custom kind's sets are listed and watched through its JSON REST client and decoded into apps/v1's Go
// type, with the list options tweaked and managedFields trimmed, as the controller's informer on them.
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
	inf, lister, err := NewSetInformer(&rest.Config{Host: srv.URL, QPS: -1}, nil, CRDTarget, "ns", func(o *metav1.ListOptions) { o.LabelSelector = "tier=db" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a budget
	defer cancel()
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("not synced")
	}
	for _, name := range []string{"web", "db"} {
		var set *appsv1.StatefulSet
		for set == nil { // until the watch event arrives
			if set, _ = lister.StatefulSets("ns").Get(name); set == nil {
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

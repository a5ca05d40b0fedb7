package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
		s, err := tc.target.Scheme()
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
	if _, err := (Target{GroupVersion: CRDTarget.GroupVersion, Kind: "Other", Resource: "others", Custom: true}).Scheme(); err == nil {
		t.Errorf("a custom kind without Go types has a scheme")
	}
}

// The CRD's informer lists and watches through its JSON REST client into *appsv1.StatefulSet, with the

// label selector, and drops managed field sets as the shared informers do; status.selector (not in

// apps/v1's status) is ignored.

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
			snap, err := Build(Objects{Set: &set}, CRDTarget, time.Unix(1e9, 0), nil)
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
	set := kubetest.Set()
	set.Spec.Template.Labels = map[string]string{"app": "other"}
	_, err := Build(Objects{Set: set}, CRDTarget, time.Unix(1e9, 0), nil)
	var invalid *InvalidSetError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), "`selector` does not match template `labels`") {
		t.Fatalf("Build of an invalid CRD set: %v, want an InvalidSetError", err)
	}
	if _, err := Build(Objects{Set: set}, StatefulSetTarget, time.Unix(1e9, 0), nil); err != nil {
		t.Errorf("apps/v1: %v", err)
	}
}

// updateStatus of a CRD set also writes status.selector (its scale subresource's labelSelectorPath),

// which the plan's apps/v1 status lacks; apps/v1's body is the plan's status alone.

// Without the CRD the controller does not start: the error names the CRD and how to install it.

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

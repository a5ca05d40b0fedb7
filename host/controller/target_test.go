package controller

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

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
		err := m.waitServed(context.Background(), 20*time.Millisecond, time.Millisecond) // never served: refused whatever the wait
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "install the CustomResourceDefinition statefulsets.ordinal.dev") || !strings.Contains(err.Error(), "crd.yaml")) {
			t.Errorf("%s: error %q does not say which CRD to install and how", tc.name, err)
		}
	}
	// a CRD applied just before: discovery serves it from its third answer on, and the controller starts
	installed := []*metav1.APIResourceList{{GroupVersion: "ordinal.dev/v1", APIResources: []metav1.APIResource{{Name: "statefulsets"}}}}
	disc.Resources = nil
	answers := 0
	disc.PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
		if answers++; answers == 3 {
			disc.Resources = installed
		}
		return false, nil, nil
	})
	if err := m.waitServed(context.Background(), time.Hour, time.Millisecond); err != nil || answers != 3 {
		t.Errorf("a CRD served from discovery's third answer: %v after %d answers", err, answers)
	}
	if _, err := newManager(Config{Module: &module.Ref{}, Targets: []snapshot.Target{snapshot.CRDTarget, snapshot.CRDTarget}}, client, rc); err == nil {
		t.Errorf("a target twice: no error")
	}
}

package crd

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

const setJSON = `{
  "apiVersion": "ordinal.dev/v1", "kind": "StatefulSet",
  "metadata": {"name": "web", "namespace": "prod", "uid": "u1", "resourceVersion": "7"},
  "spec": {
    "replicas": 3, "serviceName": "web",
    "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}},
    "volumeClaimTemplates": [{"metadata": {"name": "data", "labels": {"tier": "db"}}, "spec": {"accessModes": ["ReadWriteOnce"]}}]
  },
  "status": {"replicas": 3, "readyReplicas": 2, "selector": "app=web"}
}`

func codecs(t *testing.T) serializer.CodecFactory {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return serializer.NewCodecFactory(s)
}

// An ordinal.dev/v1 StatefulSet decodes into apps/v1's Go type; status.selector, which apps/v1 lacks, is
// dropped, not an error.
func TestDecodeStatefulSet(t *testing.T) {
	obj, gvk, err := codecs(t).UniversalDeserializer().Decode([]byte(setJSON), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *gvk != GroupVersion.WithKind(Kind) {
		t.Errorf("kind %v, want %v", gvk, GroupVersion.WithKind(Kind))
	}
	set, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		t.Fatalf("decoded a %T, want *appsv1.StatefulSet", obj)
	}
	if set.Name != "web" || set.Namespace != "prod" || set.UID != "u1" || set.ResourceVersion != "7" {
		t.Errorf("metadata %+v", set.ObjectMeta)
	}
	if set.Spec.Replicas == nil || *set.Spec.Replicas != 3 || set.Spec.ServiceName != "web" ||
		set.Spec.Selector.MatchLabels["app"] != "web" || set.Spec.Template.Labels["app"] != "web" ||
		set.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" ||
		set.Spec.VolumeClaimTemplates[0].Labels["tier"] != "db" {
		t.Errorf("spec %+v", set.Spec)
	}
	if set.Status.Replicas != 3 || set.Status.ReadyReplicas != 2 {
		t.Errorf("status %+v", set.Status)
	}
	if set.APIVersion != "ordinal.dev/v1" || set.Kind != Kind {
		t.Errorf("TypeMeta %+v", set.TypeMeta)
	}
}

func TestDecodeStatefulSetList(t *testing.T) {
	list := `{"apiVersion": "ordinal.dev/v1", "kind": "StatefulSetList", "metadata": {"resourceVersion": "9"},
	  "items": [` + setJSON + `, {"metadata": {"name": "db"}, "spec": {"selector": {}, "template": {}}}]}`
	obj, _, err := codecs(t).UniversalDeserializer().Decode([]byte(list), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := obj.(*appsv1.StatefulSetList)
	if !ok {
		t.Fatalf("decoded a %T, want *appsv1.StatefulSetList", obj)
	}
	if l.ResourceVersion != "9" || len(l.Items) != 2 || l.Items[0].Name != "web" || l.Items[1].Name != "db" {
		t.Errorf("list %+v", l)
	}
}

// The meta/v1 options a typed REST client sends (list, watch) are registered under the group version, and
// the scheme maps the Go type back to ordinal.dev/v1.
func TestSchemeKinds(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	gvks, _, err := s.ObjectKinds(&appsv1.StatefulSet{})
	if err != nil || len(gvks) != 1 || gvks[0] != GroupVersion.WithKind(Kind) {
		t.Errorf("ObjectKinds(*appsv1.StatefulSet) = %v, %v", gvks, err)
	}
	if !s.Recognizes(GroupVersion.WithKind("ListOptions")) || !s.Recognizes(GroupVersion.WithKind("WatchEvent")) {
		t.Error("meta/v1 ListOptions or WatchEvent not registered under ordinal.dev/v1")
	}
	q, err := runtime.NewParameterCodec(s).EncodeParameters(&metav1.ListOptions{LabelSelector: "app=web", Watch: true}, GroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if q.Get("labelSelector") != "app=web" || q.Get("watch") != "true" {
		t.Errorf("list options as query %v", q)
	}
}

package kube

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// A defaulted object is a fixed point, as API-server defaulting is: defaulting what kube-apiserver
// stored changes nothing, for every answer of the corpus.
func TestDefaultingIsIdempotent(t *testing.T) {
	for _, fx := range kubetest.Fixtures(t, fixturesDir) {
		o := fx.Answer
		before := kubetest.JSON(t, o)
		switch fx.Kind {
		case "StatefulSet":
			DefaultStatefulSet(o)
		case "Pod":
			DefaultPod(o, jsonobj.GetStr(o, "metadata.namespace"))
		case "PersistentVolumeClaim":
			DefaultClaim(o, jsonobj.GetStr(o, "metadata.namespace"))
		}
		if d := jsoncmp.Diff(before, kubetest.JSON(t, o)); d != "" {
			t.Errorf("%s: %s", fx.Name, d)
		}
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]string{
		"nginx": "Always", "nginx:latest": "Always", "nginx:1.2": "IfNotPresent",
		"example.com:5000/x": "Always", "example.com:5000/x:v1": "IfNotPresent", "x@sha256:ab": "IfNotPresent",
	} {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("%s: %s, want %s", image, got, want)
		}
	}
}

// DefaultStatefulSetJSON gives a minimal set apps/v1's defaults, keeps integers exact, and is the identity
// on its own answer (byte for byte: the controller hashes what it stores).
func TestDefaultStatefulSetJSON(t *testing.T) {
	in := `{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"serviceName":"web",
	 "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
	 "spec":{"containers":[{"name":"c","image":"nginx:1.27","resources":{"limits":{"memory":"1024Mi"}}}],"activeDeadlineSeconds":9007199254740993}}}}`
	out, err := DefaultStatefulSetJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	o, err := jsonobj.DecodeObj(out)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"metadata.namespace":                                        "default",
		"spec.replicas":                                             "1",
		"spec.podManagementPolicy":                                  "OrderedReady",
		"spec.updateStrategy.type":                                  "RollingUpdate",
		"spec.updateStrategy.rollingUpdate.partition":               "0",
		"spec.updateStrategy.rollingUpdate.maxUnavailable":          "1",
		"spec.revisionHistoryLimit":                                 "10",
		"spec.persistentVolumeClaimRetentionPolicy.whenDeleted":     "Retain",
		"spec.persistentVolumeClaimRetentionPolicy.whenScaled":      "Retain",
		"spec.template.spec.restartPolicy":                          "Always",
		"spec.template.spec.terminationGracePeriodSeconds":          "30",
		"spec.template.spec.dnsPolicy":                              "ClusterFirst",
		"spec.template.spec.schedulerName":                          "default-scheduler",
		"spec.template.spec.activeDeadlineSeconds":                  "9007199254740993", // beyond float64's exact integers
		"spec.template.spec.containers[0].terminationMessagePath":   "/dev/termination-log",
		"spec.template.spec.containers[0].terminationMessagePolicy": "File",
		"spec.template.spec.containers[0].imagePullPolicy":          "IfNotPresent",
		"spec.template.spec.containers[0].resources.limits.memory":  "1Gi",
		"status.replicas":                                           "0",
	} {
		if got := fmt.Sprint(jsonobj.Get(o, path)); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	if err := ValidateStatefulSet(o, Gates{}); err != nil {
		t.Errorf("the defaulted set is refused: %v", err)
	}
	again, err := DefaultStatefulSetJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, out) {
		t.Errorf("defaulting a defaulted set changed it:\n%s\n%s", out, again)
	}
	if _, err := DefaultStatefulSetJSON([]byte(`[1]`)); err == nil {
		t.Error("a JSON array was taken for a set")
	}
}

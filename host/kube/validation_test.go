package kube

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

const validSet = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"replicas":2,"serviceName":"web",
 "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}},
 "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}}`

// checkAnswer fails unless err is the API server's answer: nothing when want is "", else a StatusError of
// that reason, its code and message.
func checkAnswer(t *testing.T, err error, reason metav1.StatusReason, want string) {
	t.Helper()
	var se *apierrors.StatusError
	switch {
	case want == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case want == "":
	case !errors.As(err, &se) || se.ErrStatus.Reason != reason || se.ErrStatus.Message != want:
		t.Fatalf("got  %v\nwant %s: %s", err, reason, want)
	case reason == metav1.StatusReasonInvalid && !apierrors.IsInvalid(err), reason == metav1.StatusReasonBadRequest && !apierrors.IsBadRequest(err):
		t.Fatalf("code %d for %s", se.ErrStatus.Code, reason)
	}
}

// A StatefulSet create kube-apiserver refuses is refused, with its message (kube-apiserver v1.37.2's
// answers; e2e/validation_test.go checks them against the live one).
func TestCreateValidationIsTheAPIServers(t *testing.T) {
	for _, c := range []struct {
		name   string
		edit   func(jsonobj.Obj)
		reason metav1.StatusReason
		want   string // "" = accepted
	}{
		{"valid", func(jsonobj.Obj) {}, "", ""},
		{"name", func(o jsonobj.Obj) { jsonobj.Set(o, "metadata.name", "Web_1") }, metav1.StatusReasonInvalid,
			`StatefulSet.apps "Web_1" is invalid: metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"selector", func(o jsonobj.Obj) { jsonobj.Set(o, "spec.selector.matchLabels.app", "db") }, metav1.StatusReasonInvalid,
			`StatefulSet.apps "web" is invalid: spec.template.metadata.labels: Invalid value: {"app":"web"}: ` + "`selector` does not match template `labels`"},
		{"podManagementPolicy", func(o jsonobj.Obj) { jsonobj.Set(o, "spec.podManagementPolicy", "Fast") }, metav1.StatusReasonInvalid,
			`StatefulSet.apps "web" is invalid: spec.podManagementPolicy: Invalid value: "Fast": must be 'OrderedReady' or 'Parallel'`},
		{"unknown field", func(o jsonobj.Obj) { jsonobj.Set(o, "spec.replica", jsonobj.Num(3)) }, metav1.StatusReasonBadRequest,
			`StatefulSet in version "v1" cannot be handled as a StatefulSet: strict decoding error: unknown field "spec.replica"`},
		{"CRD kind", func(o jsonobj.Obj) { o["apiVersion"] = "ordinal.dev/v1" }, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, _ := jsonobj.DecodeObj([]byte(validSet))
			c.edit(o)
			DefaultStatefulSet(o)
			checkAnswer(t, ValidateStatefulSet(o, Gates{}), c.reason, c.want)
		})
	}
}

// A StatefulSet update kube-apiserver refuses is refused, with its message, and what it accepts is
// accepted, a negative revisionHistoryLimit included. (host/replay's TestUpdateValidationIsTheAPIServers
// checks the same through its in-memory API server.)
func TestUpdateValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(jsonobj.Obj)
		want string // "" = accepted
	}{
		{"serviceName", func(o jsonobj.Obj) { jsonobj.Set(o, "spec.serviceName", "other") }, `StatefulSet.apps "web" is invalid: spec.serviceName: Invalid value: "other": field is immutable`},
		{"claim template storage spelled otherwise", func(o jsonobj.Obj) {
			jsonobj.Set(jsonobj.GetArr(o, "spec.volumeClaimTemplates")[0].(jsonobj.Obj), "spec.resources.requests.storage", "1024Mi")
		}, ""},
		{"partition negative", func(o jsonobj.Obj) { jsonobj.Set(o, "spec.updateStrategy.rollingUpdate.partition", jsonobj.Num(-1)) },
			`StatefulSet.apps "web" is invalid: spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0`},
		{"maxUnavailable 0", func(o jsonobj.Obj) {
			jsonobj.Set(o, "spec.updateStrategy.rollingUpdate.maxUnavailable", jsonobj.Num(0))
		},
			`StatefulSet.apps "web" is invalid: spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: cannot be 0`},
		{"revisionHistoryLimit negative", func(o jsonobj.Obj) { jsonobj.Set(o, "spec.revisionHistoryLimit", jsonobj.Num(-3)) }, ""},
		// the template's resources (ValidatePodTemplateSpec, ValidateResourceRequirements; e2e
		// TestPreviewRefusesWhatTheAPIServerRefuses sends the same edits to kube-apiserver)
		{"negative cpu limit", resources(`{"limits":{"cpu":"-1"}}`),
			`StatefulSet.apps "web" is invalid: spec.template.spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"negative memory request", resources(`{"requests":{"memory":"-64Mi"}}`),
			`StatefulSet.apps "web" is invalid: spec.template.spec.containers[0].resources.requests[memory]: Invalid value: "-64Mi": must be greater than or equal to 0`},
		{"request above limit", resources(`{"requests":{"cpu":"2000m","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}}`),
			`StatefulSet.apps "web" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`},
		{"request above limit, both", resources(`{"requests":{"cpu":"2","memory":"2Gi"},"limits":{"cpu":"1","memory":"1024Mi"}}`),
			`StatefulSet.apps "web" is invalid: [spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1, ` +
				`spec.template.spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi]`},
		{"request below limit", resources(`{"requests":{"cpu":"500m","memory":"0"},"limits":{"cpu":"1","memory":"1Gi"}}`), ""},
		{"an extended resource's request below its limit", resources(`{"requests":{"example.com/gpu":"1"},"limits":{"example.com/gpu":"2"}}`),
			`StatefulSet.apps "web" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2`},
		{"an init container's negative request", func(o jsonobj.Obj) {
			jsonobj.Set(o, "spec.template.spec.initContainers", []any{jsonobj.Obj{"name": "init", "image": "busybox", "resources": jsonobj.Obj{"requests": jsonobj.Obj{"cpu": "-100m"}}}})
		}, `StatefulSet.apps "web" is invalid: spec.template.spec.initContainers[0].resources.requests[cpu]: Invalid value: "-100m": must be greater than or equal to 0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			old, _ := jsonobj.DecodeObj([]byte(validSet))
			DefaultStatefulSet(old)
			o := jsonobj.CloneObj(old)
			c.edit(o)
			DefaultStatefulSet(o)
			checkAnswer(t, ValidateStatefulSetUpdate(old, o, Gates{}), metav1.StatusReasonInvalid, c.want)
		})
	}
}

// resources sets the template's first container's resources (JSON).
func resources(r string) func(jsonobj.Obj) {
	return func(o jsonobj.Obj) {
		v, err := jsonobj.DecodeObj([]byte(r))
		if err != nil {
			panic(err)
		}
		jsonobj.GetArr(o, "spec.template.spec.containers")[0].(jsonobj.Obj)["resources"] = v
	}
}

// A pod or claim whose name or labels kube-apiserver refuses is refused with its message.
func TestValidateObjectMeta(t *testing.T) {
	ok := jsonobj.Obj{"metadata": jsonobj.Obj{"name": "web-0", "labels": jsonobj.Obj{"app": "web"}}}
	checkAnswer(t, ValidateObjectMeta("Pod", ok), "", "")
	bad := jsonobj.Obj{"metadata": jsonobj.Obj{"name": "web-0", "labels": jsonobj.Obj{"app": "-web"}}}
	checkAnswer(t, ValidateObjectMeta("Pod", bad), metav1.StatusReasonInvalid,
		`Pod "web-0" is invalid: metadata.labels: Invalid value: "-web": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`)
}

// updateStrategy.type Recreate: kube-apiserver v1.37 accepts it on create only with StatefulSetRecreateStrategy
// on, and on an update also with the gate off when the set already has it (AllowStatefulSetRecreateStrategy:
// the gate, or the old set's type); the refusal lists Recreate among the valid values when the gate is on.
func TestRecreateStrategyFollowsItsGate(t *testing.T) {
	recreate := func(o jsonobj.Obj) {
		jsonobj.Set(o, "spec.updateStrategy", jsonobj.Obj{"type": "Recreate"})
	}
	set := func(edit func(jsonobj.Obj)) jsonobj.Obj {
		o, _ := jsonobj.DecodeObj([]byte(validSet))
		if edit != nil {
			edit(o)
		}
		DefaultStatefulSet(o)
		return o
	}
	const off = `StatefulSet.apps "web" is invalid: spec.updateStrategy: Invalid value: {"Type":"Recreate","RollingUpdate":null}: must be 'RollingUpdate' or 'OnDelete'`
	checkAnswer(t, ValidateStatefulSet(set(recreate), Gates{}), metav1.StatusReasonInvalid, off)
	checkAnswer(t, ValidateStatefulSet(set(recreate), Gates{RecreateStrategy: true}), "", "")
	checkAnswer(t, ValidateStatefulSet(set(func(o jsonobj.Obj) {
		jsonobj.Set(o, "spec.updateStrategy", jsonobj.Obj{"type": "Recreate", "rollingUpdate": jsonobj.Obj{"partition": jsonobj.Num(1)}})
	}), Gates{RecreateStrategy: true}), metav1.StatusReasonInvalid,
		`StatefulSet.apps "web" is invalid: spec.updateStrategy.rollingUpdate: Invalid value: {"Partition":1,"MaxUnavailable":null}: only allowed for updateStrategy 'RollingUpdate'`)
	checkAnswer(t, ValidateStatefulSet(set(func(o jsonobj.Obj) { jsonobj.Set(o, "spec.updateStrategy", jsonobj.Obj{"type": "Fast"}) }), Gates{RecreateStrategy: true}),
		metav1.StatusReasonInvalid, `StatefulSet.apps "web" is invalid: spec.updateStrategy: Invalid value: {"Type":"Fast","RollingUpdate":null}: must be 'RollingUpdate', 'OnDelete', or 'Recreate'`)
	// updates with the gate off: a set that has Recreate keeps it; one that has not cannot get it
	checkAnswer(t, ValidateStatefulSetUpdate(set(recreate), set(recreate), Gates{}), "", "")
	checkAnswer(t, ValidateStatefulSetUpdate(set(nil), set(recreate), Gates{}), metav1.StatusReasonInvalid, off)
}

// The QoS class the module and the replay's API server compute (internal/qos, through PodQOS) is the one the
// real kube-apiserver v1.37.2 recorded for every pod of the corpus (testdata/apiserver-defaults), read from
// the pod it stored (the corpus's manifests spell some quantities as JSON numbers, which no stored object
// does), and from that pod with each request equal to its limit left out, as a template the module reads may
// leave it: the rule defaults it, as the API server's defaulting does before it computes the class.
func TestPodQOSIsTheAPIServers(t *testing.T) {
	pods := 0
	for _, fx := range kubetest.Fixtures(t, fixturesDir) {
		if fx.Kind != "Pod" {
			continue
		}
		pods++
		want := jsonobj.GetStr(fx.Answer, "status.qosClass")
		spec := jsonobj.CloneObj(jsonobj.GetObj(fx.Answer, "spec"))
		if got := PodQOS(spec); got != want {
			t.Errorf("%s: %s, kube-apiserver recorded %s", fx.Name, got, want)
		}
		for _, list := range []string{"containers", "initContainers"} {
			for _, c := range jsonobj.GetArr(spec, list) {
				req, lim := jsonobj.GetObj(c, "resources.requests"), jsonobj.GetObj(c, "resources.limits")
				for r, q := range lim {
					if req[r] == q {
						delete(req, r)
					}
				}
			}
		}
		if got := PodQOS(spec); got != want {
			t.Errorf("%s, requests equal to limits left out: %s, kube-apiserver recorded %s", fx.Name, got, want)
		}
	}
	if pods < 20 {
		t.Fatalf("only %d pods in the corpus", pods)
	}
}

// A resize that changes the pod's QoS class is refused with kube-apiserver's message (ValidatePodResize:
// the value is the class the pod keeps); one that keeps it is not.
func TestValidatePodResize(t *testing.T) {
	pod := func(req, lim string) jsonobj.Obj {
		o, _ := jsonobj.DecodeObj([]byte(`{"metadata":{"name":"web-0"},"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"` + req +
			`","memory":"1Gi"},"limits":{"cpu":"` + lim + `","memory":"1Gi"}}}]},"status":{"qosClass":"Guaranteed"}}`))
		return o
	}
	checkAnswer(t, ValidatePodResize(pod("1", "1"), pod("2", "2")), "", "")
	checkAnswer(t, ValidatePodResize(pod("1", "1"), pod("500m", "1")), metav1.StatusReasonInvalid,
		`Pod "web-0" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing`)
}

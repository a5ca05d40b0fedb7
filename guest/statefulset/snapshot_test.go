package statefulset

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

type planErr struct {
	Actions []any `json:"actions"`
	Events  []any `json:"events"`
	Error   *struct {
		Code, Message, Path string
	} `json:"error"`
}

func reconcileErr(t *testing.T, in []byte) planErr {
	t.Helper()
	out := Reconcile(in)
	var p planErr
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("plan is not JSON: %v: %.200s", err, out)
	}
	return p
}

const validSnap = `{"abi":1,"now":"2026-11-22T10:00:00Z","statefulSet":{"metadata":{"name":"web","namespace":"default","uid":"u1","generation":1},
"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}},
"serviceName":"web","podManagementPolicy":"OrderedReady","updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}},"revisionHistoryLimit":10},"status":{"replicas":0}},
"pods":[],"revisions":[],"claims":[]}`

func TestErrorPlans(t *testing.T) {
	mod := func(old, new string) string {
		if !strings.Contains(validSnap, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(validSnap, old, new, 1)
	}
	cases := []struct {
		name, in, code, path, msg string
	}{
		{"empty", ``, CodeInvalidJSON, "", "unexpected end of JSON input"},
		{"truncated", validSnap[:100], CodeInvalidJSON, "", "unexpected end of JSON input"},
		{"garbage", `{"abi":1,]`, CodeInvalidJSON, "", "invalid character"},
		{"array", `[1,2]`, CodeInvalidSnapshot, "", "JSON object"},
		{"no abi", mod(`"abi":1,`, ``), CodeUnsupportedABI, "abi", "no \"abi\""},
		{"abi 2", mod(`"abi":1`, `"abi":2`), CodeUnsupportedABI, "abi", "unsupported ABI version 2"},
		{"abi string", mod(`"abi":1`, `"abi":"1"`), CodeUnsupportedABI, "abi", "got string"},
		{"no set", mod(`"statefulSet"`, `"statefulSetX"`), CodeInvalidSnapshot, "statefulSet", "no statefulSet"},
		{"set array", mod(`"statefulSet":{`, `"statefulSet":[],"x":{`), CodeInvalidSnapshot, "statefulSet", "expected object, got array"},
		{"replicas string", mod(`"replicas":1`, `"replicas":"1"`), CodeInvalidSnapshot, "statefulSet.spec.replicas", "expected integer, got string"},
		{"replicas float", mod(`"replicas":1`, `"replicas":1.5`), CodeInvalidSnapshot, "statefulSet.spec.replicas", "non-integer"},
		{"replicas huge", mod(`"replicas":1`, `"replicas":4294967296`), CodeInvalidSnapshot, "statefulSet.spec.replicas", "out of range"},
		{"replicas missing", mod(`"replicas":1,`, ``), CodeInvalidSnapshot, "statefulSet.spec.replicas", "required"},
		{"unknown gate", mod(`"claims":[]`, `"claims":[],"features":{"Nope":true}`), CodeUnknownFeatureGate, "features.Nope", "Nope"},
		{"gate not bool", mod(`"claims":[]`, `"claims":[],"features":{"MaxUnavailableStatefulSet":1}`), CodeInvalidSnapshot, "features.MaxUnavailableStatefulSet", "boolean"},
		{"no now", mod(`"now":"2026-11-22T10:00:00Z",`, ``), CodeInvalidSnapshot, "now", "now"},
		{"bad now", mod(`"now":"2026-11-22T10:00:00Z"`, `"now":"yesterday"`), CodeInvalidSnapshot, "now", "RFC 3339"},
		{"pods object", mod(`"pods":[]`, `"pods":{}`), CodeInvalidSnapshot, "pods", "expected array, got object"},
		{"pod name number", mod(`"pods":[]`, `"pods":[{"metadata":{"name":5}}]`), CodeInvalidSnapshot, "pods[0].metadata.name", "expected string, got number"},
		{"pod labels", mod(`"pods":[]`, `"pods":[{"metadata":{"name":"web-0","labels":{"a":1}}}]`), CodeInvalidSnapshot, "pods[0].metadata.labels.a", "expected string"},
		// the hostile probe: a number in a pod's annotations went back in the extension's update of the pod,
		// which the host's firewall could not decode (exit 4, a module failure)
		{"pod annotations", mod(`"pods":[]`, `"pods":[{"metadata":{"name":"web-0","annotations":{"a":5}}}]`), CodeInvalidSnapshot, "pods[0].metadata.annotations.a", "expected string, got number"},
		{"pod annotations not an object", mod(`"pods":[]`, `"pods":[{"metadata":{"name":"web-0","annotations":[]}}]`), CodeInvalidSnapshot, "pods[0].metadata.annotations", "expected object, got array"},
		{"claim annotations", mod(`"claims":[]`, `"claims":[{"metadata":{"name":"data-web-0","annotations":{"a":true}}}]`), CodeInvalidSnapshot, "claims[0].metadata.annotations.a", "expected string, got boolean"},
		{"pod bad time", mod(`"pods":[]`, `"pods":[{"metadata":{"name":"web-0","deletionTimestamp":"x"}}]`), CodeInvalidSnapshot, "pods[0].metadata.deletionTimestamp", "RFC 3339"},
		{"duplicate pods", mod(`"pods":[]`, `"pods":[{"metadata":{"name":"web-0"}},{"metadata":{"name":"web-0"}}]`), CodeInvalidSnapshot, "pods[1].metadata.name", "duplicate"},
		{"revision number", mod(`"revisions":[]`, `"revisions":[{"metadata":{"name":"r"},"revision":"1"}]`), CodeInvalidSnapshot, "revisions[0].revision", "expected integer"},
		{"condition type", mod(`"status":{"replicas":0}`, `"status":{"replicas":0,"conditions":[{"type":1}]}`), CodeInvalidSnapshot, "statefulSet.status.conditions[0].type", "expected string"},
		{"maxUnavailable bool", mod(`"partition":0`, `"partition":0,"maxUnavailable":true`), CodeInvalidSnapshot, "statefulSet.spec.updateStrategy.rollingUpdate.maxUnavailable", "integer or string"},
	}
	for _, c := range cases {
		p := reconcileErr(t, []byte(c.in))
		if p.Error == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if p.Error.Code != c.code || p.Error.Path != c.path || !strings.Contains(p.Error.Message, c.msg) {
			t.Errorf("%s: got %+v, want code %s path %q message containing %q", c.name, *p.Error, c.code, c.path, c.msg)
		}
		if len(p.Actions) != 0 || p.Actions == nil || p.Events == nil {
			t.Errorf("%s: an error plan has empty (non-null) actions and events", c.name)
		}
	}
	// the valid fixture works
	if p := reconcileErr(t, []byte(validSnap)); p.Error != nil || len(p.Actions) != 3 {
		t.Errorf("valid snapshot: %+v", p)
	}
}

func TestJunkInput(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	junk := make([]byte, 50<<20)
	r.Read(junk)
	if p := reconcileErr(t, junk); p.Error == nil || p.Error.Code != CodeInvalidJSON {
		t.Errorf("random bytes: %+v", p.Error)
	}
	deep := []byte(strings.Repeat("[", 50<<20))
	if p := reconcileErr(t, deep); p.Error == nil || p.Error.Code != CodeInvalidJSON {
		t.Errorf("deep: %+v", p.Error)
	}
	big := []byte(`{"abi":1,"x":"` + strings.Repeat("a", 50<<20) + `"}`)
	if p := reconcileErr(t, big); p.Error == nil || p.Error.Code != CodeInvalidSnapshot {
		t.Errorf("big string: %+v", p.Error)
	}
	for i := 0; i < 2000; i++ {
		in := []byte(validSnap)
		n := 1 + r.Intn(4)
		for k := 0; k < n; k++ {
			in[r.Intn(len(in))] = "{}[]\":,0a-\\ "[r.Intn(12)]
		}
		reconcileErr(t, in) // must not panic and must be JSON
	}
}

func TestDescribe(t *testing.T) {
	var d struct {
		ABI               int             `json:"abi"`
		Module            string          `json:"module"`
		ModuleVersion     string          `json:"moduleVersion"`
		KubernetesVersion string          `json:"kubernetesVersion"`
		Features          map[string]bool `json:"features"`
	}
	if err := json.Unmarshal(Describe(), &d); err != nil {
		t.Fatal(err)
	}
	if d.ABI != 1 || d.Module != "ordinal" || d.KubernetesVersion != "v1.37.2" || len(d.Features) != 4 ||
		!d.Features[GateMaxUnavailableStatefulSet] || d.Features[GateStatefulSetRecreateStrategy] ||
		!d.Features[GateStatefulSetSemanticRevisionComparison] || !d.Features[GateStaleControllerConsistencyStatefulSet] {
		t.Errorf("describe: %+v", d)
	}
}

package module

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The module ConfigMap's policies: NAME.policy.wasm with its NAME.policy.fixtures.json; other keys are not.
func TestSuppliedPoliciesOfTheModuleConfigMap(t *testing.T) {
	cm := &corev1.ConfigMap{
		BinaryData: map[string][]byte{"ordinal.wasm": []byte("active"), "extended2.wasm": []byte("module"),
			"db-gate.policy.wasm": []byte("policy"), "Bad.policy.wasm": []byte("x"), "lone.policy.wasm": []byte("y")},
		Data: map[string]string{"db-gate.policy.fixtures.json": "[]"},
	}
	got := SuppliedPolicies(cm)
	if len(got) != 2 || string(got["db-gate"].Code) != "policy" || string(got["db-gate"].Fixtures) != "[]" ||
		string(got["lone"].Code) != "y" || got["lone"].Fixtures != nil {
		t.Fatalf("supplied policies %+v", got)
	}
	if _, ok := SuppliedModules(cm, "ordinal.wasm")["db-gate.policy"]; ok {
		t.Fatal("a policy supplied as a module")
	}
}

package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A signal is its value as JSON where the value is JSON, else the string; a ConfigMap gone is no signals.
func TestSignalsFromAConfigMap(t *testing.T) {
	var s Signals
	if s.Get() != nil {
		t.Fatal("signals before any ConfigMap")
	}
	s.Set(&corev1.ConfigMap{Data: map[string]string{"db-healthy": "true", "lag": "3", "state": "degraded", "obj": `{"ok":false}`}})
	got := s.Get()
	for k, want := range map[string]string{"db-healthy": "true", "lag": "3", "state": `"degraded"`, "obj": `{"ok":false}`} {
		if string(got[k]) != want {
			t.Errorf("%s = %s, want %s", k, got[k], want)
		}
	}
	s.Set(nil)
	if len(s.Get()) != 0 {
		t.Fatalf("signals after the ConfigMap is gone: %v", s.Get())
	}
	var none *Signals
	if none.Get() != nil {
		t.Fatal("a nil Signals has signals")
	}
}

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

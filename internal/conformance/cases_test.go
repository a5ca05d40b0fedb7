package conformance

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadAndCheck(t *testing.T) {
	fsys := fstest.MapFS{
		"cases/a/one.snapshot.json": {Data: []byte(`{"abi":1}`)},
		"cases/a/one.plan.json":     {Data: []byte(`{"abi":1,"actions":[]}`)},
		"cases/b/two.snapshot.json": {Data: []byte(`{"abi":1}`)},
		"cases/b/two.plan.json":     {Data: []byte(`{"abi":1,"actions":[{"verb":"delete"}]}`)},
		"cases/README.md":           {Data: []byte(`ignored`)},
	}
	cases, err := Load(fsys, "cases")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Name != "a/one" || cases[1].Name != "b/two" {
		t.Fatalf("cases = %+v", cases)
	}
	if d := cases[0].Check([]byte(`{"actions":[],"abi":1}`)); d != "" {
		t.Errorf("equal plans reported different: %s", d)
	}
	if d := cases[1].Check([]byte(`{"abi":1,"actions":[]}`)); !strings.Contains(d, "expected 1 elements, got 0") {
		t.Errorf("difference not reported: %q", d)
	}
}

func TestLoadRejectsSnapshotWithoutPlan(t *testing.T) {
	fsys := fstest.MapFS{"c/x.snapshot.json": {Data: []byte(`{}`)}}
	if _, err := Load(fsys, "c"); err == nil || !strings.Contains(err.Error(), "has no plan") {
		t.Fatalf("err = %v", err)
	}
}

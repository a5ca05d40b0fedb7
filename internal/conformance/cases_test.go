package conformance

import (
	"bytes"
	"os"
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

// The binary holds every committed case: go:embed leaves out files whose names start with '.' or '_', so
// a case named so would be checked by the tests that read the directory and missed by the hot swap's gate.
func TestAllIsEveryCommittedCase(t *testing.T) {
	onDisk, err := Load(os.DirFS("cases"), ".")
	if err != nil {
		t.Fatal(err)
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 1000 || len(all) != len(onDisk) {
		t.Fatalf("%d cases embedded, %d committed", len(all), len(onDisk))
	}
	for i := range all {
		if all[i].Name != onDisk[i].Name || !bytes.Equal(all[i].Snapshot, onDisk[i].Snapshot) || !bytes.Equal(all[i].Plan, onDisk[i].Plan) {
			t.Fatalf("embedded case %s differs from the committed %s", all[i].Name, onDisk[i].Name)
		}
	}
}

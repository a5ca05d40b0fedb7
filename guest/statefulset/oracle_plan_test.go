package statefulset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/oracleplan"
)

// TestOracleExamples runs the reference harness's own example snapshots and compares with its plans
// converted to ABI v1 as hack/conformance does. It needs the harness's source, so it runs only when asked:
//
//	ORACLE_TESTDATA=../shared/tools/oracle/testdata go test ./guest/statefulset -run TestOracleExamples
//
// The committed conformance cases (internal/conformance/cases) are what make test checks.
func TestOracleExamples(t *testing.T) {
	dir := os.Getenv("ORACLE_TESTDATA")
	if dir == "" {
		t.Skip("set ORACLE_TESTDATA to the reference harness's testdata directory")
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "*.snapshot.json"))
	if len(snaps) == 0 {
		t.Fatalf("no *.snapshot.json in ORACLE_TESTDATA=%s", dir)
	}
	pass := 0
	for _, sp := range snaps {
		want, err := os.ReadFile(strings.TrimSuffix(sp, ".snapshot.json") + ".plan.json")
		if err != nil {
			continue
		}
		in, _ := os.ReadFile(sp)
		var snap map[string]any
		if err := json.Unmarshal(in, &snap); err != nil {
			t.Fatal(err)
		}
		// keep the original bytes (revision data is compared verbatim): splice "abi" in front.
		in = append([]byte(`{"abi":1,`), strings.TrimSpace(string(in))[1:]...)
		got := Reconcile(in)
		if d := diffJSON(oracleToABI(t, want), got); d != "" {
			t.Errorf("%s:\n%s", filepath.Base(sp), d)
			continue
		}
		pass++
	}
	t.Logf("oracle examples: %d/%d pass", pass, len(snaps))
}

func oracleToABI(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := oracleplan.ToABI(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

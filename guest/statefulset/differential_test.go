package statefulset

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// TestDifferentialOracle compares Reconcile with the oracle (the real v1.37.1 controller) on
// random snapshots. It runs only when ORACLE names the oracle binary; DIFF_N sets the count and
// DIFF_SEED the first seed, so DIFF_SEED=123 DIFF_N=1 re-runs one failing seed. To look at one
// snapshot by hand, `ordinal reconcile -f` and `oracle plan -events` take the same file.
func TestDifferentialOracle(t *testing.T) {
	oracle := os.Getenv("ORACLE")
	if oracle == "" {
		t.Skip("set ORACLE=/path/to/oracle to run")
	}
	n := 300
	if s := os.Getenv("DIFF_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	first := int64(0)
	if s := os.Getenv("DIFF_SEED"); s != "" {
		f, _ := strconv.Atoi(s)
		first = int64(f)
	}
	fails := 0
	for seed := first; seed < first+int64(n); seed++ {
		snap := genSnapshot(seed)
		cmd := exec.Command(oracle, "plan", "-events", "-compact", "-")
		cmd.Stdin = bytes.NewReader(snap)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			// The generator makes snapshots the real controller can sync; one it cannot is a bug to see.
			t.Errorf("seed %d: the oracle failed on the generated snapshot: %v %s", seed, err, stderr.String())
			fails++
			continue
		}
		want := oracleToABI(t, out)
		got := Reconcile(snap)
		if d := diffJSON(want, got); d != "" {
			fails++
			if fails <= 8 {
				t.Errorf("seed %d:\n%s", seed, d)
				os.WriteFile("/tmp/diff-"+strconv.FormatInt(seed, 10)+".snapshot.json", snap, 0o644)
			}
		}
	}
	t.Logf("differential: %d/%d agree", n-fails, n)
}

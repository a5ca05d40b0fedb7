package statefulset

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Development aids (skipped unless their environment variable is set):
//
//	SNAP=/abs/path/snapshot.json go test -run TestDebugFile      # print the plan's actions
//	DUMP_SEED=123 go test -run TestDumpSeed                      # write genSnapshot(123) to /tmp/seed.json
//	                                                             # (then: oracle plan -events /tmp/seed.json)

func TestDebugFile(t *testing.T) {
	f := os.Getenv("SNAP")
	if f == "" {
		t.Skip("set SNAP")
	}
	in, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(Reconcile(in), &p); err != nil {
		t.Fatal(err)
	}
	for _, a := range p["actions"].([]any) {
		m := a.(map[string]any)
		fmt.Println(m["verb"], m["kind"], m["name"], m["error"])
	}
	fmt.Println("requeueAfterSeconds:", p["requeueAfterSeconds"], "error:", p["error"])
}

func TestDumpSeed(t *testing.T) {
	s := os.Getenv("DUMP_SEED")
	if s == "" {
		t.Skip("set DUMP_SEED")
	}
	n, _ := strconv.Atoi(s)
	if err := os.WriteFile("/tmp/seed.json", genSnapshot(int64(n)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ORACLE=/path/to/oracle SNAP=/abs/snapshot.json go test -run TestCompareFile: diff against the oracle.
func TestCompareFile(t *testing.T) {
	f, oracle := os.Getenv("SNAP"), os.Getenv("ORACLE")
	if f == "" || oracle == "" {
		t.Skip("set SNAP and ORACLE")
	}
	in, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(oracle, "plan", "-events", "-compact", f).Output()
	if err != nil {
		t.Fatal(err)
	}
	if d := diffJSON(oracleToABI(t, out), Reconcile(in)); d != "" {
		t.Error(d)
	}
}

// DUMP_SEEDS=N go test -run TestDumpSeeds: write genSnapshot(0..N-1) to /tmp/seeds/.
func TestDumpSeeds(t *testing.T) {
	s := os.Getenv("DUMP_SEEDS")
	if s == "" {
		t.Skip("set DUMP_SEEDS")
	}
	n, _ := strconv.Atoi(s)
	os.MkdirAll("/tmp/seeds", 0o755)
	for i := 0; i < n; i++ {
		os.WriteFile(fmt.Sprintf("/tmp/seeds/%05d.json", i), genSnapshot(int64(i)), 0o644)
	}
}

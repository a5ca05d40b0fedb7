package replay

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden timelines under testdata/scenarios")

func scenarioFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no scenarios under testdata/scenarios")
	}
	return files
}

func replayFile(t *testing.T, path, model string) *Timeline {
	t.Helper()
	sc, err := LoadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.Model = model
	tl, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// Every scenario's timeline (its own kubelet model) equals its golden file. `go test
// ./host/replay -run Golden -update` rewrites them; review the diff before committing.
func TestScenarioGoldens(t *testing.T) {
	for _, f := range scenarioFiles(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			tl := replayFile(t, f, "")
			var got bytes.Buffer
			if err := tl.WriteText(&got, false); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(scenarioDir, name+".timeline.txt")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(want, got.Bytes()) {
				t.Fatalf("timeline differs from %s (-update rewrites it):\n%s", golden, lineDiff(string(want), got.String()))
			}
		})
	}
}

func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(lengths differ)"
}

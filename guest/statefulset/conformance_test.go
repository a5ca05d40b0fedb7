package statefulset

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// conformanceDir is where hack/conformance writes the cases (snapshot + expected ABI plan).
const conformanceDir = "../../internal/conformance/cases"

// conformanceSnapshot is one case's snapshot: its name (dir/case), path and bytes.
type conformanceSnapshot struct {
	name, path string
	in         []byte
}

// conformanceSnapshots reads every case's snapshot; none is a failure (a test over all cases would prove
// nothing).
func conformanceSnapshots(t *testing.T) []conformanceSnapshot {
	t.Helper()
	snaps, _ := filepath.Glob(filepath.Join(conformanceDir, "*", "*.snapshot.json"))
	if len(snaps) == 0 {
		t.Fatal("no conformance cases under " + conformanceDir)
	}
	out := make([]conformanceSnapshot, 0, len(snaps))
	for _, sp := range snaps {
		in, err := os.ReadFile(sp)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, conformanceSnapshot{strings.TrimSuffix(strings.TrimPrefix(sp, conformanceDir+"/"), ".snapshot.json"), sp, in})
	}
	return out
}

// TestConformance runs every case under internal/conformance/cases natively and compares the plan
// with the expected one as JSON values (key order irrelevant, numbers compared numerically).
// No normalisation is applied.
func TestConformance(t *testing.T) {
	snaps, _ := filepath.Glob(filepath.Join(conformanceDir, "*", "*.snapshot.json"))
	if len(snaps) == 0 {
		t.Fatal("no conformance cases under " + conformanceDir)
	}
	sort.Strings(snaps)
	pass, fail := 0, 0
	var failed []string
	for _, sp := range snaps {
		pp := strings.TrimSuffix(sp, ".snapshot.json") + ".plan.json"
		name := strings.TrimSuffix(strings.TrimPrefix(sp, conformanceDir+"/"), ".snapshot.json")
		want, err := os.ReadFile(pp)
		if err != nil {
			t.Fatalf("%s has no plan: %v", name, err)
		}
		in, err := os.ReadFile(sp)
		if err != nil {
			t.Fatal(err)
		}
		got := Reconcile(in)
		if d := diffJSON(want, got); d != "" {
			fail++
			failed = append(failed, name)
			t.Errorf("%s:\n%s", name, d)
			continue
		}
		pass++
	}
	t.Logf("conformance: %d passed, %d failed of %d", pass, fail, pass+fail)
	if fail > 0 {
		t.Logf("failed: %s", strings.Join(failed, " "))
	}
}

// diffJSON compares two JSON documents as values and returns a compact diff ("" if equal).
func diffJSON(want, got []byte) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "expected plan is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "plan is not JSON: " + err.Error() + "\n" + string(got)
	}
	var out []string
	diffValue("", w, g, &out)
	if len(out) > 12 {
		out = append(out[:12], fmt.Sprintf("... and %d more differences", len(out)-12))
	}
	return strings.Join(out, "\n")
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

func diffValue(path string, w, g any, out *[]string) {
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("  %s: want %s\n  %s  got %s", path, short(w), strings.Repeat(" ", len(path)), short(g)))
			return
		}
		keys := map[string]bool{}
		for k := range wv {
			keys[k] = true
		}
		for k := range gv {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			a, aok := wv[k]
			b, bok := gv[k]
			p := path + "." + k
			switch {
			case !aok:
				*out = append(*out, fmt.Sprintf("  %s: unexpected %s", p, short(b)))
			case !bok:
				*out = append(*out, fmt.Sprintf("  %s: missing, want %s", p, short(a)))
			default:
				diffValue(p, a, b, out)
			}
		}
	case []any:
		gv, ok := g.([]any)
		if !ok || len(gv) != len(wv) {
			*out = append(*out, fmt.Sprintf("  %s: want %s\n  %s  got %s", path, short(w), strings.Repeat(" ", len(path)), short(g)))
			return
		}
		for i := range wv {
			diffValue(fmt.Sprintf("%s[%d]", path, i), wv[i], gv[i], out)
		}
	default:
		if !reflect.DeepEqual(w, g) {
			*out = append(*out, fmt.Sprintf("  %s: want %s, got %s", path, short(w), short(g)))
		}
	}
}

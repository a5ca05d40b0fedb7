package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The CI example of docs/ci.md is run as written: every "ordinal ..." line of its sh blocks that ends
// with "# exit N" exits N, from the repository root. The workflow's own step is checked to be one of
// them, so the document cannot drift from what was tested.
func TestCIExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^(ordinal [^#\n]+?)\s+# exit (\d+)$`)
	cmds := line.FindAllStringSubmatch(string(doc), -1)
	if len(cmds) < 2 {
		t.Fatalf("docs/ci.md has %d commands with an expected exit code", len(cmds))
	}
	step := regexp.MustCompile(`(?m)^\s+- run: (ordinal preview .+)$`).FindStringSubmatch(string(doc))
	if step == nil {
		t.Fatal("docs/ci.md's workflow has no ordinal preview step")
	}
	seen := false
	for _, c := range cmds {
		seen = seen || strings.TrimSpace(c[1]) == strings.TrimSpace(step[1])
		want, _ := strconv.Atoi(c[2])
		args := strings.Fields(c[1])[1:]
		for i, a := range args {
			if _, err := os.Stat(filepath.Join("../..", a)); err == nil && !strings.HasPrefix(a, "-") {
				args[i] = filepath.Join("../..", a)
			}
		}
		code, _, errs := run(t, "", args...)
		if code != want {
			t.Errorf("%s: exit %d, the document says %d (stderr: %s)", c[1], code, want, errs)
		}
		if want == ExitFailOn && !namesFailOn(args, errs) {
			t.Errorf("%s: stderr does not name the warning --fail-on asked for: %s", c[1], errs)
		}
	}
	if !seen {
		t.Errorf("the workflow's step %q is not among the tested commands", step[1])
	}
}

// namesFailOn reports whether stderr names the code of a warning the command's --fail-on lists.
func namesFailOn(args []string, stderr string) bool {
	for i, a := range args {
		if a != "--fail-on" || i+1 == len(args) {
			continue
		}
		for _, n := range strings.Split(args[i+1], ",") {
			if code, ok := failOnNames[n]; ok && code != "stuck" && code != "limit" && strings.Contains(stderr, "--fail-on: "+code+": ") {
				return true
			}
		}
	}
	return false
}

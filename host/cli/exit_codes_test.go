package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// helpExitCodes is the codes a command's --help lists under "Exit codes:", run as a user runs it.
func helpExitCodes(t *testing.T, args ...string) (codes []int, block string) {
	t.Helper()
	main := Main
	if args[0] == "kubectl" {
		main, args = PluginMain, args[2:]
	}
	var out bytes.Buffer
	if code := main(append(args, "--help"), strings.NewReader(""), &out, io.Discard); code != ExitOK {
		t.Fatalf("%v --help: exit %d", args, code)
	}
	_, block, ok := strings.Cut(out.String(), "\nExit codes:\n")
	if !ok {
		t.Fatalf("%v --help lists no exit codes:\n%s", args, out.String())
	}
	block, _, _ = strings.Cut(block, "\n\n")
	for _, m := range regexp.MustCompile(`(?m)^  (\d)  `).FindAllStringSubmatch(block, -1) {
		n, _ := strconv.Atoi(m[1])
		codes = append(codes, n)
	}
	return codes, block
}

// Every command a user runs lists its exit codes in its --help, and commandExitCodes names no command that
// does not exist.
func TestEveryCommandListsItsExitCodes(t *testing.T) {
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" || c.Name() == "completion" {
			return
		}
		seen[c.CommandPath()] = true
		if c.Runnable() && c.HasParent() && !strings.Contains(c.Long, "\nExit codes:\n") {
			t.Errorf("%s --help lists no exit codes: add it to commandExitCodes", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, root := range CommandTrees() {
		walk(root)
	}
	for path := range commandExitCodes {
		if !seen[path] {
			t.Errorf("commandExitCodes lists %q, which is no command", path)
		}
	}
	// every meaning of the table is some command's: a wording written for a command is the one it shows
	src, err := os.ReadFile("exit_codes.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\t(exit[A-Za-z]+)\s+= exitMeaning\{`).FindAllStringSubmatch(string(src), -1) {
		if n := len(regexp.MustCompile(`\b`+m[1]+`\b`).FindAllIndex(src, -1)); n < 2 {
			t.Errorf("exit_codes.go: the meaning %s is no command's", m[1])
		}
	}
}

// A command's help lists the codes it can return, worded for it: replay prints no plan and cannot exit 3,
// version and the controller load a module but replay nothing. Each command below is run into a failure
// and the code it returns must be one its help lists.
func TestHelpListsTheExitCodesACommandReturns(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want []int
	}{
		{[]string{"reconcile"}, []int{0, 1, 2, 3, 4}},
		{[]string{"replay"}, []int{0, 1, 2, 4, 5, 6, 7, 8, 9}},
		{[]string{"preview"}, []int{0, 1, 2, 4, 6, 7, 8, 9}},
		{[]string{"version"}, []int{0, 1, 4}},
		{[]string{"controller"}, []int{0, 1, 4}},
		{[]string{"snapshot"}, []int{0, 1}},
		{[]string{"kubectl", "ordinal", "status"}, []int{0, 1, 2, 4, 6, 7}},
		{[]string{"kubectl", "ordinal", "pause"}, []int{0, 1}},
	} {
		codes, block := helpExitCodes(t, tc.cmd...)
		if !slices.Equal(codes, tc.want) {
			t.Errorf("%v --help lists exit codes %v, want %v:\n%s", tc.cmd, codes, tc.want, block)
		}
		if said := strings.Contains(block, "plan printed"); said != (tc.cmd[0] == "reconcile") {
			t.Errorf("%v --help: says \"plan printed\" %v:\n%s", tc.cmd, said, block)
		}
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.wasm")
	golden := filepath.Join(dir, "golden.txt")
	for _, f := range []string{bad, golden} {
		if err := os.WriteFile(f, []byte("not this"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scenario := "../../testdata/scenarios/create-parallel.yaml"
	for _, tc := range []struct {
		args  []string
		stdin string
		want  int
	}{
		{[]string{"reconcile"}, `{"abi":1,"now":"2026-11-22T10:00:00Z","statefulSet":{`, ExitRejected},
		{[]string{"replay", scenario, "--golden", golden}, "", ExitGoldenDiffers},
		{[]string{"replay", "../../testdata/scenarios/create-never-ready.yaml"}, "", ExitStuck},
		{[]string{"replay", scenario, "--module", bad}, "", ExitModuleFailure},
		{[]string{"preview", "--scenario", scenario, "-f", "../../examples/rolling-update-next.yaml", "--module", bad}, "", ExitModuleFailure},
		{[]string{"version", "--module", bad}, "", ExitModuleFailure},
		{[]string{"version", "--controller", "127.0.0.1:1"}, "", ExitUsage},
		{[]string{"test", filepath.Join(dir, "missing.yaml")}, "", ExitUsage},
	} {
		code, _, errs := run(t, tc.stdin, tc.args...)
		if code != tc.want {
			t.Errorf("%v: exit %d, want %d: %s", tc.args, code, tc.want, errs)
			continue
		}
		if codes, block := helpExitCodes(t, tc.args[0]); !slices.Contains(codes, code) {
			t.Errorf("%v exits %d, which %s --help does not list:\n%s", tc.args, code, tc.args[0], block)
		}
	}
}

// One mapping for every replay's failure, so `ordinal preview` and `kubectl ordinal preview`/`timeline` exit
// alike: the plugin once mapped a firewall's refusal and an invalid plan to 1 (the input's fault) and a
// rejected snapshot to 1 instead of 2, where `ordinal preview` said 4 and 2.
func TestExitCodeOfReplayFailures(t *testing.T) {
	step := func(err error) error { return fmt.Errorf("step 3: module failed: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"a module that trapped", step(&wasm.Error{Kind: wasm.ErrTrap, Op: "reconcile", Path: "direct"}), ExitModuleFailure},
		{"a module that did not answer", step(&hostplan.ModuleError{Err: errors.New("over a limit")}), ExitModuleFailure},
		{"a plan that does not decode", step(&hostplan.InvalidError{Path: "actions[0].verb", Msg: "unknown"}), ExitModuleFailure},
		{"a plan the firewall refuses", step(&firewall.RefusedError{Set: "default/web"}), ExitModuleFailure},
		{"a rejected snapshot", &replay.RejectedError{Step: 2, Plan: &abi.Error{Code: abi.CodeInvalidSnapshot, Message: "x"}}, ExitRejected},
		{"an invalid world", &replay.InvalidWorldError{Err: errors.New("two sets")}, ExitUsage},
		{"an input error", errors.New("PodDisruptionBudget pdb: spec.minAvailable \"x\""), ExitUsage},
	} {
		if got := exitCodeOf(tc.err); got != tc.want {
			t.Errorf("%s (%v): exit %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

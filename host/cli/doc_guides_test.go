package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The guides' commands run as written. Every ```sh (bash, shell) and ```console block of README.md and
// docs/**/*.md (the generated CLI reference apart) is run, or marked in the Markdown on the line before its fence:
//
//	<!-- test: skip: REASON -->   not run, for the reason given (a live cluster, a server that does not end)
//	<!-- test: assemblyscript --> run when ORDINAL_GUIDE_ASSEMBLYSCRIPT=1, as `make test-policies-guide` sets
//	                              it (docs/policies.md's AssemblyScript walkthrough: node, the npm registry)
//
// A block neither run nor marked fails, and so does a block of commands without a language (```), so that a
// guide cannot show a command no test runs. A guide's blocks run in order in one bash, from a scratch copy of
// the repository's examples/, testdata/ and policies/, with `ordinal` and bin/ordinal being this CLI (the test
// binary, re-executed as cmd/ordinal would run), a scratch HOME and no kubeconfig. A command exits 0, or N when
// it ends in "# exit N"; in a console block each "$ command" is followed by what it prints (standard output and
// error together), which the command's output must match: "..." stands for any lines, a line ending in "..."
// for any line that starts so, and the scratch directory reads as "." and HOME as "~".
func TestGuidesRunAsWritten(t *testing.T) {
	root := filepath.Join("..", "..")
	guides := guideFiles(t, root)
	scratch := guideScratch(t, root)
	ran, assemblyScript := 0, 0
	for _, g := range guides {
		blocks, errs := guideBlocks(t, root, g)
		for _, e := range errs {
			t.Error(e)
		}
		var cmds []guideCmd
		for _, b := range blocks {
			if b.skip == "" {
				cmds = append(cmds, b.cmds...)
			}
			if b.assemblyScript {
				assemblyScript += len(b.cmds)
			}
		}
		if len(cmds) == 0 {
			continue
		}
		t.Run(strings.TrimSuffix(strings.TrimPrefix(rel(root, g), "docs/"), ".md"), func(t *testing.T) {
			runGuide(t, scratch, cmds)
		})
		ran += len(cmds)
		if rel(root, g) == "docs/ci.md" {
			checkCIWorkflow(t, g, cmds)
		}
	}
	if os.Getenv(guideAssemblyScriptEnv) == "1" && assemblyScript < 5 {
		t.Fatalf("%s=1 but %d commands are marked <!-- test: assemblyscript -->: want docs/policies.md's walkthrough", guideAssemblyScriptEnv, assemblyScript)
	}
	if ran < 12 {
		t.Fatalf("ran %d commands of %d guides: the test is not reading the guides' blocks", ran, len(guides))
	}
}

// guideCmd is one command of a guide's block, as bash runs it.
type guideCmd struct {
	where string   // docs/x.md:LINE
	text  string   // the command, continuation lines joined
	exit  int      // the exit code the guide says ("# exit N"), else 0
	shown []string // a console block's lines of output after it; nil: none shown
}

// guideBlock is a fenced block of a guide that runs: its commands, or why it does not run.
type guideBlock struct {
	skip           string
	assemblyScript bool // marked <!-- test: assemblyscript -->
	cmds           []guideCmd
}

var (
	guideFenceRE   = regexp.MustCompile("^```([a-z]*)\\s*$")
	guideMarkRE    = regexp.MustCompile(`^<!-- test: (.*?) -->$`)
	guideExitRE    = regexp.MustCompile(`\s+# exit (\d+)$`)
	guideBareCmdRE = regexp.MustCompile(`^(\$ |(bin/)?ordinal |kubectl |make |go |bash |helm |cp |npm )`)
	guideLangs     = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}
)

// guideFiles are README.md and docs/**/*.md but the generated CLI reference (its blocks are usage lines).
func guideFiles(t *testing.T, root string) []string {
	out := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && rel(root, p) != "docs/reference/cli.md" {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 11 {
		t.Fatalf("found %d guides (README.md and docs/)", len(out))
	}
	return out
}

// guideBlocks reads a guide's runnable blocks, and what is wrong with its marks and fences.
func guideBlocks(t *testing.T, root, file string) ([]guideBlock, []string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var blocks []guideBlock
	var errs []string
	prev := "" // the last non-blank line before a fence
	for i := 0; i < len(lines); i++ {
		m := guideFenceRE.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			if strings.TrimSpace(lines[i]) != "" {
				prev = strings.TrimSpace(lines[i])
			}
			continue
		}
		start := i
		end := start + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		body := lines[start+1 : min(end, len(lines))]
		where := fmt.Sprintf("%s:%d", rel(root, file), start+1)
		lang, mark := m[1], guideMarkRE.FindStringSubmatch(prev)
		i, prev = end, ""
		switch {
		case lang == "" && guideBareCmdRE.MatchString(strings.TrimSpace(firstNonBlank(body))):
			errs = append(errs, fmt.Sprintf("%s: a block of commands without a language: make it ```sh or ```console (and run it, or mark why not)", where))
			continue
		case !guideLangs[lang] && strings.HasPrefix(strings.TrimSpace(firstNonBlank(body)), "$ "):
			errs = append(errs, fmt.Sprintf("%s: a transcript of commands in a ```%s block: make it ```console (and run it, or mark why not)", where, lang))
			continue
		case !guideLangs[lang]:
			continue
		}
		skip, err := guideSkip(mark)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		cmds := guideCommands(where, start+2, lang, body)
		if skip == "" && len(cmds) == 0 {
			errs = append(errs, fmt.Sprintf("%s: a ```%s block with no command", where, lang))
		}
		blocks = append(blocks, guideBlock{skip: skip, assemblyScript: mark != nil && mark[1] == "assemblyscript", cmds: cmds})
	}
	return blocks, errs
}

// guideSkip is why a block does not run, from the mark before it ("" : it runs).
func guideSkip(mark []string) (string, error) {
	if mark == nil {
		return "", nil
	}
	switch v := mark[1]; {
	case v == "assemblyscript" && os.Getenv(guideAssemblyScriptEnv) == "1":
		return "", nil
	case v == "assemblyscript":
		return "needs node and the npm registry: run by make test-policies-guide (" + guideAssemblyScriptEnv + "=1)", nil
	case strings.HasPrefix(v, "skip: ") && strings.TrimSpace(strings.TrimPrefix(v, "skip: ")) != "":
		return strings.TrimPrefix(v, "skip: "), nil
	default:
		return "", fmt.Errorf("mark %q: want <!-- test: skip: REASON --> or <!-- test: assemblyscript -->", mark[0])
	}
}

// guideCommands splits a block's lines into commands: in sh, every line that is not blank or a comment (a
// line ending in "\" continued by the next); in console, every "$ " line, the lines up to the next its output.
func guideCommands(where string, firstLine int, lang string, body []string) []guideCmd {
	var out []guideCmd
	file, _, _ := strings.Cut(where, ":")
	for i := 0; i < len(body); i++ {
		l := body[i]
		if lang == "console" {
			if !strings.HasPrefix(l, "$ ") {
				if n := len(out); n > 0 {
					out[n-1].shown = append(out[n-1].shown, l)
				}
				continue
			}
			l = strings.TrimPrefix(l, "$ ")
		} else if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		c := guideCmd{where: fmt.Sprintf("%s:%d", file, firstLine+i), text: l}
		for strings.HasSuffix(c.text, "\\") && i+1 < len(body) {
			i++
			c.text += "\n" + strings.TrimPrefix(body[i], "> ")
		}
		if m := guideExitRE.FindStringSubmatch(c.text); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		if lang == "console" {
			c.shown = []string{}
		}
		out = append(out, c)
	}
	return out
}

func firstNonBlank(lines []string) string {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

// guideScratch is the directory the guides run in: copies of examples/, testdata/ and policies/ (what a
// command may write there stays there), bin/ with this CLI as ordinal and kubectl-ordinal, a HOME.
func guideScratch(t *testing.T, root string) string {
	dir := t.TempDir()
	for _, d := range []string{"examples", "testdata", "policies"} {
		if err := copyTree(filepath.Join(root, d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"bin", "home", "cache"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"ordinal", "kubectl-ordinal"} {
		if err := os.Symlink(self, filepath.Join(dir, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, script := range guideNoCluster {
		if err := os.WriteFile(filepath.Join(dir, "bin", name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// guideNoCluster stands in for kubectl and helm: no guide command reaches a cluster, the machine's or any
// (`kubectl ordinal ...` is the plugin, run as kubectl runs it).
var guideNoCluster = map[string]string{
	"kubectl": "#!/bin/sh\nif [ \"$1\" = ordinal ]; then shift; exec kubectl-ordinal \"$@\"; fi\n" + guideNoClusterSays,
	"helm":    "#!/bin/sh\n" + guideNoClusterSays,
}

const guideNoClusterSays = `echo "$(basename "$0") $*: the guides' test has no cluster: mark the block <!-- test: skip: REASON -->" >&2; exit 127` + "\n"

// copyTree copies the files of src to dst, but for node_modules (a policy kit's packages, fetched).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, r)
		switch {
		case d.IsDir() && d.Name() == "node_modules":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
}

// runGuide runs a guide's commands in order in one bash, each one's exit code and output kept, and checks
// them against what the guide says.
func runGuide(t *testing.T, dir string, cmds []guideCmd) {
	out := t.TempDir()
	var script strings.Builder
	script.WriteString("cd \"$GUIDE_DIR\"\n")
	for i, c := range cmds {
		fmt.Fprintf(&script, "{ %s\n} >\"$GUIDE_OUT/%d.out\" 2>&1 </dev/null; echo $? >\"$GUIDE_OUT/%d.rc\"\n", c.text, i, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a command that never ends (a server)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-c", script.String())
	sh.Env = guideEnv(dir, out)
	if b, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("bash: %v\n%s", err, b)
	}
	for i, c := range cmds {
		rc, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.rc", i)))
		if err != nil {
			t.Errorf("%s: %s: did not run (an earlier command ended the shell?)", c.where, c.text)
			continue
		}
		b, _ := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.out", i)))
		got := normaliseGuideOutput(string(b), dir)
		code, _ := strconv.Atoi(strings.TrimSpace(string(rc)))
		if code != c.exit {
			t.Errorf("%s: %s\nexit %d, the guide says %d; output:\n%s", c.where, c.text, code, c.exit, got)
			continue
		}
		if c.exit == ExitFailOn && !namesFailOn(strings.Fields(c.text), got) {
			t.Errorf("%s: %s\nthe output does not name the warning --fail-on asked for:\n%s", c.where, c.text, got)
		}
		if c.shown != nil {
			if why := matchShown(c.shown, strings.Split(strings.TrimRight(got, "\n"), "\n")); why != "" {
				t.Errorf("%s: %s\nthe output is not what the guide shows: %s\noutput:\n%s", c.where, c.text, why, got)
			}
		}
	}
}

// guideEnv is the guides' environment: this CLI first on PATH, a scratch HOME and cache, no cluster.
func guideEnv(dir, out string) []string {
	env := []string{"GUIDE_DIR=" + dir, "GUIDE_OUT=" + out, guideCLIEnv + "=1",
		"PATH=" + filepath.Join(dir, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"), "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"KUBECONFIG=" + filepath.Join(dir, "no-kubeconfig"), "LANG=C.UTF-8", "TZ=UTC"}
	for _, k := range []string{"GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "TMPDIR", "npm_config_cache"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if _, ok := os.LookupEnv("npm_config_cache"); !ok { // packages fetched once are not fetched again
		if home, err := os.UserHomeDir(); err == nil {
			env = append(env, "npm_config_cache="+filepath.Join(home, ".npm"))
		}
	}
	return env
}

// normaliseGuideOutput reads the scratch directory as "." and HOME as "~", trailing spaces trimmed.
func normaliseGuideOutput(s, dir string) string {
	s = strings.ReplaceAll(s, filepath.Join(dir, "home"), "~")
	s = strings.ReplaceAll(s, dir+string(filepath.Separator), "")
	s = strings.ReplaceAll(s, dir, ".")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// matchShown says how got differs from what a guide shows ("" : it matches): the shown lines in order, a
// "..." line standing for any lines, a line ending in "..." for any line with that start.
func matchShown(shown, got []string) string {
	for len(shown) > 0 && strings.TrimSpace(shown[len(shown)-1]) == "" {
		shown = shown[:len(shown)-1]
	}
	if matchLines(shown, got) {
		return ""
	}
	for i := range shown { // the longest start of shown that matches, to name the first line that does not
		if !matchLines(append(append([]string{}, shown[:i+1]...), "..."), got) {
			return fmt.Sprintf("the guide's line %q (output line %d of what it shows) is not there", shown[i], i+1)
		}
	}
	return "the output has more lines than the guide shows (end it with \"...\" to show a part)"
}

func matchLines(shown, got []string) bool {
	if len(shown) == 0 {
		return len(got) == 0
	}
	s := strings.TrimRight(shown[0], " \t")
	if strings.TrimSpace(s) == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(shown[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 {
		return false
	}
	if prefix, ok := strings.CutSuffix(s, "..."); ok && strings.HasPrefix(got[0], prefix) || s == got[0] {
		return matchLines(shown[1:], got[1:])
	}
	return false
}

// checkCIWorkflow: the workflow docs/ci.md shows runs one of the commands the test ran, so the workflow
// cannot drift from what was tested.
func checkCIWorkflow(t *testing.T, file string, cmds []guideCmd) {
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	step := regexp.MustCompile(`(?m)^\s+- run: (ordinal preview .+)$`).FindStringSubmatch(string(doc))
	if step == nil {
		t.Fatal("docs/ci.md's workflow has no ordinal preview step")
	}
	for _, c := range cmds {
		if strings.TrimSpace(guideExitRE.ReplaceAllString(c.text, "")) == strings.TrimSpace(step[1]) {
			return
		}
	}
	t.Errorf("docs/ci.md's workflow step %q is not among the commands the test ran", step[1])
}

// guideAssemblyScriptEnv=1 runs the blocks marked <!-- test: assemblyscript --> too (docs/policies.md's
// AssemblyScript walkthrough: it builds the template with node, its packages from the npm registry);
// `make test-policies-guide` sets it, after `make node`.
const guideAssemblyScriptEnv = "ORDINAL_GUIDE_ASSEMBLYSCRIPT"

// guideCLIEnv set makes the test binary the ordinal CLI (TestMain): the guides' commands run it as
// cmd/ordinal runs the CLI, by the name it is called (kubectl-ordinal: the plugin).
const guideCLIEnv = "ORDINAL_GUIDE_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(guideCLIEnv) == "1" {
		switch {
		case IsPluginCompletion(os.Args[0]):
			os.Exit(PluginCompleteMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		case IsPlugin(os.Args[0]):
			os.Exit(PluginMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		}
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// What a guide shows matches the output line for line, "..." standing for any lines (none too) and a line
// ending in "..." for a line with that start; anything else, a line missing or one more, does not.
func TestGuideShownOutputMatching(t *testing.T) {
	got := []string{"preview: StatefulSet web", "steps:", "  +0s delete Pod web-4", "ordinal: --fail-on: ClaimsDeleted: x"}
	for _, c := range []struct {
		shown []string
		ok    bool
	}{
		{[]string{"preview: StatefulSet web", "steps:", "  +0s delete Pod web-4", "ordinal: --fail-on: ClaimsDeleted: x"}, true},
		{[]string{"...", "ordinal: --fail-on: ClaimsDeleted: x"}, true},
		{[]string{"preview: StatefulSet web", "...", "ordinal: --fail-on: ClaimsDeleted: x", "..."}, true},
		{[]string{"preview: StatefulSet web", "...", "  +0s delete...", "ordinal: --fail-on: ClaimsDeleted: x"}, true},
		{[]string{"preview: StatefulSet web", "..."}, true},
		{[]string{"preview: StatefulSet web"}, false},                    // the rest not shown, and no "..."
		{[]string{"...", "ordinal: --fail-on: ClaimsDeleted: y"}, false}, // a line that is not there
		{[]string{"steps:", "..."}, false},                               // not the first line
		{[]string{"...", "  +0s create..."}, false},                      // a start that no line has
	} {
		if why := matchShown(c.shown, got); (why == "") != c.ok {
			t.Errorf("shown %q: match %v (%s), want %v", c.shown, why == "", why, c.ok)
		}
	}
}

// README.md's `make demo` block shows what the demo prints, so that the first output a newcomer sees is the
// one the README promised. make cannot run in the guides' scratch directory (the demo builds bin/ordinal
// first), so the test runs the Makefile's recipes as make does: the build recipe's lines only echoed (this
// CLI is bin/ordinal), the demo recipe's run, each line echoed first unless it starts with "@".
func TestReadmeDemoAsShown(t *testing.T) {
	root := filepath.Join("..", "..")
	shown := readmeDemoShown(t, filepath.Join(root, "README.md"))
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("set -e\ncd \"$GUIDE_DIR\"\n")
	for _, target := range []string{"build", "demo"} {
		for _, l := range makeRecipe(t, string(mk), target) {
			l = strings.ReplaceAll(strings.ReplaceAll(l, "$(GO)", "go"), "$$", "$")
			run, silent := strings.CutPrefix(l, "@")
			if !silent {
				fmt.Fprintf(&script, "echo %s\n", strconv.Quote(run))
			}
			if target == "demo" {
				script.WriteString(run + "\n")
			}
		}
	}
	dir := guideScratch(t, root)
	sh := exec.Command("bash", "-c", script.String())
	sh.Env = guideEnv(dir, t.TempDir())
	b, err := sh.CombinedOutput()
	got := normaliseGuideOutput(string(b), dir)
	if err != nil {
		t.Fatalf("the demo's recipe: %v\n%s", err, got)
	}
	if why := matchShown(shown, strings.Split(strings.TrimRight(got, "\n"), "\n")); why != "" {
		t.Errorf("README.md's make demo: the output is not what it shows: %s\noutput:\n%s", why, got)
	}
}

// readmeDemoShown is the output README.md shows after "$ make demo" in a console block.
func readmeDemoShown(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "```console\n$ make demo\n")
	if !ok {
		t.Fatal("README.md has no ```console block that starts with $ make demo")
	}
	block, _, _ := strings.Cut(after, "```")
	return strings.Split(strings.TrimRight(block, "\n"), "\n")
}

// makeRecipe is a Makefile target's recipe: the tab-indented lines after "TARGET:", a line ending in "\"
// joined with the next as make joins them.
func makeRecipe(t *testing.T, makefile, target string) []string {
	var out []string
	in, continued := false, false
	for _, l := range strings.Split(makefile, "\n") {
		switch {
		case strings.HasPrefix(l, target+":"):
			in = true
		case in && continued:
			out[len(out)-1] += "\n" + l
		case in && strings.HasPrefix(l, "\t"):
			out = append(out, strings.TrimPrefix(l, "\t"))
		case in:
			in = false
		}
		continued = in && strings.HasSuffix(l, "\\")
	}
	if len(out) == 0 {
		t.Fatalf("the Makefile has no recipe for %s", target)
	}
	return out
}

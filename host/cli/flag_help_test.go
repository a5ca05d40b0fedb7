package cli

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every line of every command's --help, `ordinal` and `kubectl ordinal` alike, fits helpWidth: its
// description, usage and list of commands as well as its flags (a walkthrough found flag lines of 227
// characters, wrapped three times on a terminal, and descriptions of 120). A flag's usage says what the flag
// is in one short line; how it behaves belongs in the command's description or the docs. What --help prints
// is the description the CLI reference has.
func TestHelpLinesAreShort(t *testing.T) {
	t.Setenv("HOME", "~") // --cache-dir's default is under the home directory: the same on every machine
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	mains := map[string]func([]string, io.Reader, io.Writer, io.Writer) int{"ordinal": Main, "kubectl ordinal": PluginMain}
	flagLines, lines := 0, 0
	for _, root := range CommandTrees() {
		var walk func(c *cobra.Command)
		walk = func(c *cobra.Command) {
			path := strings.Fields(c.CommandPath())
			name := path[0]
			if name == "kubectl" {
				name, path = "kubectl ordinal", path[2:]
			} else {
				path = path[1:]
			}
			var out bytes.Buffer
			if code := mains[name](append(path, "--help"), strings.NewReader(""), &out, io.Discard); code != ExitOK {
				t.Fatalf("%s --help: exit %d", c.CommandPath(), code)
			}
			// Help finishes its texts when it is printed (helpOnDemand): what it prints is the reference's.
			if long := strings.TrimRight(c.Long, " \t\n"); !strings.Contains(out.String(), long) {
				t.Errorf("%s --help does not print the description CommandTrees has:\n%s\n--- printed:\n%s", c.CommandPath(), long, out.String())
			}
			inFlags := false
			for _, l := range strings.Split(out.String(), "\n") {
				switch {
				case l == "Flags:" || l == "Global Flags:":
					inFlags = true
				case l == "":
					inFlags = false
				case inFlags:
					flagLines++
				}
				lines++
				if len([]rune(l)) > helpWidth {
					t.Errorf("%s --help: a line of %d characters (at most %d):\n%s", c.CommandPath(), len([]rune(l)), helpWidth, l)
				}
			}
			for _, sub := range c.Commands() {
				walk(sub)
			}
		}
		walk(root)
	}
	if flagLines < 100 || lines < 1000 {
		t.Fatalf("only %d lines, %d of them flag lines, found: is the help's layout what the test expects?", lines, flagLines)
	}
}

// Each command's --help names exactly the --fail-on conditions the command takes: replay's once listed the
// preview's warnings too, then said it knew none of them.
func TestFailOnHelpNamesWhatTheCommandTakes(t *testing.T) {
	for _, c := range []struct {
		main            func([]string, io.Reader, io.Writer, io.Writer) int
		args            []string
		previewWarnings bool
	}{
		{Main, []string{"replay", "--help"}, false},
		{Main, []string{"preview", "--help"}, true},
		{PluginMain, []string{"preview", "--help"}, true},
	} {
		var out bytes.Buffer
		if code := c.main(c.args, strings.NewReader(""), &out, io.Discard); code != ExitOK {
			t.Fatalf("%v: exit %d", c.args, code)
		}
		help := strings.Join(strings.Fields(out.String()), " ") // unwrapped: a name may straddle a line's end
		for name := range failOnNames {
			_, err := parseFailOn(name, c.previewWarnings)
			named := regexp.MustCompile(`(^|[^a-z-])` + name + `([^a-z-]|$)`).MatchString(help)
			if named != (err == nil) {
				t.Errorf("%v: --fail-on %s: named in the help %v, taken %v (%v)", c.args, name, named, err == nil, err)
			}
		}
	}
}

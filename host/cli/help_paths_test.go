package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var repoPath = regexp.MustCompile(`\b(?:docs|examples|scripts|testdata|abi|host|hack|e2e)/[A-Za-z0-9_./*-]*[A-Za-z0-9_/*]`)

// Every file or directory a command's help points at exists (`ordinal webhook --help` once named a glob
// that matched nothing).
func TestHelpNamesFilesThatExist(t *testing.T) {
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, p := range repoPath.FindAllString(c.Long+" "+c.Short+" "+c.Example, -1) {
			matches, _ := filepath.Glob(filepath.Join("..", "..", p))
			if _, err := os.Stat(filepath.Join("..", "..", p)); err != nil && len(matches) == 0 {
				t.Errorf("%q --help names %s, which does not exist", c.CommandPath(), p)
			}
			checked++
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			for _, p := range repoPath.FindAllString(f.Usage, -1) {
				if _, err := os.Stat(filepath.Join("..", "..", p)); err != nil {
					t.Errorf("%q --%s names %s, which does not exist", c.CommandPath(), f.Name, p)
				}
				checked++
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	var out bytes.Buffer
	walk(newRootCommand(strings.NewReader(""), &out, &out))
	walk(newPluginRoot(strings.NewReader(""), &out, &out))
	if checked < 5 {
		t.Fatalf("only %d paths found in the help texts: is the pattern wrong?", checked)
	}
}

// `ordinal --help` and `kubectl ordinal --help` list the commands before the exit codes, so that a
// terminal's first screen shows what to run; their own exit codes follow, and where the others are. A
// command's own help keeps its exit codes where they were, in its description.
func TestRootHelpListsCommandsBeforeExitCodes(t *testing.T) {
	for name, main := range map[string]func([]string, io.Reader, io.Writer, io.Writer) int{"ordinal": Main, "kubectl ordinal": PluginMain} {
		var out bytes.Buffer
		if code := main([]string{"--help"}, strings.NewReader(""), &out, io.Discard); code != ExitOK {
			t.Fatalf("%s --help: exit %d", name, code)
		}
		help := out.String()
		commands, codes := strings.Index(help, "Available Commands:"), strings.Index(help, "Exit codes:")
		if commands < 0 || codes < commands || !strings.Contains(help, "  1  usage error") || !strings.Contains(help, "its --help lists the codes") {
			t.Errorf("%s --help: the commands at %d, the exit codes at %d:\n%s", name, commands, codes, help)
		}
	}
	var out bytes.Buffer
	Main([]string{"replay", "--help"}, strings.NewReader(""), &out, io.Discard)
	if help := out.String(); strings.Index(help, "Exit codes:") > strings.Index(help, "Usage:") {
		t.Errorf("ordinal replay --help: the exit codes moved after the usage:\n%s", help)
	}
}

package cli

import (
	"bytes"
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

// Command clidoc writes the CLI reference, docs/reference/cli.md: every command and flag of `ordinal` and of
// the kubectl plugin `kubectl ordinal`, generated from their cobra command trees by cobra's own Markdown
// generator (`make docs`). Its test, part of `go test ./...`, fails when the committed file is not what the
// commands generate, so the reference is the help the binary prints.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/ordinal-dev/ordinal/host/cli"
)

// Reference is the committed file's path from the repository root.
const Reference = "docs/reference/cli.md"

const header = `# CLI reference

Generated from the commands' own help by ` + "`make docs`" + ` (hack/clidoc); ` + "`make test`" + ` fails when this file
is not what the commands generate. Do not edit it by hand: edit the command's help in host/cli and run
` + "`make docs`" + `. Exit codes are explained in [exit-codes.md](exit-codes.md).

`

func main() {
	out := flag.String("o", Reference, "file to write")
	flag.Parse()
	docEnv(os.Setenv)
	b, err := generate()
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "clidoc:", err)
		os.Exit(1)
	}
}

// docEnv fixes what flag defaults read from the environment (--cache-dir: the user's cache directory), so
// the reference says "~/.cache/..." on every machine; set is os.Setenv or a test's t.Setenv.
func docEnv(set func(key, value string) error) {
	_ = set("HOME", "~")
	_ = set("XDG_CACHE_HOME", "")
	_ = set("XDG_STATE_HOME", "")
}

// generate is the reference: a contents list, then each command of each tree, depth first in name order.
func generate() ([]byte, error) {
	var cmds []*cobra.Command
	for _, root := range cli.CommandTrees() {
		cmds = append(cmds, available(root)...)
	}
	var body bytes.Buffer
	body.WriteString(header)
	for _, c := range cmds {
		fmt.Fprintf(&body, "%s- [%s](#%s) — %s\n", strings.Repeat("  ", depth(c)), c.CommandPath(), anchor(c.CommandPath()), c.Short)
	}
	body.WriteString("\n")
	for _, c := range cmds {
		c.DisableAutoGenTag = true // no date: the file must be the same on every run
		if err := doc.GenMarkdownCustom(c, &body, link); err != nil {
			return nil, fmt.Errorf("%s: %w", c.CommandPath(), err)
		}
	}
	return body.Bytes(), nil
}

// available is c and the commands under it that its help lists, in the order cobra lists them.
func available(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			out = append(out, available(sub)...)
		}
	}
	return out
}

func depth(c *cobra.Command) int {
	n := 0
	for p := c.Parent(); p != nil; p = p.Parent() {
		n++
	}
	return n
}

// link turns cobra's file-per-command link (kubectl_ordinal_status.md) into the anchor of that command's
// heading in this one file.
func link(file string) string {
	return "#" + anchor(strings.ReplaceAll(strings.TrimSuffix(file, ".md"), "_", " "))
}

// anchor is the heading's anchor as GitHub makes it: lower case, spaces as hyphens.
func anchor(commandPath string) string {
	return strings.ReplaceAll(strings.ToLower(commandPath), " ", "-")
}

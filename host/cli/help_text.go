package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// helpWidth is the widest line of the help texts this package generates.
const helpWidth = 100

// addHelp ends c's help description with a paragraph, wrapped to helpWidth: how a flag behaves, where its
// own usage line only says what it is (TestFlagHelpLinesAreShort).
func addHelp(c *cobra.Command, paragraph string) {
	appendHelp(c, strings.Join(wrapWords(paragraph, helpWidth), "\n"))
}

// appendHelp ends c's help description (its Short, when it has no Long) with block, after a blank line.
func appendHelp(c *cobra.Command, block string) {
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	c.Long = strings.TrimRight(desc, "\n") + "\n\n" + block
}

// wrapWords breaks s into lines of at most width characters at spaces (a longer word gets a line of its own).
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

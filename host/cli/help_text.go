package cli

import (
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// helpWidth is the widest line of the help texts this package generates.
const helpWidth = 100

// appendHelp ends c's help description (its Short, when it has no Long) with block, after a blank line: how a
// flag behaves, where its own usage line only says what it is, or the exit codes. wrapDescriptions wraps it.
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

// wrapDescriptions wraps the help description (Long) of c and every command under it to helpWidth (finishHelp):
// its paragraphs of prose (lines at the margin) are filled again, however they were
// broken in the source; indented lines (examples, tables, the exit codes) are laid out by whoever wrote them
// and kept (TestHelpLinesAreShort holds them to helpWidth).
func wrapDescriptions(c *cobra.Command) {
	var out, para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, wrapWords(strings.Join(para, " "), helpWidth)...)
			para = nil
		}
	}
	for _, l := range strings.Split(c.Long, "\n") {
		if l == "" || l[0] == ' ' || l[0] == '\t' {
			flush()
			out = append(out, l)
		} else {
			para = append(para, l)
		}
	}
	flush()
	c.Long = strings.Join(out, "\n")
	for _, sub := range c.Commands() {
		wrapDescriptions(sub)
	}
}

// finishHelp completes the help texts of root's tree: each command's exit codes, then every description
// wrapped. The help function runs it (helpOnDemand); the CLI reference and the tests, which read the
// texts without printing help, through CommandTrees.
func finishHelp(root *cobra.Command) {
	documentExitCodes(root)
	wrapDescriptions(root)
}

// helpOnDemand has root's tree finish its help texts when help is first printed, not as the tree is built
// for every run: finishing them was ~2 ms of a 45 ms `ordinal reconcile` (perf), for texts a run that is
// not asked for help never shows. root's own exit codes follow its list of commands.
func helpOnDemand(root *cobra.Command) {
	exitCodesAfterCommands(root, rootExitCodes)
	help := root.HelpFunc()
	finish := sync.OnceFunc(func() { finishHelp(root) })
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		finish()
		help(c, args)
	})
}

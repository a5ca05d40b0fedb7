package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

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

// Every relative link of README.md and docs/**/*.md leads to a file that exists and, where it names an
// anchor of a Markdown file, to a heading of that file (GitHub's anchors), so moving or renaming a
// document or a section cannot leave a link dangling. Links inside code (fenced blocks, `spans`) are text.
func TestDocLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	links := 0
	for _, f := range files {
		for _, l := range markdownLinks(t, f) {
			links++
			path, frag, _ := strings.Cut(l.target, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d: link %q: no such file", rel(root, f), l.line, l.target)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if anchors[target] == nil {
				anchors[target] = headingAnchors(t, target)
			}
			if !anchors[target][frag] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", rel(root, f), l.line, l.target, rel(root, target), frag)
			}
		}
	}
	if len(files) < 10 || links < 100 {
		t.Fatalf("found %d documents and %d relative links: the walk is not reading the docs", len(files), links)
	}
}

type mdLink struct {
	target string
	line   int
}

var (
	mdLinkRE    = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	codeSpanRE  = regexp.MustCompile("`[^`]*`")
	schemeRE    = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	headingRE   = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	anchorDrops = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// markdownLinks is every relative link of a Markdown file outside code, with its line.
func markdownLinks(t *testing.T, file string) []mdLink {
	var out []mdLink
	for i, line := range proseLines(t, file) {
		for _, m := range mdLinkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			if !schemeRE.MatchString(m[1]) {
				out = append(out, mdLink{target: m[1], line: i + 1})
			}
		}
	}
	return out
}

// headingAnchors is the anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as
// hyphens, a repeated one suffixed -1, -2, ...
func headingAnchors(t *testing.T, file string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range proseLines(t, file) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := strings.ReplaceAll(anchorDrops.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// proseLines is a Markdown file's lines with those of fenced code blocks blanked (line numbers kept).
func proseLines(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return lines
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// maxOpeningLines is the longest a guide's opening paragraph may be: what the page is about and, for a
// command's guide, the command to try, seen before the detail (docs/replay.md's opening once ran to 35
// lines). The detail goes below, under headings.
const maxOpeningLines = 8

// Every guide opens with a short paragraph, and no guide cites the project's own issue numbers, which mean
// nothing to a reader (an upstream issue is a link).
func TestGuidesOpenShort(t *testing.T) {
	root := filepath.Join("..", "..")
	internalIssue := regexp.MustCompile(`(?i)\bissues? #?[0-9]+`)
	for _, g := range guideFiles(t, root) {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		if n := openingLines(string(b)); n > maxOpeningLines {
			t.Errorf("%s: the opening paragraph is %d lines (at most %d): move the detail under a heading", rel(root, g), n, maxOpeningLines)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if m := internalIssue.FindString(l); m != "" {
				t.Errorf("%s:%d: %q cites an internal issue number", rel(root, g), i+1, m)
			}
		}
	}
}

// openingLines is the length in lines of a Markdown page's first paragraph after its title: the lines up to
// a blank line, a heading, a fence or a comment.
func openingLines(page string) int {
	lines := strings.Split(page, "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "# ") {
		lines = lines[1:]
	}
	n := 0
	for _, l := range lines {
		switch {
		case strings.TrimSpace(l) == "" && n == 0:
			continue
		case strings.TrimSpace(l) == "", strings.HasPrefix(l, "#"), strings.HasPrefix(l, "```"), strings.HasPrefix(l, "<!--"):
			return n
		}
		n++
	}
	return n
}

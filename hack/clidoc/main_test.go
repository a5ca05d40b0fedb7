package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/cli"
)

// TestReferenceIsCurrent: the committed CLI reference is what the commands generate now, so a flag added,
// renamed or re-described without `make docs` fails the suite.
func TestReferenceIsCurrent(t *testing.T) {
	docEnv(func(k, v string) error { t.Setenv(k, v); return nil })
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(Reference)))
	if err != nil {
		t.Fatalf("%v: run `make docs` and commit %s", err, Reference)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
				t.Fatalf("%s is stale from line %d (committed %q, generated %q): run `make docs` and commit it",
					Reference, i+1, at(gl, i), at(wl, i))
			}
		}
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of file)"
}

// TestReferenceCoversEveryCommand: each command of both trees has its heading, so the walk cannot skip one.
func TestReferenceCoversEveryCommand(t *testing.T) {
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, root := range cli.CommandTrees() {
		for _, c := range available(root) {
			n++
			if !bytes.Contains(b, []byte("\n## "+c.CommandPath()+"\n")) {
				t.Errorf("no heading for %q", c.CommandPath())
			}
		}
	}
	if n < 15 {
		t.Fatalf("only %d commands in the trees", n)
	}
}

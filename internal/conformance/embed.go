package conformance

import (
	"embed"
	"io/fs"
)

// embedded is the committed cases (cases/: a directory per group, INDEX.md listing them, written by
// hack/conformance), in the binary so that the host holds a new reconcile module to them before it becomes
// active (`ordinal controller`'s hot swap). About 12 MB; a binary that never calls FS or All links none of it.
//
//go:embed cases
var embedded embed.FS

// FS is the committed cases, rooted at their groups: Load(FS(), ".") reads them all (All does).
func FS() fs.FS {
	sub, err := fs.Sub(embedded, "cases")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// All is every committed case, sorted by name.
func All() ([]Case, error) { return Load(FS(), ".") }

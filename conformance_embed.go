package ordinal

import (
	"embed"
	"io/fs"
)

// conformanceFiles are the conformance cases (testdata/conformance: snapshots and the plans the real
// upstream controller made for them), embedded so that the host can hold a new reconcile module to
// them before it becomes active (`ordinal controller`'s hot swap). About 12 MB.
//
//go:embed testdata/conformance
var conformanceFiles embed.FS

// ConformanceFS returns the embedded conformance cases; load them with internal/conformance.Load(fsys, ".").
func ConformanceFS() fs.FS {
	sub, err := fs.Sub(conformanceFiles, "testdata/conformance")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

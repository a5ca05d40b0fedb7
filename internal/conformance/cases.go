// Package conformance loads the conformance cases (a snapshot and the plan the real upstream
// controller made for it) and checks plans against them. The module test, the native logic test and
// other hosts' tests share it, so "conformant" means the same thing everywhere.
package conformance

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
)

// Case is one snapshot with its expected plan.
type Case struct {
	Name     string // "<group>/<case>"
	Snapshot []byte
	Plan     []byte
}

// Load reads every <name>.snapshot.json with its <name>.plan.json below root, sorted by name.
// A snapshot without a plan is an error: a case is a pair.
func Load(fsys fs.FS, root string) ([]Case, error) {
	var cases []Case
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".snapshot.json") {
			return nil
		}
		base := strings.TrimSuffix(p, ".snapshot.json")
		snap, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		plan, err := fs.ReadFile(fsys, base+".plan.json")
		if err != nil {
			return fmt.Errorf("case %s has no plan: %w", base, err)
		}
		name := strings.TrimPrefix(base, strings.TrimSuffix(root, "/")+"/")
		cases = append(cases, Case{Name: path.Clean(name), Snapshot: snap, Plan: plan})
		return nil
	})
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases, err
}

// GroupWriteFailures is the group of cases whose snapshots carry writeFailures: only a module whose describe
// says writeFailures is held to them (another plans as if every write had succeeded).
const GroupWriteFailures = "write-failures"

// WithoutWriteFailures is cases less the GroupWriteFailures group.
func WithoutWriteFailures(cases []Case) []Case {
	out := make([]Case, 0, len(cases))
	for _, c := range cases {
		if !strings.HasPrefix(c.Name, GroupWriteFailures+"/") {
			out = append(out, c)
		}
	}
	return out
}

// Check returns "" when plan is the case's expected plan, else where they differ.
func (c Case) Check(plan []byte) string {
	return jsoncmp.Diff(c.Plan, plan)
}

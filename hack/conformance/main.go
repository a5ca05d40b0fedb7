// Command conformance regenerates internal/conformance/cases: snapshots built from a scenario
// matrix, normalised with the reference oracle's API-server defaulting, and the oracle's plan
// for each of them converted to the ABI v1 plan shape (abi/README.md).
//
//	ORACLE=/path/to/oracle go run ./hack/conformance [-out internal/conformance/cases]
//
// Only the oracle binary is used; nothing in the repository depends on it at test time.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ordinal-dev/ordinal/internal/oracleplan"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Case is one conformance fixture: a snapshot whose expected plan is the oracle's.
type Case struct {
	Group, Name, Desc string
	Snap              M
	FailWrites        []failWrite // writes the oracle refuses (the write-failures group)
}

type groupInfo struct {
	name, desc string
}

// Gen collects the scenario matrix.
type Gen struct {
	o       *oracleRunner
	cases   []Case
	groups  []groupInfo
	seen    map[string]bool
	settled map[string]M
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)

func (g *Gen) group(name, desc string) {
	for _, gi := range g.groups {
		if gi.name == name {
			fatalf("duplicate group %s", name)
		}
	}
	g.groups = append(g.groups, groupInfo{name, desc})
}

func (g *Gen) add(group, name, desc string, s M) {
	key := group + "/" + name
	if g.seen[key] {
		fatalf("duplicate case %s", key)
	}
	if !nameRE.MatchString(group) || !nameRE.MatchString(name) {
		fatalf("bad case name %s", key)
	}
	found := false
	for _, gi := range g.groups {
		found = found || gi.name == group
	}
	if !found {
		fatalf("case %s: undeclared group", key)
	}
	g.seen[key] = true
	g.cases = append(g.cases, Case{Group: group, Name: name, Desc: desc, Snap: clone(s)})
}

// settle defaults a snapshot and runs the oracle's simulator until it converges; the final
// world (pods, revisions, claims, status as the upstream controller and the toy kubelet left
// them) is returned. Results are cached.
func (g *Gen) settle(s M) M {
	s = g.o.defaults(s)
	key := string(encodeSnapshot(clone(s)))
	if w, ok := g.settled[key]; ok {
		return clone(w)
	}
	tl, final := g.o.simulate(s, 100)
	if r, _ := tl["stopReason"].(string); !strings.HasPrefix(r, "converged") {
		fatalf("settle did not converge: %s", r)
	}
	g.settled[key] = final
	return clone(final)
}

func main() {
	out := flag.String("out", "internal/conformance/cases", "output directory (replaced entirely)")
	workers := flag.Int("j", 2, "parallel oracle processes when finalising cases")
	flag.Parse()
	bin := os.Getenv("ORACLE")
	if bin == "" {
		fmt.Fprintln(os.Stderr, "conformance: set ORACLE to the oracle binary (see hack/conformance/README.md)")
		os.Exit(2)
	}
	start := time.Now()
	tmp, err := os.MkdirTemp("", "conformance-gen-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(tmp)
	o := &oracleRunner{bin: bin, tmp: tmp}
	g := &Gen{o: o, seen: map[string]bool{}, settled: map[string]M{}}

	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(os.Stderr, "conformance: FAILED:", r)
			os.RemoveAll(tmp)
			os.Exit(1)
		}
	}()

	g.scenarios()
	g.writeFailureCases()
	built := time.Since(start)

	if err := os.RemoveAll(*out); err != nil {
		fatalf("%v", err)
	}
	g.finalize(*out, *workers)
	var version []string
	for _, l := range strings.Split(strings.TrimSpace(string(o.run(nil, "version"))), "\n") {
		version = append(version, strings.TrimSpace(l))
	}
	g.writeIndex(*out, version)
	fmt.Printf("conformance: %d cases in %d groups -> %s (scenarios %s, total %s, %d oracle runs)\n",
		len(g.cases), len(g.groups), *out, built.Round(time.Second), time.Since(start).Round(time.Second), o.calls.Load())
}

// finalize writes every case: the defaulted snapshot (with "abi":1) and the oracle's plan for
// exactly that file, converted to ABI v1.
func (g *Gen) finalize(out string, workers int) {
	for _, gi := range g.groups {
		if err := os.MkdirAll(filepath.Join(out, gi.name), 0o755); err != nil {
			fatalf("%v", err)
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				func() {
					defer func() {
						if r := recover(); r != nil {
							mu.Lock()
							failures = append(failures, fmt.Sprintf("%s/%s: %v", g.cases[i].Group, g.cases[i].Name, r))
							mu.Unlock()
						}
					}()
					g.finalizeCase(out, &g.cases[i])
				}()
			}
		}()
	}
	for i := range g.cases {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if len(failures) > 0 {
		sort.Strings(failures)
		fatalf("%d case(s) failed:\n%s", len(failures), strings.Join(failures, "\n"))
	}
}

func (g *Gen) finalizeCase(out string, c *Case) {
	in := clone(c.Snap)
	wf, hasWF := in["writeFailures"]
	delete(in, "writeFailures") // the oracle does not read it: its refusals come from c.FailWrites
	s := g.o.defaults(in)
	s["abi"] = num(1)
	b := encodeSnapshot(s)
	base := filepath.Join(out, c.Group, c.Name)
	snapPath := base + ".snapshot.json"
	if err := os.WriteFile(snapPath, b, 0o644); err != nil {
		fatalf("%v", err)
	}
	// The committed snapshot must be a fixed point of API-server defaulting.
	committed := mustDecodeObj(b)
	if again := g.o.defaults(committed); !jsonobj.Equal(again, committed) {
		fatalf("snapshot is not stable under oracle defaults")
	}
	if !bytes.Equal(encodeSnapshot(committed), b) {
		fatalf("snapshot encoding does not round-trip")
	}
	if hasWF {
		s["writeFailures"] = wf
		if err := os.WriteFile(snapPath, encodeSnapshot(s), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	plan := mustDecodeObj(g.o.runEnv(failEnv(c.FailWrites), nil, "plan", "-events", snapPath))
	if e, _ := plan["error"].(string); strings.Contains(e, "panic") {
		fatalf("oracle reports a panic: %s", e)
	}
	if err := os.WriteFile(base+".plan.json", pretty(oracleplan.Convert(plan)), 0o644); err != nil {
		fatalf("%v", err)
	}
}

func (g *Gen) writeIndex(out string, version []string) {
	count := map[string]int{}
	byGroup := map[string][]Case{}
	for _, c := range g.cases {
		count[c.Group]++
		byGroup[c.Group] = append(byGroup[c.Group], c)
	}
	groups := append([]groupInfo(nil), g.groups...)
	sort.Slice(groups, func(i, j int) bool { return groups[i].name < groups[j].name })
	var b strings.Builder
	fmt.Fprintf(&b, "# Conformance fixtures\n\n")
	fmt.Fprintf(&b, "Generated by `hack/conformance` (do not edit by hand; see hack/conformance/README.md).\n")
	fmt.Fprintf(&b, "Each case is `<group>/<case>.snapshot.json` (ABI v1 snapshot, API-server defaulted) and\n")
	fmt.Fprintf(&b, "`<group>/<case>.plan.json` (the reference oracle's `plan -events` for exactly that snapshot,\n")
	fmt.Fprintf(&b, "converted to the ABI v1 plan shape).\n\n")
	fmt.Fprintf(&b, "Oracle: `%s` (feature-gate defaults: %s).\n\n", version[0], strings.Join(version[1:], ", "))
	fmt.Fprintf(&b, "Total: %d cases in %d groups.\n\n", len(g.cases), len(groups))
	fmt.Fprintf(&b, "| group | cases | covers |\n|---|---:|---|\n")
	for _, gi := range groups {
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", gi.name, count[gi.name], gi.desc)
	}
	fmt.Fprintf(&b, "\n## Cases\n")
	for _, gi := range groups {
		cs := byGroup[gi.name]
		sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
		fmt.Fprintf(&b, "\n### %s\n\n", gi.name)
		for _, c := range cs {
			fmt.Fprintf(&b, "- `%s`: %s\n", c.Name, c.Desc)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "INDEX.md"), []byte(b.String()), 0o644); err != nil {
		fatalf("%v", err)
	}
}

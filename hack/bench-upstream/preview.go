package main

import (
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

var (
	previewSizes = flag.String("preview-sizes", "100,300,1000,3000", "pods of the preview worlds (section preview)")
	baselineBin  = flag.String("baseline", "", "an older ordinal binary run beside -ordinal (sections process, replay and preview; empty: none)")
	capFlag      = flag.Duration("cap", 10*time.Minute, "the longest one run may take (section preview): a size whose run is predicted longer is skipped, a run that takes longer is stopped")
)

// previewWorld is one size of section preview: a settled OrderedReady set with claims, and its edit.
type previewWorld struct {
	pods            int
	settled, edited string // the world (a snapshot) and the edited StatefulSet (-f)
	rolled          string // the world with the edit made, for oracle simulate
}

// previewer is one of the commands section preview compares, with what it measured at each size so far.
type previewer struct {
	name string
	args func(w previewWorld) (bin string, args []string)
	last map[int]usage // by pods; absent: skipped or stopped
	note map[int]string
}

// previewScaling is section preview: `ordinal preview --from` of the same OrderedReady image change at
// each size, beside -baseline's and `oracle simulate` of the edited world, alternating per round, with
// the CPU growth from size to size (what a set 3x larger costs).
func previewScaling(dir string) {
	sizes, err := parseSizes(*previewSizes)
	if err != nil {
		fatal("-preview-sizes: %v", err)
	}
	fmt.Printf("== 4. preview of an OrderedReady image change (a settled set with claims), %d rounds, medians; run cap %s\n", *rounds, *capFlag)
	fmt.Println("   ordinal preview -f edited --from settled; oracle simulate of the edited world (wall, CPU = user+sys, peak RSS)")
	cmds := []*previewer{{name: "ordinal", args: func(w previewWorld) (string, []string) {
		return *ordinalBin, []string{"preview", "-f", w.edited, "--from", w.settled}
	}}}
	if *baselineBin != "" {
		cmds = append(cmds, &previewer{name: "baseline", args: func(w previewWorld) (string, []string) {
			return *baselineBin, []string{"preview", "-f", w.edited, "--from", w.settled}
		}})
	}
	cmds = append(cmds, &previewer{name: "oracle", args: func(w previewWorld) (string, []string) {
		return *oracleBin, []string{"simulate", "-steps", "1000000", w.rolled}
	}})
	for _, c := range cmds {
		c.last, c.note = map[int]usage{}, map[int]string{}
	}
	header(cmds)
	for _, n := range sizes {
		w := previewWorldOf(dir, n)
		measureSize(cmds, w, sizes)
		row(cmds, n)
	}
	growth(cmds, sizes)
	fmt.Println()
}

// measureSize measures every command of cmds at w's size, alternating by round (ordinal, baseline,
// oracle, ordinal, ...) so that a loaded machine slows them alike. A command its earlier sizes predict
// to pass -cap is skipped; one that passes it is stopped and not run again at this size.
func measureSize(cmds []*previewer, w previewWorld, sizes []int) {
	var active []*previewer
	for _, c := range cmds {
		if why := c.predictedOver(w.pods, sizes); why != "" {
			c.note[w.pods] = why
		} else {
			active = append(active, c)
		}
	}
	runs := map[*previewer][]usage{}
	for range *rounds {
		for _, c := range active {
			if c.note[w.pods] != "" {
				continue
			}
			bin, args := c.args(w)
			u, err := measureWithin(*capFlag, bin, args...)
			if err != nil {
				c.note[w.pods] = err.Error()
				continue
			}
			runs[c] = append(runs[c], u)
		}
	}
	for _, c := range active {
		if c.note[w.pods] == "" {
			c.last[w.pods] = medianUsage(runs[c])
		}
	}
}

// predictedOver says why a run of c at pods would pass -cap (a smaller size that did not finish, or its
// wall time at the two sizes measured before: the growth exponent between them, quadratic with one), or ""
// when it would not.
func (c *previewer) predictedOver(pods int, sizes []int) string {
	var done []int
	for _, n := range sizes {
		if n >= pods {
			break
		}
		if c.note[n] != "" {
			return fmt.Sprintf("skipped: %d pods did not finish", n)
		}
		done = append(done, n)
	}
	if len(done) == 0 {
		return ""
	}
	n1 := done[len(done)-1]
	k := 2.0
	if len(done) > 1 {
		n0 := done[len(done)-2]
		k = math.Log(c.last[n1].wall.Seconds()/c.last[n0].wall.Seconds()) / math.Log(float64(n1)/float64(n0))
	}
	want := time.Duration(float64(c.last[n1].wall) * math.Pow(float64(pods)/float64(n1), max(k, 1)))
	if want > *capFlag {
		return fmt.Sprintf("skipped: ~%s predicted (from %d pods) > cap %s", want.Round(time.Second), n1, *capFlag)
	}
	return ""
}

// previewWorldOf writes the world of n pods: an OrderedReady set with a claim template, settled by the
// oracle, and its image bumped (the edited manifest, and the world with the edit made).
func previewWorldOf(dir string, n int) previewWorld {
	m := manifest(n, false)
	spec := m["spec"].(map[string]any)
	spec["volumeClaimTemplates"] = []any{map[string]any{
		"metadata": map[string]any{"name": "data"},
		"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"},
			"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
	}}
	// Created in parallel so that settling 3000 pods takes the oracle seconds; the world it ends in is an
	// OrderedReady creation's (the policy is not part of the revision), so the set says OrderedReady.
	spec["podManagementPolicy"] = "Parallel"
	w := settle(dir, m, fmt.Sprintf("preview%d", n))
	w["statefulSet"].(map[string]any)["spec"].(map[string]any)["podManagementPolicy"] = "OrderedReady"
	w["abi"] = 1
	settled := writeJSON(filepath.Join(dir, fmt.Sprintf("preview-%d.settled.json", n)), w)
	bumpImage(w)
	return previewWorld{pods: n, settled: settled,
		edited: writeJSON(filepath.Join(dir, fmt.Sprintf("preview-%d.edited.json", n)), w["statefulSet"]),
		rolled: writeJSON(filepath.Join(dir, fmt.Sprintf("preview-%d.rolled.json", n)), w)}
}

func header(cmds []*previewer) {
	fmt.Printf("%-6s", "pods")
	for _, c := range cmds {
		fmt.Printf(" | %-8s %8s %8s %7s", c.name, "wall", "CPU", "MiB")
	}
	fmt.Println()
}

func row(cmds []*previewer, n int) {
	fmt.Printf("%-6d", n)
	for _, c := range cmds {
		if u, ok := c.last[n]; ok {
			fmt.Printf(" | %-8s %7.2fs %7.2fs %7.0f", "", u.wall.Seconds(), u.cpu.Seconds(), float64(u.rss)/1024)
		} else {
			fmt.Printf(" | %s", c.note[n])
		}
	}
	fmt.Println()
}

// growth prints the CPU ratio of each size to the one before it, per command.
func growth(cmds []*previewer, sizes []int) {
	fmt.Println("CPU growth per size step (x the CPU of the size before):")
	for i := 1; i < len(sizes); i++ {
		a, b := sizes[i-1], sizes[i]
		fmt.Printf("  %d->%d (x%.1f pods):", a, b, float64(b)/float64(a))
		for _, c := range cmds {
			ua, oka := c.last[a]
			ub, okb := c.last[b]
			if oka && okb {
				fmt.Printf("  %s x%.2f", c.name, ub.cpu.Seconds()/ua.cpu.Seconds())
			} else {
				fmt.Printf("  %s -", c.name)
			}
		}
		fmt.Println()
	}
}

func parseSizes(s string) ([]int, error) {
	var sizes []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a number of pods", f)
		}
		if len(sizes) > 0 && n <= sizes[len(sizes)-1] {
			return nil, fmt.Errorf("sizes must grow: %d after %d", n, sizes[len(sizes)-1])
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

func medianUsage(runs []usage) usage {
	var wall, cpu []time.Duration
	var rss []int64
	for _, u := range runs {
		wall, cpu, rss = append(wall, u.wall), append(cpu, u.cpu), append(rss, u.rss)
	}
	return usage{wall: median(wall), cpu: median(cpu), rss: medianInt(rss)}
}

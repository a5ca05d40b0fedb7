package replay

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromiumRequired is set by `make test` (after scripts/install-chromium.sh), which turns a missing
// browser into a failure instead of a skip.
const chromiumRequired = "ORDINAL_REQUIRE_CHROMIUM"

var htmlOut = flag.String("html-out", "", "also write the pages TestHTMLRendersInChromium draws to this directory")

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// The window the pages are drawn in: a laptop screen.
const windowW, windowH = 1280, 800

var (
	statsTagRE  = regexp.MustCompile(`<span id="render-stats"[^>]*>`)
	statsAttrRE = regexp.MustCompile(`data-([a-z-]+)="([^"]*)"`)
)

// The HTML timeline, opened in headless Chromium at 1280x800, fits the window whatever the size of the
// rollout: 5, 80 and 1000 pods replayed, and 1000 pods x 4000 syncs made up. Its script writes what it
// drew into #render-stats, read back from the DOM Chromium dumps, and compared with what the timeline
// holds, counted here independently: a row per pod, every sync, every pod state, a marker per user edit
// and per requeue; no label wrapped or outside the picture; the picture inside the window.
func TestHTMLRendersInChromium(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		if os.Getenv(chromiumRequired) != "" {
			t.Fatalf("%s is set but no chromium binary is on PATH (scripts/install-chromium.sh installs it)", chromiumRequired)
		}
		t.Skip("chromium is not installed: run scripts/install-chromium.sh, or `make test`, which installs it and makes this test mandatory")
	}
	file := func(name string) func(t *testing.T) *Timeline {
		return func(t *testing.T) *Timeline { return replayFile(t, filepath.Join(scenarioDir, name+".yaml"), "") }
	}
	scaled := func(n int) func(t *testing.T) *Timeline {
		return func(t *testing.T) *Timeline { return replayScenario(t, scaleScenario(t, n)) }
	}
	for _, c := range []struct {
		name     string
		timeline func(t *testing.T) *Timeline
		zoom     *htmlView // the view the address asks for; all of it when nil
	}{
		{"rolling-update-maxunavailable2", file("rolling-update-maxunavailable2"), nil}, // 5 pods
		{"start-ordinal", file("start-ordinal"), nil},
		{"scale-retain-delete", file("scale-retain-delete"), nil},
		{"kubelet-behaviours", file("kubelet-behaviours"), nil},
		{"scale-80", scaled(80), nil},
		{"scale-80-zoomed", scaled(80), &htmlView{FirstStep: 40, LastStep: 120, FirstOrdinal: 10, LastOrdinal: 29}},
		{"scale-1000", scaled(1000), nil},
		{"synthetic-1000x4000", func(*testing.T) *Timeline { return syntheticRollout(1000, 4000) }, nil},
		{"15-edits-16-revisions", func(t *testing.T) *Timeline { return replayScenario(t, editsScenario(t, 15)) }, nil},
		{"crowded-edits", func(*testing.T) *Timeline { return crowdedEdits() }, nil},
		{"no-pods", func(t *testing.T) *Timeline { return replayScenario(t, noPodsScenario(t)) }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl := c.timeline(t)
			page := filepath.Join(t.TempDir(), c.name+".html")
			if *htmlOut != "" {
				page = filepath.Join(*htmlOut, c.name+".html")
			}
			writePage(t, tl, page)
			v, url := fullView(tl), "file://"+page
			if c.zoom != nil {
				v = *c.zoom
				url += fmt.Sprintf("#syncs=%d-%d&pods=%d-%d", v.FirstStep, v.LastStep, v.FirstOrdinal, v.LastOrdinal)
			}
			got := renderInChromium(t, bin, url)
			checkRendered(t, tl, v, got)
		})
	}
}

func writePage(t *testing.T, tl *Timeline, page string) {
	t.Helper()
	var b bytes.Buffer
	if err := tl.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// renderInChromium opens the page in headless Chromium and returns the data-* attributes of #render-stats.
func renderInChromium(t *testing.T, bin, url string) map[string]string {
	t.Helper()
	// A guard against a hung browser, not a time budget: a 1000-pod page draws in well under a second.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--enable-logging=stderr", "--v=0", // the page's console, to see its script's errors
		"--hide-scrollbars", "--window-size="+strconv.Itoa(windowW)+","+strconv.Itoa(windowH),
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--dump-dom", url)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(errb.String(), 2000))
	}
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.Contains(l, "CONSOLE") && strings.Contains(l, "Uncaught") {
			t.Errorf("the page's script failed: %s", l)
		}
	}
	tag := statsTagRE.FindString(out.String())
	attrs := map[string]string{}
	for _, m := range statsAttrRE.FindAllStringSubmatch(tag, -1) {
		attrs[m[1]] = m[2]
	}
	if attrs["syncs"] == "" {
		t.Fatalf("the page's script did not report what it drew; DOM:\n%s", tail(out.String(), 2000))
	}
	return attrs
}

// htmlView is a part of the picture: syncs and pod ordinals, both inclusive.
type htmlView struct{ FirstStep, LastStep, FirstOrdinal, LastOrdinal int }

func fullView(tl *Timeline) htmlView {
	v := htmlView{0, len(tl.Steps) - 1, math.MaxInt, math.MinInt}
	for _, st := range tl.Steps {
		for p := range st.Pods.All() {
			v.FirstOrdinal, v.LastOrdinal = min(v.FirstOrdinal, p.Ordinal), max(v.LastOrdinal, p.Ordinal)
		}
	}
	return v
}

// crowdedEdits is a made-up rollout with 40 user edits in one sync at the start, 30 in the next and 40
// in the last: too many for a label each, even a number.
func crowdedEdits() *Timeline {
	tl := syntheticRollout(20, 200)
	tl.Scenario = "crowded-edits"
	for _, at := range []struct{ step, n int }{{0, 40}, {1, 30}, {199, 40}} {
		for i := 0; i < at.n; i++ {
			tl.Steps[at.step].World = append(tl.Steps[at.step].World, WorldEvent{Source: "user", Message: fmt.Sprintf("set spec.replicas = %d", i)})
		}
	}
	return tl
}

// checkRendered compares what the page says it drew of the view with what the timeline holds there.
func checkRendered(t *testing.T, tl *Timeline, v htmlView, got map[string]string) {
	t.Helper()
	num := func(k string) int {
		v, err := strconv.Atoi(got[k])
		if err != nil {
			t.Fatalf("render-stats data-%s=%q: %v", k, got[k], err)
		}
		return v
	}
	nums := func(k string) []int {
		var out []int
		for _, f := range strings.Fields(got[k]) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("render-stats data-%s=%q: %v", k, got[k], err)
			}
			out = append(out, v)
		}
		if len(out) < 2 {
			t.Fatalf("render-stats data-%s=%q: want numbers", k, got[k])
		}
		return out
	}
	// What the timeline holds, counted from its steps.
	names, ords := map[string]bool{}, map[int]bool{}
	cells, edits, requeues := 0, 0, 0
	for i, st := range tl.Steps {
		cells += st.Pods.Len()
		for p := range st.Pods.All() {
			if p.Ordinal >= v.FirstOrdinal && p.Ordinal <= v.LastOrdinal {
				names[p.Name], ords[p.Ordinal] = true, true
			}
		}
		if i < v.FirstStep || i > v.LastStep {
			continue
		}
		for _, w := range st.World {
			if w.Source == "user" {
				edits++
			}
		}
		if slices.Contains(st.Trigger, "requeue") {
			requeues++
		}
	}
	if len(names) != len(ords) {
		t.Fatalf("test scenario has %d pod names for %d ordinals", len(names), len(ords))
	}
	for k, want := range map[string]int{"pods": len(ords), "syncs": v.LastStep - v.FirstStep + 1, "cells": cells, "edits": edits,
		"edit-labels": edits, "requeues": requeues, "wrapped": 0, "labels-outside": 0, "edits-hidden": 0,
		"labels-overlap": 0, "lines-cross-labels": 0} {
		if got := num(k); got != want {
			t.Errorf("%s: %d, want %d", k, got, want)
		}
	}
	t.Logf("%d pods x %d syncs (%s instants), %d edits (labels: %s), %d requeues: %s rectangles, %s row labels, %s ticks, picture %s, window %s",
		len(ords), v.LastStep-v.FirstStep+1, got["instants"], edits, got["edit-label-kind"], requeues, got["runs"], got["row-labels"], got["ticks"], got["box"], got["viewport"])
	checkColours(t, tl, got)
	// A replay without pods says so.
	if msg := got["empty-message"]; (len(ords) == 0) != (msg != "") || msg != "" && !strings.Contains(msg, "no pods") {
		t.Errorf("%d pods, message %q: want \"no pods ...\" exactly when there is no pod", len(ords), msg)
	}

	// The picture fits the window ...
	vp, box, plot, pageSize := nums("viewport"), nums("box"), nums("plot"), nums("page")
	if vp[0] <= 0 || vp[0] > windowW || vp[1] <= 0 || vp[1] > windowH {
		t.Fatalf("viewport %v: want within the %dx%d window", vp, windowW, windowH)
	}
	if box[0] < 0 || box[1] < 0 || box[0]+box[2] > vp[0] || box[1]+box[3] > vp[1] {
		t.Errorf("picture at %v (x y w h) does not fit the %dx%d viewport", box, vp[0], vp[1])
	}
	if pageSize[0] > vp[0] {
		t.Errorf("page is %d px wide, wider than the %d px viewport", pageSize[0], vp[0])
	}
	// ... and is most of it, but for a few pods, whose rows are bars 32 px high rather than slabs.
	if plot[0] < vp[0]/2 || plot[1] < min(vp[1]/2, 32*len(ords)) {
		t.Errorf("plot is %dx%d: want at least half of the %dx%d viewport", plot[0], plot[1], vp[0], vp[1])
	}
	// Rows are labelled, every row when they are a line high.
	if labels := num("row-labels"); len(ords) > 0 && (labels == 0 || plot[1]/len(ords) >= 14 && labels != len(ords)) {
		t.Errorf("%d row labels for %d rows of %d px", labels, len(ords), plot[1]/len(ords))
	} else if len(ords) == 0 && labels != 0 {
		t.Errorf("%d row labels for no pods", labels)
	}
	if tl.Outcome.Duration > 0 && num("ticks") < 2 {
		t.Errorf("%d time ticks: want at least 2", num("ticks"))
	}
}

// checkColours: every revision of the timeline has a colour of its own, far enough from the others to
// tell apart, and the legend's state swatches are none of them.
func checkColours(t *testing.T, tl *Timeline, got map[string]string) {
	t.Helper()
	revs, states := strings.Fields(got["revision-colours"]), strings.Fields(got["state-colours"])
	if len(revs) != len(tl.Revisions) {
		t.Fatalf("%d revision colours %v for %d revisions", len(revs), revs, len(tl.Revisions))
	}
	if len(states) == 0 {
		t.Errorf("no state swatch colours")
	}
	rgb := func(c string) [3]float64 {
		var r, g, b int
		if _, err := fmt.Sscanf(c, "#%02x%02x%02x", &r, &g, &b); err != nil || len(c) != 7 {
			t.Fatalf("colour %q: want #rrggbb", c)
		}
		return [3]float64{float64(r), float64(g), float64(b)}
	}
	dist := func(a, b string) float64 {
		x, y := rgb(a), rgb(b)
		return math.Sqrt((x[0]-y[0])*(x[0]-y[0]) + (x[1]-y[1])*(x[1]-y[1]) + (x[2]-y[2])*(x[2]-y[2]))
	}
	for i := range revs {
		for j := i + 1; j < len(revs); j++ {
			if d := dist(revs[i], revs[j]); d < 40 {
				t.Errorf("revisions %s and %s have colours %s and %s, %.0f apart: want distinct colours", tl.Revisions[i].Label, tl.Revisions[j].Label, revs[i], revs[j], d)
			}
		}
		for _, s := range states {
			if d := dist(revs[i], s); d < 40 {
				t.Errorf("a state swatch's colour %s is revision %s's (%s): want a neutral one", s, tl.Revisions[i].Label, revs[i])
			}
		}
	}
}

// The page's runs are the timeline's pods: decoding them gives every step's pods back.
func TestHTMLRunsHoldEveryPod(t *testing.T) {
	key := func(name, label, state string, term bool) string {
		return name + ":" + label + "/" + state + "/" + strconv.FormatBool(term)
	}
	for _, tl := range []*Timeline{replayFile(t, filepath.Join(scenarioDir, "scale-retain-delete.yaml"), ""),
		replayFile(t, filepath.Join(scenarioDir, "kubelet-behaviours.yaml"), ""), syntheticRollout(20, 200)} {
		d := tl.htmlData()
		for i, st := range tl.Steps {
			var got, want []string
			for _, row := range d.Pods {
				var run []int
				for _, r := range row.Runs {
					if r[0] <= i {
						run = r
					}
				}
				if len(run) > 1 {
					got = append(got, key(row.Name, d.Labels[run[2]], d.States[run[1]], run[3] == 1))
				}
			}
			for p := range st.Pods.All() {
				want = append(want, key(p.Name, p.Label, p.State(), p.Terminating))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s step %d: runs give %v, want %v", tl.Scenario, i, got, want)
			}
		}
	}
}

// The page stays small: a pod's state is stored once per change, not once per sync.
func TestHTMLPageIsBounded(t *testing.T) {
	tl := syntheticRollout(1000, 4000)
	var b bytes.Buffer
	if err := tl.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("1000 pods x 4000 syncs: %d bytes", b.Len())
	if b.Len() > 4<<20 {
		t.Errorf("page is %d bytes: want at most 4 MB", b.Len())
	}
}

// The page is self-contained: no external scripts, styles or images.
func TestHTMLIsSelfContained(t *testing.T) {
	tl := replayFile(t, filepath.Join(scenarioDir, "rolling-update.yaml"), "")
	var b bytes.Buffer
	if err := tl.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"src=\"http", "href=\"http", "@import", "url(http", "src=\"//", "href=\"//"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("page refers to an external resource (%q)", bad)
		}
	}
	if !strings.Contains(b.String(), `id="timeline-data"`) {
		t.Error("page lacks the embedded timeline")
	}
}

// Scenario text cannot close the page's script: the timeline is JSON with <, > and & escaped.
func TestHTMLEscapesScenarioText(t *testing.T) {
	bad := `</script><script>alert(1)</script><!--`
	tl := syntheticRollout(2, 4)
	tl.Scenario, tl.Description = bad, bad
	tl.Steps[0].World = append(tl.Steps[0].World, WorldEvent{Source: "user", Message: bad})
	var b bytes.Buffer
	if err := tl.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>alert") || strings.Contains(b.String(), "<!--") {
		t.Errorf("scenario text reached the page unescaped:\n%s", tail(b.String(), 500))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

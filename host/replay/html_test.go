package replay

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromiumRequired is set by `make test` (after scripts/install-chromium.sh), which turns a missing
// browser into a failure instead of a skip.
const chromiumRequired = "ORDINAL_REQUIRE_CHROMIUM"

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

var statsRE = regexp.MustCompile(`<div id="render-stats" data-pods="(\d+)" data-steps="(\d+)" data-cells="(\d+)"`)

// The HTML timeline, opened in headless Chromium, draws one row per pod and one column per sync:
// its script writes what it drew into #render-stats, read back from the DOM Chromium dumps.
func TestHTMLRendersInChromium(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		if os.Getenv(chromiumRequired) != "" {
			t.Fatalf("%s is set but no chromium binary is on PATH (scripts/install-chromium.sh installs it)", chromiumRequired)
		}
		t.Skip("chromium is not installed: run scripts/install-chromium.sh, or `make test`, which installs it and makes this test mandatory")
	}
	for _, name := range []string{"rolling-update-maxunavailable2", "start-ordinal", "scale-retain-delete"} {
		t.Run(name, func(t *testing.T) {
			tl := replayFile(t, filepath.Join(scenarioDir, name+".yaml"), "")
			dir := t.TempDir()
			page := filepath.Join(dir, name+".html")
			var b bytes.Buffer
			if err := tl.WriteHTML(&b); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
				"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+page)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("chromium: %v\n%s", err, tail(errb.String(), 2000))
			}
			m := statsRE.FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("the page's script did not report what it drew; DOM:\n%s", tail(out.String(), 2000))
			}
			ords, cells := map[int]bool{}, 0
			for _, st := range tl.Steps {
				for _, p := range st.Pods {
					ords[p.Ordinal] = true
				}
				cells += len(st.Pods)
			}
			want := []int{len(ords), len(tl.Steps), cells}
			for i, w := range want {
				if got, _ := strconv.Atoi(m[i+1]); got != w {
					t.Errorf("%s drawn: %d, want %d", []string{"pods", "steps", "cells"}[i], got, w)
				}
			}
		})
	}
}

// The page is self-contained: no external scripts, styles or images.
func TestHTMLIsSelfContained(t *testing.T) {
	tl := replayFile(t, filepath.Join(scenarioDir, "rolling-update.yaml"), "")
	var b bytes.Buffer
	if err := tl.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"src=\"http", "href=\"http", "@import", "url(http"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("page refers to an external resource (%q)", bad)
		}
	}
	if !strings.Contains(b.String(), `id="timeline-data"`) {
		t.Error("page lacks the embedded timeline")
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

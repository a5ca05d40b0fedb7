//go:build e2e && soak

package e2e

// The soak (`make soak`, scripts/soak.sh; build tag soak, so `make test` never runs it): one `ordinal
// controller`, started as the e2e suite starts it, with a few hundred sets on kwok rolling all the time
// (template changes, scale-ups and scale-downs, one set edited every ORDINAL_SOAK_EDIT_EVERY) for
// ORDINAL_SOAK_DURATION. Every ORDINAL_SOAK_INTERVAL it samples the controller's own metrics:
// process_resident_memory_bytes, go_goroutines, process_open_fds (and ordinal_syncs_total, for the
// count). At the end every set must roll out (the controller still converges), the series are printed,
// and each gets judgeSoak's verdict (soak_verdict_test.go): a leak fails the test.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func soakEnv(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("%s: %q is not a positive duration", name, s)
	}
	return d
}

var soakMetricRE = regexp.MustCompile(`(?m)^(process_resident_memory_bytes|go_goroutines|process_open_fds) (\S+)$`)

// soakSeries are the sampled metrics, in the order printed.
var soakSeries = []string{"process_resident_memory_bytes", "go_goroutines", "process_open_fds"}

type soakSample struct {
	at     time.Duration // since the rolling began
	values map[string]float64
	syncs  float64
	edits  int
}

func TestSoak(t *testing.T) {
	requireController(t)
	duration := soakEnv(t, "ORDINAL_SOAK_DURATION", time.Hour)
	interval := soakEnv(t, "ORDINAL_SOAK_INTERVAL", time.Minute)
	editEvery := soakEnv(t, "ORDINAL_SOAK_EDIT_EVERY", time.Second)
	sets := 300
	if s := os.Getenv("ORDINAL_SOAK_SETS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("ORDINAL_SOAK_SETS: %q is not a count", s)
		}
		sets = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), duration+30*time.Minute) // a hang guard
	t.Cleanup(cancel)
	ns := newNamespace(t, ctx)
	c := startController(t, ns, ctrlOpts{workers: 4})
	c.waitReady(ctx)

	// A mix: OrderedReady and Parallel (maxUnavailable 2), 1-3 replicas, every fifth with claims.
	name := func(i int) string { return fmt.Sprintf("soak-%03d", i) }
	replicas := make([]int32, sets)
	for i := range sets {
		replicas[i] = int32(1 + i%3)
		var opts []setOpt
		if i%2 == 1 {
			opts = append(opts, parallel, maxUnavailable(2))
		}
		if i%5 == 0 {
			opts = append(opts, withClaims(appsv1.DeletePersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType))
		}
		createSet(t, ctx, ns, newSet(name(i), replicas[i], opts...))
	}
	allRolledOut := func(desc string) {
		waitFor(t, ctx, desc, 15*time.Minute, func() bool {
			l, err := cfg.kc.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
			if err != nil || len(l.Items) != sets {
				return false
			}
			for i := range l.Items {
				s := &l.Items[i]
				if !rolledOut(*s.Spec.Replicas)(s) {
					return false
				}
			}
			return true
		})
	}
	allRolledOut(fmt.Sprintf("all %d sets created and rolled out", sets))

	sample := func(at time.Duration, edits int) soakSample {
		text := c.metricsText(t)
		s := soakSample{at: at, values: map[string]float64{}, edits: edits}
		for _, m := range soakMetricRE.FindAllStringSubmatch(text, -1) {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatalf("metric %s: %q", m[1], m[2])
			}
			s.values[m[1]] = v
		}
		for _, k := range soakSeries {
			if _, ok := s.values[k]; !ok {
				t.Fatalf("the controller's /metrics has no %s", k)
			}
		}
		s.syncs, _ = syncCounts(t, ctx, c)
		return s
	}

	// Rolling: one edit every editEvery, a seeded random set each time; a sample every interval.
	rng := rand.New(rand.NewPCG(1, 0x50a4))
	version := make([]int, sets)
	t0 := time.Now()
	edits, bumps, scales := 0, 0, 0
	samples := []soakSample{sample(0, 0)}
	t.Logf("soak: %d sets, %s, an edit every %s, a sample every %s; at 0: %v", sets, duration, editEvery, interval, samples[0].values)
	nextSample := t0.Add(interval)
	for time.Since(t0) < duration {
		i := rng.IntN(sets)
		if rng.IntN(10) < 6 {
			version[i]++
			patchQuiet(t, ctx, ns, name(i), setVersion(fmt.Sprintf("v%d", version[i]+1)))
			bumps++
		} else {
			r := int32(1 + rng.IntN(4))
			if r == replicas[i] {
				r = r%4 + 1
			}
			replicas[i] = r
			patchQuiet(t, ctx, ns, name(i), fmt.Sprintf(`{"spec":{"replicas":%d}}`, r))
			scales++
		}
		edits++
		if now := time.Now(); !now.Before(nextSample) {
			s := sample(now.Sub(t0), edits)
			samples = append(samples, s)
			t.Logf("sample %d at %s: rss %.1f MiB, goroutines %.0f, fds %.0f, syncs %.0f, edits %d", len(samples)-1,
				s.at.Round(time.Second), s.values["process_resident_memory_bytes"]/(1<<20), s.values["go_goroutines"],
				s.values["process_open_fds"], s.syncs, s.edits)
			nextSample = nextSample.Add(interval)
		}
		time.Sleep(editEvery)
	}
	rolling := time.Since(t0)
	allRolledOut(fmt.Sprintf("all %d sets rolled out after the soak's last edit", sets))
	last := sample(time.Since(t0), edits)

	// The series and the verdicts.
	var b strings.Builder
	fmt.Fprintf(&b, "soak: %d sets rolling for %s (%d edits: %d template changes, %d scales; %.0f syncs); every set rolled out at the end\n",
		sets, rolling.Round(time.Second), edits, bumps, scales, last.syncs-samples[0].syncs)
	fmt.Fprintf(&b, "%8s %10s %11s %5s %9s %7s\n", "at", "RSS MiB", "goroutines", "fds", "syncs", "edits")
	for _, s := range samples {
		fmt.Fprintf(&b, "%8s %10.1f %11.0f %5.0f %9.0f %7d\n", s.at.Round(time.Second), s.values["process_resident_memory_bytes"]/(1<<20),
			s.values["go_goroutines"], s.values["process_open_fds"], s.syncs, s.edits)
	}
	leaks := 0
	for _, k := range soakSeries {
		var series []float64
		for _, s := range samples {
			series = append(series, s.values[k]/soakUnit[k])
		}
		v, err := judgeSoak(series, soakTolerances[k])
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if !v.Flat {
			leaks++
		}
		label := k
		if soakUnit[k] == 1<<20 {
			label += " (MiB)"
		}
		fmt.Fprintf(&b, "%-36s %s\n", label, v)
	}
	verdict := "flat"
	if leaks > 0 {
		verdict = fmt.Sprintf("LEAK (%d of %d series grow)", leaks, len(soakSeries))
	}
	fmt.Fprintf(&b, "verdict: %s\n", verdict)
	t.Logf("\n%s", b.String())
	_ = os.WriteFile(filepath.Join(cfg.artifacts, "soak-summary.txt"), []byte(b.String()), 0o644)
	if leaks > 0 {
		t.Errorf("the controller leaks: %s", verdict)
	}
}

// patchQuiet patches a set without logging it (thousands of edits).
func patchQuiet(t *testing.T, ctx context.Context, ns, name, patch string) {
	t.Helper()
	if _, err := cfg.kc.AppsV1().StatefulSets(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch %s with %s: %v", name, patch, err)
	}
}

package replay

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// Every run foldRuns makes is what its fold line claims: the list is covered once, in order, and each
// repetition has the first's shapes with every number moved by the same amount as the one before.
func TestFoldRunsAreRepetitions(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"delete Pod web-%d", "create Pod web-%d (revision B)", "kubelet: pod web-%d Ready", "updateStatus (ready=%d)"}
	for trial := 0; trial < 300; trial++ {
		var items []string
		ord := rng.Intn(500)
		for len(items) < 80 {
			switch rng.Intn(4) {
			case 0: // a regular stretch: one pod at a time, down
				n := rng.Intn(12)
				for i := 0; i < n; i++ {
					items = append(items, fmt.Sprintf(words[0], ord), fmt.Sprintf(words[1], ord))
					ord--
				}
			default: // noise
				items = append(items, fmt.Sprintf(words[rng.Intn(len(words))], rng.Intn(20)))
			}
		}
		shapes := make([]shape, len(items))
		for i, s := range items {
			shapes[i] = shapeOf(s)
		}
		next, folded := 0, 0
		for _, r := range foldRuns(shapes, 4, 12) {
			if r.start != next || r.reps < 1 || r.period < 1 {
				t.Fatalf("trial %d: run %+v does not start at %d", trial, r, next)
			}
			next = r.start + r.reps*r.period
			if r.reps == 1 {
				continue
			}
			folded++
			if r.reps < 4 || r.reps*r.period < 12 {
				t.Fatalf("trial %d: run %+v is shorter than asked", trial, r)
			}
			for j := 0; j < r.period; j++ {
				first, second := shapes[r.start+j], shapes[r.start+r.period+j]
				for k := 1; k < r.reps; k++ {
					a, b := shapes[r.start+(k-1)*r.period+j], shapes[r.start+k*r.period+j]
					if a.text != first.text || b.text != first.text || len(a.nums) != len(b.nums) {
						t.Fatalf("trial %d: run %+v repeats %q as %q", trial, r, first.text, b.text)
					}
					for x := range a.nums {
						if b.nums[x]-a.nums[x] != second.nums[x]-first.nums[x] {
							t.Fatalf("trial %d: run %+v: %q moves by another amount at repetition %d", trial, r, items[r.start+k*r.period+j], k)
						}
					}
				}
			}
		}
		if next != len(items) {
			t.Fatalf("trial %d: runs cover %d of %d items", trial, next, len(items))
		}
		_ = folded
	}
	// a stretch of 300 pods folds into one run; a different item in the middle splits it
	var items []shape
	for o := 299; o >= 0; o-- {
		items = append(items, shapeOf(fmt.Sprintf(words[0], o)), shapeOf(fmt.Sprintf(words[1], o)))
	}
	if runs := foldRuns(items, 4, 12); len(runs) != 1 || runs[0].reps != 300 || runs[0].period != 2 || runs[0].step != -1 {
		t.Fatalf("300 pods one at a time: runs %+v", runs)
	}
	items[301] = shapeOf("create Pod web-149 (revision C)")
	runs := foldRuns(items, 4, 12)
	if len(runs) < 3 {
		t.Fatalf("an odd step in the middle is folded away: runs %+v", runs)
	}
}

// A replay and a preview of a 200-pod Parallel set print a screen, every line within textWidth but the
// scenario's own description, and keep what the fold leaves out countable: the first and last pods.
func TestTextStaysAScreenAt200Pods(t *testing.T) {
	sc, err := ParseScenario([]byte(`name: par200
description: 200-replica Parallel set with claims
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default, labels: {app: web}}
    spec:
      replicas: 200
      podManagementPolicy: Parallel
      serviceName: web
      selector: {matchLabels: {app: web}}
      updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: "10%"}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: nginx, image: "registry.k8s.io/nginx-slim:0.27"}]}
      volumeClaimTemplates:
        - metadata: {name: data}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := tl.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	screen(t, "replay", text.String(), 60, "create Pod web-0 (revision A)", "create Pod web-199 (revision A)", "pods: 0..199:A/Ready",
		"... 198 more, one ordinal higher each time ...")
	world, err := ScenarioFromSnapshot(tl.Final)
	if err != nil {
		t.Fatal(err)
	}
	world.Kubelet = sc.Kubelet
	edit := []byte(strings.Replace(string(sc.Manifests[0]), "nginx-slim:0.27", "nginx-slim:0.28", 1))
	p, err := PreviewEdit(context.Background(), world, edit, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	screen(t, "preview", text.String(), 30, "maxUnavailable 10% = 20 pods", "delete Pod web-199;", "delete Pod web-0",
		"[web-199..web-180] ->", "8 more times the same, 20 ordinals lower each time", "[web-19..web-0]", `image: "registry.k8s.io/nginx-slim:0.27" -> "registry.k8s.io/nginx-slim:0.28"`)
	if len(p.Steps) != 20 || len(p.Batches) != 10 {
		t.Errorf("the JSON keeps every step and batch: %d steps, %d batches", len(p.Steps), len(p.Batches))
	}
}

func screen(t *testing.T, what, text string, maxLines int, mentions ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) > maxLines {
		t.Errorf("%s prints %d lines, want at most %d:\n%s", what, len(lines), maxLines, text)
	}
	for _, l := range lines {
		if len(l) > textWidth && !strings.Contains(l, "description") && !strings.HasPrefix(l, "replay ") &&
			!strings.Contains(l, "updateStatus") && !strings.Contains(l, " -> \"") {
			t.Errorf("%s prints a line of %d characters: %s", what, len(l), l)
		}
	}
	for _, m := range mentions {
		if !strings.Contains(text, m) {
			t.Errorf("%s does not say %q:\n%s", what, m, text)
		}
	}
}

// Hostile probe (issue 31's folding): digits that are not counts never pass for one another, and a fold
// line names the direction the ordinals of the pod names move, not any number's.
func TestFoldNeverHidesADifference(t *testing.T) {
	for _, c := range [][2]string{{"weight=0.5", "weight=0.05"}, {"build=7", "build=007"}, {"v1.2", "v1.20"}} {
		if a, b := shapeOf(c[0]), shapeOf(c[1]); a.text == b.text {
			t.Errorf("%q and %q have one shape %q: a fold could hide one behind the other", c[0], c[1], a.text)
		}
	}
	var items []shape
	for i := 0; i < 20; i++ { // an annotation counting up while the rollout goes down
		items = append(items, shapeOf(fmt.Sprintf("user: set note=%d; delete Pod web-%d; create ControllerRevision web-6cbd9df98d", i+2, 38-i)))
	}
	runs := foldRuns(items, 4, 12)
	if len(runs) != 1 || runs[0].step != -1 || !strings.Contains(runs[0].left("times"), "one ordinal lower") {
		t.Errorf("runs %+v: want one, its ordinals one lower each time", runs)
	}
	items = items[:0]
	for i := 0; i < 20; i++ { // only a counter moves: no direction is claimed
		items = append(items, shapeOf(fmt.Sprintf("user: set note=%d on Pod web2-0", i)))
	}
	if runs := foldRuns(items, 4, 12); len(runs) != 1 || runs[0].step != 0 || strings.Contains(runs[0].left("times"), "ordinal") {
		t.Errorf("runs %+v (%q): a counter is not an ordinal", runs, runs[0].left("times"))
	}
}

// Hostile probe: offsets longer than the column ("+5h59m48s") pushed a preview's steps out of line.
func TestPreviewStepsStayInLine(t *testing.T) {
	p := &Preview{Steps: []PreviewStep{{Offset: Duration(5 * time.Second), Actions: []string{"delete Pod web-1"}},
		{Offset: Duration(5*time.Hour + 59*time.Minute + 48*time.Second), Actions: []string{"create Pod web-1 (revision B)"}}}}
	var b bytes.Buffer
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	cols := map[int]bool{}
	for _, l := range strings.Split(b.String(), "\n") {
		if i := strings.Index(l, "Pod web-1"); i >= 0 {
			cols[i] = true
		}
	}
	if len(cols) != 1 {
		t.Errorf("the steps' writes start at columns %v:\n%s", cols, b.String())
	}
}

// A pace learned from a live set (kubectl ordinal preview, the webhook's /preview) said where each delay came
// from in one line of about 150 characters: its parts are wrapped at the width, words and all kept.
func TestLearnedPaceLineFits(t *testing.T) {
	zero, five := 0.0, 5.0
	p := &Preview{Pace: Pace{StartSeconds: &zero, ReadySeconds: &zero, TerminationSeconds: &five, RestartSeconds: &zero,
		From: PaceLearned, Learned: &LearnedPace{StartPods: 5, ReadyPods: 5, Replacements: 5}}}
	var b bytes.Buffer
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	var pace []string
	for _, l := range strings.Split(b.String(), "\n") {
		if len(l) > textWidth {
			t.Errorf("a line of %d characters: %s", len(l), l)
		}
		if strings.HasPrefix(l, "pace: ") || (len(pace) > 0 && strings.HasPrefix(l, "  ")) {
			pace = append(pace, strings.TrimSpace(strings.TrimPrefix(l, "pace: ")))
		} else if len(pace) > 0 {
			break
		}
	}
	if got, want := strings.Join(pace, " "), p.Pace.String(); got != want {
		t.Errorf("the pace lines say\n%s\nwant\n%s", got, want)
	}
}

// An OrderedReady rollout in batches (maxUnavailable 2 or more) repeats a batch of about three syncs a pod:
// longer than the groups once looked for (6), and with the pods' own repeats inside. At 300 pods its text
// ran to 5767 lines under maxUnavailable 2 and 1777 under 10 (here, 120 pods: 2300 and 700); folded, the
// batches and the pods inside the batches shown, it stays as short at any size and maxUnavailable.
func TestTextStaysShortForBatchesUnderOrderedReady(t *testing.T) {
	for _, c := range []struct {
		maxUnavailable int
		fold           string
	}{
		{2, "2 ordinals lower each time"},
		{10, "10 ordinals lower each time"},
	} {
		sc, err := ParseScenario([]byte(fmt.Sprintf(`name: ordered120
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default, labels: {app: web}}
    spec:
      replicas: 120
      serviceName: web
      selector: {matchLabels: {app: web}}
      updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: %d}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: nginx, image: "registry.k8s.io/nginx-slim:0.27"}]}
events:
  - settled: true
    set: {"spec.template.spec.containers[0].image": registry.k8s.io/nginx-slim:0.28}
`, c.maxUnavailable)))
		if err != nil {
			t.Fatal(err)
		}
		tl, err := Run(context.Background(), sc, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := tl.WriteText(&text, false); err != nil {
			t.Fatal(err)
		}
		screen(t, fmt.Sprintf("replay, maxUnavailable %d", c.maxUnavailable), text.String(), 250, c.fold,
			"117 more times the same, one ordinal higher each time", "delete Pod web-119", "create Pod web-0 (revision B)",
			"all 120 pods Ready at revision B")
	}
}

// eachFolded shows every item once or folds it into exactly one fold line, in order, however deep the
// repetitions nest: a fold inside a shown repetition never hides what the outer fold line does not count.
func TestEachFoldedCoversEveryItemOnce(t *testing.T) {
	var items []shape
	for batch := 0; batch < 30; batch++ { // 30 batches of 10 pods, each pod three items, a batch's head first
		items = append(items, shapeOf(fmt.Sprintf("delete Pod web-%d", 299-10*batch)))
		for p := 0; p < 10; p++ {
			o := 290 - 10*batch + p
			items = append(items, shapeOf(fmt.Sprintf("create Pod web-%d", o)), shapeOf("watch"), shapeOf(fmt.Sprintf("Ready web-%d", o)))
		}
	}
	next, shown, folds := 0, 0, 0
	eachFolded(items, 4, 12, func(i int) {
		if i != next {
			t.Fatalf("item %d shown, want %d", i, next)
		}
		next, shown = i+1, shown+1
	}, func(r run, first, last int) {
		if first != next || last < first {
			t.Fatalf("fold %+v of %d..%d, want from %d", r, first, last, next)
		}
		next, folds = last+1, folds+1
	})
	if next != len(items) {
		t.Fatalf("%d of %d items shown or folded", next, len(items))
	}
	if shown > 60 || folds != 3 { // the batches folded, and the pods inside the first and last batch shown
		t.Errorf("%d items shown in %d folds; want the batches and the pods inside them folded", shown, folds)
	}
}

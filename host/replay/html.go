package replay

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
)

// htmlData is the timeline as the page's script reads it. It is compact on purpose: a pod's state is
// stored once per run of syncs in which it did not change, not once per sync, so a 1000-pod rollout
// of thousands of syncs stays a page of a few MB (pods x syncs would be tens of MB).
type htmlData struct {
	Scenario    string          `json:"scenario"`
	Description string          `json:"description"`
	Model       string          `json:"model"`
	Start       string          `json:"start"`
	Revisions   []RevisionLabel `json:"revisions"`
	Outcome     Outcome         `json:"outcome"`
	Labels      []string        `json:"labels"` // revision letters the runs refer to: Revisions' first, then any other ("?")
	States      []string        `json:"states"` // pod states the runs refer to
	Steps       []htmlStep      `json:"steps"`
	Pods        []htmlPod       `json:"pods"` // one row per pod name that ever existed, in ordinal order
}

// htmlStep is one sync, without its pods (they are in the runs).
type htmlStep struct {
	MS      float64     `json:"ms"` // virtual time since the start, in milliseconds: the x axis
	Trigger []string    `json:"trig,omitempty"`
	World   [][2]string `json:"world,omitempty"` // [source, message]: the script marks source "user" as an edit
	Actions []string    `json:"act,omitempty"`
	Requeue float64     `json:"rq,omitempty"` // requeueAfterSeconds the sync asked for
	Error   string      `json:"err,omitempty"`
	Status  string      `json:"st,omitempty"` // left out when it is the previous step's: it rarely changes
}

// htmlPod is one row of the picture: the pod's runs of identical state, in step order. A run is
// [firstStep, state, label, terminating 0|1] and lasts until the next run's firstStep (or the last
// step); [firstStep] alone means that no pod of this name exists from then on.
type htmlPod struct {
	Ordinal int     `json:"o"`
	Name    string  `json:"name"`
	Runs    [][]int `json:"runs"`
}

// WriteHTML writes a self-contained page (no external resources) that draws the rollout: one row
// per pod, x in virtual time, each stretch coloured by the pod's revision and shaded by its state,
// user edits and requeues marked above, the whole picture fitted to the window (drag to zoom, click
// for a sync's details). The timeline travels as JSON inside the page and a small script draws it on
// a canvas; the script records what it drew in #render-stats, which the headless-browser test reads.
func (tl *Timeline) WriteHTML(w io.Writer) error {
	data, err := json.Marshal(tl.htmlData()) // escapes <, > and &: safe inside <script>
	if err != nil {
		return err
	}
	return htmlPage().Execute(w, map[string]any{"Title": tl.Scenario, "Data": template.JS(data)})
}

// WriteHTML draws the previewed rollout: the replay of the edit, as WriteHTML draws a replay's.
func (p *Preview) WriteHTML(w io.Writer) error {
	if p.Timeline == nil {
		return fmt.Errorf("preview of %s has no replay to draw (read back from JSON)", p.Set)
	}
	return p.Timeline.WriteHTML(w)
}

func (tl *Timeline) htmlData() htmlData {
	d := htmlData{Scenario: tl.Scenario, Description: tl.Description, Model: tl.Model, Start: tl.Start,
		Revisions: tl.Revisions, Outcome: tl.Outcome, Labels: []string{}, States: []string{},
		Steps: make([]htmlStep, len(tl.Steps)), Pods: []htmlPod{}}
	if d.Revisions == nil {
		d.Revisions = []RevisionLabel{}
	}
	labels, states := index{}, index{}
	for _, r := range d.Revisions {
		labels.of(&d.Labels, r.Label)
	}
	status := ""
	for i, st := range tl.Steps {
		hs := htmlStep{MS: float64(st.Offset) / 1e6, Trigger: st.Trigger, Requeue: st.Requeue, Error: st.Error}
		for _, e := range st.World {
			hs.World = append(hs.World, [2]string{e.Source, e.Message})
		}
		for _, a := range st.Actions {
			hs.Actions = append(hs.Actions, a.String())
		}
		if st.Revisions != status || i == 0 {
			hs.Status, status = st.Revisions, st.Revisions
		}
		d.Steps[i] = hs
	}

	// Runs: walk the steps once, extending each pod's current run while its state stays the same.
	rows := map[string]*htmlPod{}
	last := map[string][]int{} // the pod's current run
	for i, st := range tl.Steps {
		seen := map[string]bool{}
		for p := range st.Pods.All() {
			seen[p.Name] = true
			run := []int{i, states.of(&d.States, p.State()), labels.of(&d.Labels, p.Label), b2i(p.Terminating)}
			row := rows[p.Name]
			if row == nil {
				row = &htmlPod{Ordinal: p.Ordinal, Name: p.Name}
				rows[p.Name] = row
			}
			if cur := last[p.Name]; cur == nil || !sameRun(cur, run) {
				row.Runs = append(row.Runs, run)
				last[p.Name] = run
			}
		}
		for name, row := range rows {
			if !seen[name] && last[name] != nil {
				row.Runs = append(row.Runs, []int{i}) // gone
				last[name] = nil
			}
		}
	}
	for _, row := range rows {
		d.Pods = append(d.Pods, *row)
	}
	sort.Slice(d.Pods, func(i, j int) bool {
		if d.Pods[i].Ordinal != d.Pods[j].Ordinal {
			return d.Pods[i].Ordinal < d.Pods[j].Ordinal
		}
		return d.Pods[i].Name < d.Pods[j].Name
	})
	return d
}

// sameRun: the same state, label and terminating flag (the first element is where the run starts).
func sameRun(a, b []int) bool {
	return len(a) == len(b) && a[1] == b[1] && a[2] == b[2] && a[3] == b[3]
}

// index numbers strings in order of first appearance, appending new ones to a vocabulary.
type index map[string]int

func (ix index) of(vocab *[]string, s string) int {
	if i, ok := ix[s]; ok {
		return i
	}
	ix[s] = len(*vocab)
	*vocab = append(*vocab, s)
	return ix[s]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

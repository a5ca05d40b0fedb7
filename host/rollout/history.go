package rollout

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// History is a set's own ControllerRevisions (those it controls), oldest first, each with the pod-template changes from the
// revision before it: what `kubectl rollout history` shows, plus the difference.
type History struct {
	Namespace       string            `json:"namespace"`
	Name            string            `json:"name"`
	CurrentRevision string            `json:"currentRevision"`
	UpdateRevision  string            `json:"updateRevision"`
	Revisions       []HistoryRevision `json:"revisions"`
}

// HistoryRevision is one revision and how its template differs from the previous revision's.
type HistoryRevision struct {
	Revision
	Created string `json:"created,omitempty"`
	// ChangeCause is the kubernetes.io/change-cause annotation the revision copied from the set.
	ChangeCause string `json:"changeCause,omitempty"`
	// ComparedWith is the number of the revision Changes are from: the one before, when both hold a
	// template (0: not compared).
	ComparedWith int64    `json:"comparedWith,omitempty"`
	Changes      []Change `json:"changes"`
	Error        string   `json:"error,omitempty"` // the revision's data is not a template patch
}

// Change is one difference between two pod templates, at a path like spec.containers[app].image
// (list items with a name are named, others numbered; "(order)" after a list's path: its items were
// reordered); From and To are the JSON values, absent when the path is not on that side.
type Change struct {
	Path string          `json:"path"`
	From json.RawMessage `json:"from,omitempty"`
	To   json.RawMessage `json:"to,omitempty"`
}

// String is the change as one line: "+ path: to" (added), "- path: from" (removed), "~ path: from -> to".
func (c Change) String() string {
	switch {
	case c.From == nil:
		return fmt.Sprintf("+ %s: %s", c.Path, c.To)
	case c.To == nil:
		return fmt.Sprintf("- %s: %s", c.Path, c.From)
	}
	return fmt.Sprintf("~ %s: %s -> %s", c.Path, c.From, c.To)
}

// ChangeCauseAnnotation is the annotation kubectl's --record wrote and `kubectl rollout history` shows.
const ChangeCauseAnnotation = "kubernetes.io/change-cause"

// HistoryOf is the history of the snapshot's set.
func HistoryOf(snapshot []byte) (*History, error) {
	w, err := decode(snapshot)
	if err != nil {
		return nil, err
	}
	h := &History{Namespace: w.set.Namespace, Name: w.set.Name, CurrentRevision: w.set.Status.CurrentRevision,
		UpdateRevision: w.set.Status.UpdateRevision, Revisions: []HistoryRevision{}}
	labels := w.labels()
	counts := map[string]int{}
	for _, p := range w.pods {
		counts[p.Labels[appsv1.ControllerRevisionHashLabelKey]]++
	}
	var prev any
	var prevNumber int64
	for _, r := range w.history() {
		hr := HistoryRevision{Revision: Revision{RevisionRef: RevisionRef{Label: labels[r.Name], Name: r.Name, Number: r.Revision}, Pods: counts[r.Name],
			Current: r.Name == h.CurrentRevision, Update: r.Name == h.UpdateRevision},
			ChangeCause: r.Annotations[ChangeCauseAnnotation], Changes: []Change{}}
		if !r.CreationTimestamp.IsZero() {
			hr.Created = r.CreationTimestamp.UTC().Format(time.RFC3339)
		}
		tmpl, err := template(r)
		if err != nil {
			hr.Error = err.Error()
			prev = nil
		} else {
			if prev != nil {
				hr.Changes, hr.ComparedWith = diff(prev, tmpl), prevNumber
			}
			prev, prevNumber = tmpl, r.Revision
		}
		h.Revisions = append(h.Revisions, hr)
	}
	return h, nil
}

// template is the pod template a ControllerRevision records: upstream stores the set's
// spec.template as a strategic-merge patch that replaces it ({"spec":{"template":{...,"$patch":"replace"}}}).
func template(r *appsv1.ControllerRevision) (any, error) {
	var d struct {
		Spec struct {
			Template map[string]any `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(r.Data.Raw, &d); err != nil || d.Spec.Template == nil {
		return nil, fmt.Errorf("revision %s holds no pod template", r.Name)
	}
	delete(d.Spec.Template, "$patch")
	return d.Spec.Template, nil
}

// WriteText prints the history for people: a table of revisions, each followed by its changes.
func (h *History) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "StatefulSet %s/%s: %d revision%s\n", h.Namespace, h.Name, len(h.Revisions), plural(len(h.Revisions)))
	refs := make([]RevisionRef, len(h.Revisions))
	for i, r := range h.Revisions {
		refs[i] = r.RevisionRef
	}
	fmt.Fprintf(&b, "%s\n", RevisionLegend(refs))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tPODS\tCREATED\tCHANGE-CAUSE\t")
	for _, r := range h.Revisions {
		cause := strings.Join(strings.Fields(r.ChangeCause), " ") // a newline or tab would break the table
		if cause == "" {
			cause = "<none>"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Label, r.Pods, r.Created, cause, r.marks())
	}
	_ = tw.Flush()
	for i, r := range h.Revisions {
		switch {
		case r.Error != "":
			fmt.Fprintf(&b, "\n%s: %s\n", r.Label, r.Error)
		case i == 0:
		case r.ComparedWith == 0:
			fmt.Fprintf(&b, "\n%s: not compared (revision %s holds no template)\n", r.Label, h.Revisions[i-1].Label)
		case len(r.Changes) == 0: // compared with the revision before it (ComparedWith is its number)
			fmt.Fprintf(&b, "\n%s: the same template as %s\n", r.Label, h.Revisions[i-1].Label)
		default:
			fmt.Fprintf(&b, "\n%s from %s:\n", r.Label, h.Revisions[i-1].Label)
			for _, c := range r.Changes {
				fmt.Fprintf(&b, "  %s\n", c)
			}
		}
	}
	_, err := io.WriteString(w, termsafe.String(b.String()))
	return err
}

package rollout

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ordinal-dev/ordinal/internal/inplaceready"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// WriteText prints the status for people, like `kubectl argo rollouts get rollout`: the set, its
// revisions, the pods (consecutive ordinals in the same revision and state on one line, so a
// 1000-pod set stays a screen), the next sync's writes, and the state with its reasons.
func (s *Status) WriteText(w io.Writer) error {
	var b strings.Builder
	if s.State == StateNotFound {
		fmt.Fprintf(&b, "StatefulSet %s/%s: not found\n", s.Namespace, s.Name)
		_, err := io.WriteString(w, termsafe.String(b.String()))
		return err
	}
	fmt.Fprintf(&b, "StatefulSet %s/%s  %s\n", s.Namespace, s.Name, s.Settings.String())
	gen := fmt.Sprintf("generation %d", s.Generation)
	if s.ObservedGeneration != s.Generation {
		gen += fmt.Sprintf(" (observed %d)", s.ObservedGeneration)
	}
	fmt.Fprintf(&b, "  %s; replicas %d: ready %d, current %d, updated %d, available %d\n", gen, s.Replicas,
		s.ReadyReplicas, s.CurrentReplicas, s.UpdatedReplicas, s.AvailableReplicas)
	if l := s.applyPreviewLine(); l != "" {
		b.WriteString("  " + l + "\n")
	}
	for _, c := range s.Conditions {
		fmt.Fprintf(&b, "  condition %s=%s", c.Type, c.Status)
		if c.Reason != "" {
			b.WriteString(" " + c.Reason)
		}
		if c.LastTransitionTime != "" {
			b.WriteString(" since " + c.LastTransitionTime)
		}
		if c.Message != "" {
			b.WriteString(": " + c.Message)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	refs := make([]RevisionRef, len(s.Revisions))
	for i, r := range s.Revisions {
		refs[i] = r.RevisionRef
	}
	fmt.Fprintf(&b, "%s\n", RevisionLegend(refs))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tPODS\t")
	for _, r := range s.Revisions {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Label, r.Pods, r.marks())
	}
	_ = tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PODS\tREVISION\tSTATE\t")
	for _, r := range podRuns(s.Pods) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.names, r.pod.Revision, r.state())
	}
	if len(s.Pods) == 0 {
		fmt.Fprintln(tw, "(none)\t\t")
	}
	_ = tw.Flush()
	b.WriteString("\nnext sync: ")
	if len(s.Next.Writes) == 0 {
		b.WriteString("no writes")
	} else {
		ws := make([]string, len(s.Next.Writes))
		for i, x := range s.Next.Writes {
			ws[i] = x.Verb + " " + x.Kind + " " + x.Name
			if x.Error != "" {
				ws[i] += " (refused: " + x.Error + ")"
			}
			if x.HeldBy != nil {
				ws[i] += " (held by policy " + x.HeldBy.Policy + ")"
			}
		}
		b.WriteString(strings.Join(ws, ", "))
	}
	b.WriteString("\n")
	if s.Next.UpdateRevision != "" {
		fmt.Fprintf(&b, "  status: updateRevision %s (now %s)\n", s.Next.UpdateRevision, orNone(s.UpdateRevision))
	}
	if s.Next.CurrentRevision != "" {
		fmt.Fprintf(&b, "  status: currentRevision %s (now %s)\n", s.Next.CurrentRevision, orNone(s.CurrentRevision))
	}
	for _, e := range s.Next.Events {
		b.WriteString("  event: " + e + "\n")
	}
	fmt.Fprintf(&b, "state: %s\n", s.State)
	for _, r := range s.Reasons {
		b.WriteString("  " + r + "\n")
	}
	_, err := io.WriteString(w, termsafe.String(b.String()))
	return err
}

type podRun struct {
	names string
	pod   Pod
}

func (r podRun) state() string {
	s := r.pod.State
	if r.pod.Reason != "" {
		s += " (" + r.pod.Reason + ")"
	}
	if r.pod.Terminating {
		s += ", terminating"
	}
	if r.pod.InPlace != nil {
		s += ", " + r.pod.InPlace.String()
	}
	return s
}

// String says what a pod mid in-place update waits for, in a few words.
func (u *InPlaceUpdate) String() string {
	has := u.Has
	if has == "" {
		has = "none"
	}
	switch u.Waiting {
	case inplaceready.WaitImage:
		if u.OtherTag {
			return fmt.Sprintf("updating in place (container %s: image %s → %s; %s is no revision's image: the runtime may name %s by another of its tags, "+
				"which the pod's status cannot tell from a container not restarted yet, so it waits until you pin the image by digest or delete the pod)",
				u.Container, has, u.Want, has, u.Want)
		}
		return fmt.Sprintf("updating in place (container %s: image %s → %s)", u.Container, has, u.Want)
	case inplaceready.WaitResources:
		return fmt.Sprintf("updating in place (container %s: %s %s → %s)", u.Container, u.Resource, has, u.Want)
	case inplaceready.WaitStatus:
		return fmt.Sprintf("updating in place (container %s: no status yet, image %s)", u.Container, u.Want)
	case inplaceready.WaitResize:
		return "updating in place (resize pending)"
	case inplaceready.WaitGeneration:
		return fmt.Sprintf("updating in place (the kubelet's status is of generation %s, the pod's %s)", has, u.Want)
	case InPlaceReady:
		if u.RestartedAt != "" {
			return "updating in place (restarted " + u.RestartedAt + ", not Ready yet)"
		}
		return "updating in place (not Ready yet)"
	}
	return "updating in place"
}

// podRuns groups consecutive ordinals with the same revision and state: "web-0..web-497".
func podRuns(pods []Pod) []podRun {
	var out []podRun
	for _, r := range ordinal.Runs(pods, func(p Pod) int64 { return int64(p.Ordinal) }, func(a, b Pod) bool {
		return a.Revision == b.Revision && a.State == b.State && a.Reason == b.Reason && a.Terminating == b.Terminating &&
			(a.InPlace == nil) == (b.InPlace == nil) && (a.InPlace == nil || *a.InPlace == *b.InPlace)
	}) {
		names := pods[r[0]].Name
		if r[1]-r[0] > 1 {
			names += ".." + pods[r[1]-1].Name
		}
		out = append(out, podRun{names: names, pod: pods[r[0]]})
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// marks says which of the set's revisions this is: current, update, both or neither.
func (r Revision) marks() string {
	var m []string
	if r.Current {
		m = append(m, "current")
	}
	if r.Update {
		m = append(m, "update")
	}
	return strings.Join(m, ", ")
}

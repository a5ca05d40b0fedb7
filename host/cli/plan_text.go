package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// writePlanText prints a plan for people, like kubectl diff: the writes in order (+ create, ~ update or
// patch, - delete), the status change field by field against the snapshot's, the requeue, the events
// and the error. Module text is made safe for a terminal.
func writePlanText(w io.Writer, snapshot snapshotFile, p *abi.Plan) error {
	_, namespace, name := snapshot.setMeta()
	var b strings.Builder
	if name != "" {
		fmt.Fprintf(&b, "StatefulSet %s/%s: %d write%s\n", namespace, name, len(p.Actions), plural(len(p.Actions)))
	} else { // a snapshot without a readable set: the plan is the module's refusal
		fmt.Fprintf(&b, "%d write%s\n", len(p.Actions), plural(len(p.Actions)))
	}
	for _, a := range p.Actions {
		mark := map[string]string{abi.VerbCreate: "+", abi.VerbDelete: "-"}[a.Verb]
		if mark == "" {
			mark = "~"
		}
		fmt.Fprintf(&b, "  %s %s %s %s", mark, a.Verb, a.Kind, a.Name)
		if d := actionDetail(a); d != "" {
			b.WriteString(" (" + d + ")")
		}
		if a.Error != "" {
			b.WriteString("  [expected to fail: " + a.Error + "]")
		}
		b.WriteString("\n")
		if a.Verb == abi.VerbUpdateStatus {
			for _, l := range statusChanges(snapshot.setStatus(), a.Object) {
				fmt.Fprintf(&b, "      %s\n", l)
			}
		}
	}
	if p.RequeueAfterSeconds > 0 {
		fmt.Fprintf(&b, "requeue after %gs\n", p.RequeueAfterSeconds)
	}
	if len(p.Events) > 0 {
		b.WriteString("events:\n")
		for _, e := range p.Events {
			fmt.Fprintf(&b, "  %s %s: %s\n", e.Type, e.Reason, e.Message)
		}
	}
	if p.Error != nil {
		fmt.Fprintf(&b, "error: %s", p.Error.Code)
		if p.Error.Path != "" {
			fmt.Fprintf(&b, " at %s", p.Error.Path)
		}
		fmt.Fprintf(&b, ": %s\n", p.Error.Message)
	}
	_, err := io.WriteString(w, termsafe.String(b.String()))
	return err
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// actionDetail is what a write does beyond its verb: the revision of a created pod or revision, an
// adoption or release.
func actionDetail(a abi.Action) string {
	var o struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Revision *int64 `json:"revision"`
	}
	switch {
	case a.Verb == abi.VerbPatch:
		if hostplan.IsAdoption(a.Patch) {
			return "adopt"
		}
		return "release"
	case a.Kind == abi.KindPod && len(a.Object) > 0:
		_ = json.Unmarshal(a.Object, &o)
		if r := o.Metadata.Labels[appsv1.ControllerRevisionHashLabelKey]; r != "" {
			return "revision " + r
		}
	case a.Kind == abi.KindControllerRevision && a.Verb == abi.VerbCreate:
		_ = json.Unmarshal(a.Object, &o)
		if o.Revision != nil {
			return fmt.Sprintf("revision %d", *o.Revision)
		}
	}
	return ""
}

// statusChanges lists the status fields the plan changes, "field: old -> new".
func statusChanges(old map[string]any, object json.RawMessage) []string {
	var o struct {
		Status map[string]any `json:"status"`
	}
	if json.Unmarshal(object, &o) != nil {
		return nil
	}
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range o.Status {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		ov, nv := compactJSON(old[k]), compactJSON(o.Status[k])
		if ov != nv {
			out = append(out, fmt.Sprintf("status.%s: %s -> %s", k, ov, nv))
		}
	}
	return out
}

func compactJSON(v any) string {
	if v == nil {
		return "-"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// neverReadyWorld is a settled set of replicas created by the module (spec: the lines after serviceName;
// annotations: the set's, as a flow map or "") and the set as it ended, to edit.
func neverReadyWorld(t *testing.T, replicas int, spec, annotations, model string) (*Scenario, Obj) {
	t.Helper()
	if annotations != "" {
		annotations = "\n      annotations: " + annotations
	}
	sc, err := ParseScenario([]byte(fmt.Sprintf(`name: never-ready
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: web
      namespace: default
      labels: {app: web}%s
    spec:
      replicas: %d
      serviceName: web
      %s
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers: [{name: nginx, image: "registry.k8s.io/nginx-slim:0.27"}]
`, annotations, replicas, spec)))
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.Model = model
	tl, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Outcome.Result != "complete" {
		t.Fatalf("the set did not settle: %+v", tl.Outcome)
	}
	base, err := ScenarioFromSnapshot(tl.Final)
	if err != nil {
		t.Fatal(err)
	}
	final, err := jsonobj.DecodeObj(tl.Final)
	if err != nil {
		t.Fatal(err)
	}
	return base, jsonobj.GetObj(final, "statefulSet")
}

// previewOf previews the set edited by edit (applied to a copy) on base.
func previewOf(t *testing.T, base *Scenario, set Obj, opts Options, edit func(Obj)) *Preview {
	t.Helper()
	o := jsonobj.CloneObj(set)
	edit(o)
	p, err := PreviewEdit(context.Background(), base, mustJSON(o), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newImage(o Obj) {
	jsonobj.GetArr(o, "spec.template.spec.containers")[0].(Obj)["image"] = "registry.k8s.io/nginx-slim:0.28"
}

func warned(p *Preview, code string) (Warning, bool) {
	for _, w := range p.Warnings {
		if w.Code == code {
			return w, true
		}
	}
	return Warning{}, false
}

// The forced-rollback trap, predicted: an OrderedReady rollout to a revision that never becomes Ready stops
// at the top pod, web-4, before any pod is replaced, and reverting the template does not unstick it (the
// module waits for web-4 to be Ready first). With no recovery configured that is warned, naming the pod, in
// both kubelet models; the edit's own replay is not touched by the what-if (it completes).
func TestNeverReadyOrderedReadyIsUnrecoverable(t *testing.T) {
	for _, model := range []string{ModelDelays, ModelTick} {
		t.Run(model, func(t *testing.T) {
			base, set := neverReadyWorld(t, 5, "podManagementPolicy: OrderedReady", "", model)
			opts := testOptions()
			opts.Model = model
			p := previewOf(t, base, set, opts, newImage)
			if p.Outcome.Result != "complete" {
				t.Errorf("the edit's own replay: %+v (the never-Ready model leaked into it?)", p.Outcome)
			}
			n := p.NeverReady
			if n == nil {
				t.Fatal("no never-Ready answer for a template change")
			}
			if n.Result != "stalls" || !slices.Equal(n.WaitsOn, []string{"web-4"}) || n.Replaced != 0 || n.AtNewRevision != 1 ||
				n.Unavailable != 1 || n.Replicas != 5 || n.Revision != p.To {
				t.Errorf("stall: %+v", n)
			}
			if n.Undo == nil || n.Undo.Recovers || n.Undo.Undetermined || n.Undo.Outcome.Result != "stuck" || len(n.Undo.Deleted) != 0 {
				t.Errorf("undo: %+v, want stuck with nothing deleted", n.Undo)
			}
			if n.Recovery.Kind != RecoveryManual {
				t.Errorf("recovery %+v, want manual", n.Recovery)
			}
			w, ok := warned(p, WarnUnrecoverable)
			if !ok || !strings.Contains(w.Message, "stalls on web-4") || !strings.Contains(w.Message, "kubectl delete pod web-4") {
				t.Errorf("warning Unrecoverable naming web-4: %+v", p.Warnings)
			}
			var js bytes.Buffer
			if err := p.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				NeverReady *NeverReadyOutcome `json:"neverReady"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.NeverReady == nil || doc.NeverReady.Result != "stalls" {
				t.Errorf("-o json has no neverReady (%v): %.400s", err, js.String())
			}
		})
	}
}

// With extension recover-stuck set (on the extended module) the stall is not warned: the recovery is named,
// and the undo replay shows it: once the template is reverted the stuck web-4 is replaced after
// recover-stuck-after. On the faithful module, which does not have the extension, the annotation does
// nothing: it is reported as ignored and the trap is warned.
func TestNeverReadyRecoverStuckIsNamed(t *testing.T) {
	base, set := neverReadyWorld(t, 5, "podManagementPolicy: OrderedReady", "{ordinal.dev/module: extended, ordinal.dev/recover-stuck-after: 10m}", "")
	p := previewOf(t, base, set, testOptions(), newImage)
	n := p.NeverReady
	if n == nil || n.Result != "stalls" || !slices.Equal(n.WaitsOn, []string{"web-4"}) {
		t.Fatalf("never-Ready: %+v", n)
	}
	if _, ok := warned(p, WarnUnrecoverable); ok {
		t.Errorf("Unrecoverable warned with recover-stuck-after set: %+v", p.Warnings)
	}
	if n.Recovery.Kind != RecoveryRecoverStuck || !strings.Contains(n.Recovery.Detail, "ordinal.dev/recover-stuck-after 10m") {
		t.Errorf("recovery %+v, want recover-stuck named", n.Recovery)
	}
	if n.Undo == nil || !n.Undo.Recovers || !slices.Equal(n.Undo.Deleted, []string{"web-4"}) || time.Duration(n.Undo.Outcome.Duration) < 10*time.Minute {
		t.Errorf("undo: %+v, want web-4 replaced after 10m", n.Undo)
	}
	if !strings.Contains(n.Summary, "recovery configured: ordinal.dev/recover-stuck-after 10m") {
		t.Errorf("summary: %s", n.Summary)
	}

	base, set = neverReadyWorld(t, 5, "podManagementPolicy: OrderedReady", "{ordinal.dev/recover-stuck-after: 10m}", "")
	p = previewOf(t, base, set, testOptions(), newImage)
	if n := p.NeverReady; n == nil || n.Recovery.Kind != RecoveryManual || len(n.Recovery.Ignored) != 1 || !strings.Contains(n.Recovery.Ignored[0], "does not have the extension") {
		t.Errorf("faithful module: recovery %+v", p.NeverReady)
	}
	if _, ok := warned(p, WarnUnrecoverable); !ok {
		t.Errorf("faithful module: no Unrecoverable: %+v", p.Warnings)
	}
}

// Parallel with maxUnavailable 2: what the module does. The first batch, web-3 and web-4, comes up never
// Ready and the rollout stalls with both unavailable; reverting the template replaces both (the update pass
// deletes pods not at the update revision however unhealthy), so there is no warning.
func TestNeverReadyParallelMaxUnavailable(t *testing.T) {
	base, set := neverReadyWorld(t, 5, "podManagementPolicy: Parallel\n      updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}", "", "")
	p := previewOf(t, base, set, testOptions(), newImage)
	n := p.NeverReady
	if n == nil || n.Result != "stalls" || !slices.Equal(n.WaitsOn, []string{"web-3", "web-4"}) || n.AtNewRevision != 2 || n.Unavailable != 2 || n.Replaced != 0 {
		t.Fatalf("never-Ready: %+v", n)
	}
	if n.Undo == nil || !n.Undo.Recovers || !slices.Equal(n.Undo.Deleted, []string{"web-3", "web-4"}) {
		t.Errorf("undo: %+v", n.Undo)
	}
	if _, ok := warned(p, WarnUnrecoverable); ok {
		t.Errorf("warned Unrecoverable though the revert recovers: %+v", p.Warnings)
	}
	var text bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if flat := strings.Join(strings.Fields(text.String()), " "); !strings.Contains(flat, "if B never becomes Ready: the rollout stalls on web-3, web-4") ||
		!strings.Contains(flat, "reverting the template recovers it: the controller replaces web-3, web-4") {
		t.Errorf("text:\n%s", text.String())
	}
}

// Only a template change makes a new revision to ask about: a scale or a change of the set's annotations has
// no never-Ready answer, nor has a template change under OnDelete (the controller replaces no pod).
func TestNeverReadyOnlyForATemplateChange(t *testing.T) {
	base, set := neverReadyWorld(t, 3, "podManagementPolicy: OrderedReady", "", "")
	for name, edit := range map[string]func(Obj){
		"scale":      func(o Obj) { jsonobj.Set(o, "spec.replicas", 5) },
		"annotation": func(o Obj) { jsonobj.Ensure(jsonobj.Ensure(o, "metadata"), "annotations")["example.com/owner"] = "a" },
		"onDelete":   func(o Obj) { newImage(o); jsonobj.Set(o, "spec.updateStrategy", map[string]any{"type": "OnDelete"}) },
	} {
		p := previewOf(t, base, set, testOptions(), edit)
		if p.NeverReady != nil {
			t.Errorf("%s: never-Ready answer %+v", name, p.NeverReady)
		}
		if _, ok := warned(p, WarnUnrecoverable); ok {
			t.Errorf("%s: warned Unrecoverable", name)
		}
		var text bytes.Buffer
		if err := p.WriteText(&text); err != nil || strings.Contains(text.String(), "never becomes Ready") {
			t.Errorf("%s: text (%v):\n%s", name, err, text.String())
		}
	}
}

// Extension progress-deadline's Rollback counts as a configured recovery when both annotations are valid
// and the set's module has the extension: it is named, the trap not warned, and the never-Ready replay itself
// shows the module rolling back (it settles). Pause stops the rollout without getting it out; an invalid
// value, or a module without the extension, is reported as ignored, and the trap is warned.
func TestNeverReadyProgressDeadline(t *testing.T) {
	for _, c := range []struct {
		seconds, policy, module string
		configured              bool
		ignored                 string
	}{
		{"600", "Rollback", "extended", true, ""},
		{"600", "Rollback", "", false, "does not have the extension progress-deadline"}, // the default module, faithful
		{"30", "Pause", "extended", false, "stops the rollout at the deadline"},
		{"0", "Rollback", "extended", false, "not a positive whole number of seconds"},
		{"ten", "Rollback", "extended", false, "not a positive whole number of seconds"},
		{"600", "Retry", "extended", false, "neither Rollback nor Pause"},
		{"600", "", "extended", false, "without ordinal.dev/on-progress-deadline"},
	} {
		ann := fmt.Sprintf(`ordinal.dev/progress-deadline-seconds: %q`, c.seconds)
		if c.policy != "" {
			ann += fmt.Sprintf(`, ordinal.dev/on-progress-deadline: %q`, c.policy)
		}
		if c.module != "" {
			ann += ", ordinal.dev/module: " + c.module
		}
		ann = "{" + ann + "}"
		base, set := neverReadyWorld(t, 3, "podManagementPolicy: OrderedReady", ann, "")
		p := previewOf(t, base, set, testOptions(), newImage)
		n := p.NeverReady
		_, warnedTrap := warned(p, WarnUnrecoverable)
		if c.configured {
			if n == nil || n.Result != "settles" || n.Recovery.Kind != RecoveryProgressDeadline || !strings.Contains(n.Recovery.Detail, c.seconds) ||
				!strings.Contains(n.Recovery.Detail, c.policy) || warnedTrap {
				t.Errorf("%s: never-Ready %+v, warned %v; want it to settle (the module rolls back) with the deadline named", ann, n, warnedTrap)
			}
			continue
		}
		if n == nil || n.Result != "stalls" {
			t.Fatalf("%s: never-Ready %+v", ann, n)
		}
		if n.Recovery.Kind != RecoveryManual || len(n.Recovery.Ignored) != 1 || !strings.Contains(n.Recovery.Ignored[0], c.ignored) || !warnedTrap {
			t.Errorf("%s: recovery %+v, warned %v; want ignored %q and the trap warned", ann, n.Recovery, warnedTrap, c.ignored)
		}
	}
}

// The what-if runs under the preview's Budget: a deadline already passed leaves it undetermined (not
// replayed, nothing warned); a budget of syncs bounds each replay, and the never-Ready one, which stops as
// soon as nothing more happens, stalls within a few syncs of a 100-pod set whose own rollout the budget cuts
// short.
func TestNeverReadyWithinTheBudget(t *testing.T) {
	base, set := neverReadyWorld(t, 100, "podManagementPolicy: OrderedReady", "", "")
	opts := testOptions()
	opts.Budget = Budget{Deadline: time.Now().Add(-time.Second)}
	p := previewOf(t, base, set, opts, newImage)
	if n := p.NeverReady; n == nil || n.Result != "undetermined" || n.Undo != nil {
		t.Errorf("deadline passed: %+v", n)
	}
	if _, ok := warned(p, WarnUnrecoverable); ok {
		t.Errorf("warned without an answer: %+v", p.Warnings)
	}

	opts.Budget = Budget{Syncs: 40}
	p = previewOf(t, base, set, opts, newImage)
	if p.Outcome.Result != "partial" {
		t.Fatalf("the edit's replay: %+v, want it cut short by the budget", p.Outcome)
	}
	n := p.NeverReady
	if n == nil || n.Result != "stalls" || !slices.Equal(n.WaitsOn, []string{"web-99"}) || n.Outcome.Steps >= 40 {
		t.Fatalf("never-Ready within 40 syncs: %+v", n)
	}
	if n.Undo == nil || n.Undo.Recovers || n.Undo.Outcome.Steps >= 40 {
		t.Errorf("undo: %+v", n.Undo)
	}
	if _, ok := warned(p, WarnUnrecoverable); !ok {
		t.Errorf("no Unrecoverable: %+v", p.Warnings)
	}
}

// A what-if replay is not started when the preview's deadline leaves no time for one sync as long as the
// longest of the replays before it (the margins are an hour: no machine's speed decides).
func TestBudgetWouldPass(t *testing.T) {
	soon := time.Now().Add(time.Hour)
	for _, c := range []struct {
		b    Budget
		want bool
	}{
		{Budget{}, false},
		{Budget{Syncs: 10}, false},
		{Budget{Deadline: soon}, false},
		{Budget{Deadline: soon, longest: 2 * time.Hour}, true},
		{Budget{Deadline: time.Now().Add(-time.Hour)}, true},
	} {
		if got := c.b.wouldPass(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.b, got, c.want)
		}
	}
}

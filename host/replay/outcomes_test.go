package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// goPolicy is a policy module in Go: answer is its answer to every plan (or the error of its call).
type goPolicy struct {
	name   string
	answer func(in abi.PolicyInput) ([]byte, error)
}

func (p goPolicy) Name() string        { return p.name }
func (p goPolicy) Wants(c string) bool { return false }
func (p goPolicy) Evaluate(_ context.Context, input []byte) ([]byte, error) {
	var in abi.PolicyInput
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	return p.answer(in)
}

// approval holds every pod delete until... never: the set waits for an approval no one gives.
var approval = goPolicy{name: "approval", answer: func(in abi.PolicyInput) ([]byte, error) {
	var holds []abi.PolicyHold
	for i, a := range in.Plan.Actions {
		if i >= in.From && a.Verb == abi.VerbDelete && a.Kind == abi.KindPod && a.Error == "" {
			holds = append(holds, abi.PolicyHold{Action: i, Reason: "NotApproved", Message: "annotate the set with approval.example/ok: \"true\"", RetryAfterSeconds: 60})
		}
	}
	return json.Marshal(abi.PolicyAnswer{ABI: 1, Holds: append([]abi.PolicyHold{}, holds...)})
}}

// trapping fails every call as a trapping module does.
var trapping = goPolicy{name: "trapping", answer: func(abi.PolicyInput) ([]byte, error) {
	return nil, &wasm.Error{Kind: wasm.ErrTrap, Op: "evaluate", Msg: "module trapped: unreachable"}
}}

// replayWithPolicies replays a 3-replica set, its image changed once it settles, naming the policies (and
// annotated with extra, YAML flow members).
func replayWithPolicies(t *testing.T, names, extra string, ps ...goPolicy) *Timeline {
	t.Helper()
	sc, err := ParseScenario([]byte(`name: held
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default, annotations: {ordinal.dev/policies: "` + names + `"` + extra + `}}
    spec:
      replicas: 3
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: "registry.k8s.io/nginx-slim:0.27"}]}
events:
  - settled: true
    set: {"spec.template.spec.containers[0].image": registry.k8s.io/nginx-slim:0.28}
`))
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.NamedPolicy = func(_ context.Context, name string) (policy.Module, error) {
		for _, p := range ps {
			if p.name == name {
				return p, nil
			}
		}
		return namedTestPolicy(context.Background(), name)
	}
	tl, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// A rollout that ends waiting on a policy's hold ends "held", by the policy's own answer (its reason, message
// and retry, since when it holds), not "stuck"; the text tells the hold's message once per change, not once per
// sync, and not again as the sync's error or (-v) its event.
func TestRolloutEndsHeld(t *testing.T) {
	tl := replayWithPolicies(t, "approval", "", approval)
	o := tl.Outcome
	if o.Result != OutcomeHeld || len(o.Held) != 1 {
		t.Fatalf("outcome %s: %s (held %+v), want held", o.Result, o.Summary, o.Held)
	}
	h := o.Held[0]
	if h.Policy != "approval" || h.Verb != abi.VerbDelete || h.Name != "web-2" || h.Reason != "NotApproved" ||
		!strings.Contains(h.Message, "approval.example/ok") || h.RetryAfterSeconds != 60 {
		t.Errorf("held %+v", h)
	}
	first := -1
	for _, st := range tl.Steps {
		for _, a := range st.Actions {
			if a.Held != nil && first < 0 {
				first = st.Index
				if h.Since != st.Offset || h.SinceTime != st.Time {
					t.Errorf("held since %s (%s), want the first hold's sync, +%s (%s)", h.Since, h.SinceTime, st.Offset, st.Time)
				}
			}
		}
	}
	if first < 0 || !strings.Contains(o.Summary, "policy approval holds delete Pod web-2 since +") || !strings.Contains(o.Summary, "asks again after 1m") {
		t.Errorf("summary %q", o.Summary)
	}
	for _, verbose := range []bool{false, true} {
		var b bytes.Buffer
		if err := tl.WriteText(&b, verbose); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		syncs := strings.Count(text, "-> held by policy approval (NotApproved)")
		if n := strings.Count(text, `approval.example/ok: "true"`); n != 3 || syncs < 2 { // the outcome twice, the hold once
			t.Errorf("verbose %v: the hold's message %d times, in %d held syncs shown, want 3 (the outcome, twice, and the hold's first sync):\n%s", verbose, n, syncs, text)
		}
		if !strings.HasPrefix(strings.SplitN(text, "\n", 3)[1], "== held after ") {
			t.Errorf("verbose %v: the outcome is not said first:\n%s", verbose, text)
		}
	}
}

// A policy that fails at every call is said once per policy and reason, first, with how often and since when
// (the end names its code); -o json has it typed.
func TestPolicyFailuresAreTold(t *testing.T) {
	tl := replayWithPolicies(t, "trapping", "", trapping)
	if tl.Outcome.Result != "complete" {
		t.Fatalf("outcome %s: a failing policy holds nothing back", tl.Outcome.Result)
	}
	if len(tl.PolicyFailures) != 1 {
		t.Fatalf("policy failures %+v, want one", tl.PolicyFailures)
	}
	f := tl.PolicyFailures[0]
	if f.Policy != "trapping" || f.Reason != policy.FailTrap || f.Count < 3 || !strings.Contains(f.Message, "module trapped") {
		t.Errorf("policy failure %+v: want trapping, trap, a call per pod replaced at least", f)
	}
	var b bytes.Buffer
	if err := tl.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	line := "policy trapping failed (trap) "
	if strings.Count(text, line) != 1 || strings.Index(text, line) > strings.Index(text, "revisions:") || !strings.Contains(text, "\nwarnings above: PolicyFailed\n") {
		t.Errorf("the failure is not said once before the steps, its code at the end:\n%s", text)
	}
	var js bytes.Buffer
	if err := tl.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		PolicyFailures []map[string]any `json:"policyFailures"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || len(got.PolicyFailures) != 1 || got.PolicyFailures[0]["reason"] != "trap" ||
		got.PolicyFailures[0]["policy"] != "trapping" || got.PolicyFailures[0]["count"] == nil || got.PolicyFailures[0]["firstAt"] == nil {
		t.Errorf("-o json's policyFailures: %v %+v", err, got.PolicyFailures)
	}
}

// The controller's Warning events are in the text too, each reason and message once (the end names the
// reason): an annotation the module cannot read, as every sync reports it.
func TestWarningEventsAreTold(t *testing.T) {
	tl := replayWithPolicies(t, "", `, ordinal.dev/module: extended, ordinal.dev/paused: "True"`)
	if len(tl.WarningEvents) != 1 || tl.WarningEvents[0].Reason != abi.EventInvalidAnnotation || tl.WarningEvents[0].Count < 2 {
		t.Fatalf("warning events %+v, want InvalidAnnotation, once, counted", tl.WarningEvents)
	}
	var b bytes.Buffer
	if err := tl.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "! InvalidAnnotation ("); n != 1 || !strings.Contains(b.String(), "\nwarnings above: InvalidAnnotation\n") {
		t.Errorf("InvalidAnnotation told %d times, want once before the steps, and its reason at the end:\n%s", n, b.String())
	}
}

package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// fake is a policy module that answers what answer returns for its input.
type fake struct {
	name   string
	answer func(in abi.PolicyInput) (string, error)
	inputs []abi.PolicyInput
	raw    [][]byte
}

func (f *fake) Name() string { return f.name }
func (f *fake) Wants(c string) bool {
	return f.name == "pdb" && c == abi.ContextPodDisruptionBudgets || f.name == "whole" && c == abi.ContextSnapshot ||
		f.name == "down" && c == abi.ContextDisrupted
}
func (f *fake) Evaluate(_ context.Context, input []byte) ([]byte, error) {
	var in abi.PolicyInput
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	f.inputs, f.raw = append(f.inputs, in), append(f.raw, input)
	out, err := f.answer(in)
	return []byte(out), err
}

func testPlan() *abi.Plan {
	return &abi.Plan{ABI: 1, Actions: []abi.Action{
		{Verb: "create", Kind: "ControllerRevision", Namespace: "default", Name: "web-1"},
		{Verb: "delete", Kind: "Pod", Namespace: "default", Name: "web-2"},
		{Verb: "create", Kind: "Pod", Namespace: "default", Name: "web-3", Error: "already exists"},
		{Verb: "updateStatus", Kind: "StatefulSet", Namespace: "default", Name: "web"},
	}}
}

const snapshot = `{"abi":1,"now":"2026-11-26T10:00:00Z","statefulSet":{"metadata":{"name":"web"}}}`

// Every way an answer can break the contract refuses the whole answer: the policy holds nothing.
func TestCheckAnswerRefusesAnswersOutOfContract(t *testing.T) {
	p := testPlan()
	for _, c := range []struct{ name, answer, want string }{
		{"not JSON", `{"abi":1,`, "not a policy answer"},
		{"unknown member", `{"abi":1,"holds":[],"allow":true}`, "unknown field"},
		{"trailing data", `{"abi":1,"holds":[]} {}`, "after top-level value"},
		{"other abi", `{"abi":2,"holds":[]}`, "abi is 2"},
		{"error", `{"abi":1,"holds":[],"error":{"code":"X","message":"no PDB list"}}`, "could not decide: no PDB list"},
		{"issued already", `{"abi":1,"holds":[{"action":0,"reason":"R","message":"m"}]}`, "action 0 is not a write still to issue"},
		{"past the end", `{"abi":1,"holds":[{"action":4,"reason":"R","message":"m"}]}`, "action 4 is not a write still to issue"},
		{"status", `{"abi":1,"holds":[{"action":3,"reason":"R","message":"m"}]}`, "the status write"},
		{"planned to fail", `{"abi":1,"holds":[{"action":2,"reason":"R","message":"m"}]}`, "planned to fail"},
		{"twice", `{"abi":1,"holds":[{"action":1,"reason":"R","message":"m"},{"action":1,"reason":"R","message":"m"}]}`, "held twice"},
		{"reason", `{"abi":1,"holds":[{"action":1,"reason":"not camel","message":"m"}]}`, "UpperCamelCase"},
		{"no message", `{"abi":1,"holds":[{"action":1,"reason":"R","message":""}]}`, "message is empty"},
		{"line break", `{"abi":1,"holds":[{"action":1,"reason":"R","message":"a\nb"}]}`, "control character"},
		{"long message", `{"abi":1,"holds":[{"action":1,"reason":"R","message":"` + strings.Repeat("m", 1025) + `"}]}`, "longer than 1024"},
		{"negative retry", `{"abi":1,"holds":[{"action":1,"reason":"R","message":"m","retryAfterSeconds":-1}]}`, "retryAfterSeconds"},
		{"retry too long", `{"abi":1,"holds":[{"action":1,"reason":"R","message":"m","retryAfterSeconds":86401}]}`, "retryAfterSeconds"},
		{"spend issued already", `{"abi":1,"holds":[],"spends":[{"action":0,"podDisruptionBudget":"b"}]}`, "action 0 is not a write still to issue"},
		{"spend not a pod delete", `{"abi":1,"holds":[],"spends":[{"action":3,"podDisruptionBudget":"b"}]}`, "neither a pod delete nor an in-place update"},
		{"spend planned to fail", `{"abi":1,"holds":[],"spends":[{"action":2,"podDisruptionBudget":"b"}]}`, "planned to fail"},
		{"spend of a held write", `{"abi":1,"holds":[{"action":1,"reason":"R","message":"m"}],"spends":[{"action":1,"podDisruptionBudget":"b"}]}`, "a held delete spends nothing"},
		{"spend without a budget", `{"abi":1,"holds":[],"spends":[{"action":1,"podDisruptionBudget":""}]}`, "podDisruptionBudget is empty"},
		{"spend twice", `{"abi":1,"holds":[],"spends":[{"action":1,"podDisruptionBudget":"b"},{"action":1,"podDisruptionBudget":"b"}]}`, "twice"},
		{"spend unknown member", `{"abi":1,"holds":[],"spends":[{"action":1,"podDisruptionBudget":"b","count":2}]}`, "unknown field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CheckAnswer([]byte(c.answer), p, 1, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
	valid := `{"abi":1,"holds":[{"action":1,"reason":"PrimaryRole","message":"m","retryAfterSeconds":30}]}`
	if err := schemacheck.ValidatePolicyAnswer([]byte(valid)); err != nil {
		t.Fatal(err)
	}
	a, err := CheckAnswer([]byte(valid), p, 1, nil)
	if err != nil || len(a.Holds) != 1 || a.Holds[0].Action != 1 || a.Holds[0].RetryAfterSeconds != 30 {
		t.Fatalf("a valid answer: %+v, %v", a, err)
	}
	spends := `{"abi":1,"holds":[],"spends":[{"action":1,"podDisruptionBudget":"db"},{"action":1,"podDisruptionBudget":"quorum"}]}`
	if err := schemacheck.ValidatePolicyAnswer([]byte(spends)); err != nil {
		t.Fatal(err)
	}
	if a, err := CheckAnswer([]byte(spends), p, 1, nil); err != nil || len(a.Spends) != 2 || a.Spends[1].PodDisruptionBudget != "quorum" {
		t.Fatalf("a valid answer with spends: %+v, %v", a, err)
	}
}

// An answer is decoded by the rule plans are (strictjson.Object): each of these was once read leniently — a
// repeated member (the last won), a member matched regardless of case, null read as 0 or as absent, a
// required member left out — and each is now refused, as the schema refuses all but the repeated member.
func TestCheckAnswerDecodesAsPlansAre(t *testing.T) {
	p := testPlan()
	for _, c := range []struct{ name, answer, want string }{
		{"holds twice", `{"abi":1,"holds":[],"holds":[{"action":0,"reason":"R","message":"m"}]}`, `duplicate field "holds"`},
		{"member twice in a hold", `{"abi":1,"holds":[{"action":1,"action":0,"reason":"R","message":"m"}]}`, `duplicate field "action"`},
		{"HOLDS", `{"abi":1,"HOLDS":[{"action":0,"reason":"R","message":"m"}],"holds":[]}`, `unknown field "HOLDS"`},
		{"Action", `{"abi":1,"holds":[{"Action":0,"reason":"R","message":"m"}]}`, `unknown field "Action"`},
		{"action null", `{"abi":1,"holds":[{"action":null,"reason":"R","message":"m"}]}`, `holds[0]: member "action" is null`},
		{"spend action null", `{"abi":1,"holds":[],"spends":[{"action":null,"podDisruptionBudget":"b"}]}`, `spends[0]: member "action" is null`},
		{"retry null", `{"abi":1,"holds":[{"action":0,"reason":"R","message":"m","retryAfterSeconds":null}]}`, `member "retryAfterSeconds" is null`},
		{"holds null", `{"abi":1,"holds":null}`, `member "holds" is null`},
		{"error null", `{"abi":1,"holds":[],"error":null}`, `member "error" is null`},
		{"no holds", `{"abi":1}`, "answer.holds is missing"},
		{"no action", `{"abi":1,"holds":[{"reason":"R","message":"m"}]}`, "holds[0].action is missing"},
		{"a hold not an object", `{"abi":1,"holds":[0]}`, "holds[0]: is not a JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CheckAnswer([]byte(c.answer), p, 0, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if !strings.Contains(c.name, "twice") && schemacheck.ValidatePolicyAnswer([]byte(c.answer)) == nil {
				t.Fatalf("the schema accepts it: the host's decode and the schema disagree")
			}
		})
	}
}

// The first policy in the set's order that holds a write names the hold; a failing policy holds nothing
// and is reported, and the others still decide.
func TestJudgeOrderAndFailures(t *testing.T) {
	broken := &fake{name: "broken", answer: func(abi.PolicyInput) (string, error) { return "", errors.New("wasm trap") }}
	first := &fake{name: "first", answer: func(in abi.PolicyInput) (string, error) {
		return `{"abi":1,"holds":[{"action":1,"reason":"First","message":"one"}]}`, nil
	}}
	second := &fake{name: "second", answer: func(in abi.PolicyInput) (string, error) {
		return `{"abi":1,"holds":[{"action":1,"reason":"Second","message":"two","retryAfterSeconds":5}]}`, nil
	}}
	var failed []Failure
	var timed []string
	r := &Run{Policies: []Module{broken, first, second}, Snapshot: []byte(snapshot), Memory: &Memory{},
		Failed: func(f Failure) { failed = append(failed, f) },
		Timed:  func(p string, d time.Duration) { timed = append(timed, p) }}
	holds := r.Judge(context.Background(), testPlan(), 1)
	if !slices.Equal(timed, []string{"broken", "first", "second"}) {
		t.Fatalf("calls timed: %v, want each policy's", timed)
	}
	if h, ok := holds[1]; !ok || h.Policy != "first" || h.Reason != "First" || len(holds) != 1 {
		t.Fatalf("holds %+v: want action 1 held by first", holds)
	}
	if len(failed) != 1 || failed[0].Policy != "broken" || !strings.Contains(failed[0].Error(), "wasm trap") {
		t.Fatalf("failures %+v", failed)
	}
	in := second.inputs[0]
	if in.From != 1 || len(in.Plan.Actions) != 4 || !strings.Contains(string(in.Snapshot), `"now":"2026-11-26T10:00:00Z"`) {
		t.Fatalf("input %+v", in)
	}
}

// Each failure says why the policy failed, typed: the module's kind of failure, an answer the policy could not
// decide, an answer out of contract (the whole answer, or its spends), or an output too large to be an answer.
func TestFailureReasons(t *testing.T) {
	for _, c := range []struct {
		answer string
		err    error
		want   string
	}{
		{err: &wasm.Error{Kind: wasm.ErrTrap, Op: "evaluate", Msg: "module trapped: unreachable"}, want: FailTrap},
		{err: &wasm.Error{Kind: wasm.ErrTimeout, Op: "evaluate", Msg: "exceeded 100ms timeout"}, want: FailTimeout},
		{err: &wasm.Error{Kind: wasm.ErrOutOfMemory, Op: "evaluate", Msg: "module ran out of memory"}, want: FailOutOfMemory},
		{err: &wasm.Error{Kind: wasm.ErrBadModule, Op: "evaluate", Msg: "output of 1048576 bytes is over the limit"}, want: FailInvalidAnswer},
		{err: errors.New("something else"), want: FailOther},
		{err: fmt.Errorf("policy p %w 2 time(s) in a row", ErrSkipped), want: FailSkipped},
		{answer: `{"abi":1,"holds":[],"error":{"code":"PolicyFailed","message":"no window"}}`, want: FailUndecided},
		{answer: `{"abi":1,"holds":[{"action":3,"reason":"X","message":"m"}]}`, want: FailInvalidAnswer},
		{answer: `{"abi":1,"holds":[],"spends":[{"action":0,"podDisruptionBudget":"q"}]}`, want: FailInvalidAnswer},
		{answer: `not json`, want: FailInvalidAnswer},
	} {
		p := &fake{name: "p", answer: func(abi.PolicyInput) (string, error) { return c.answer, c.err }}
		var failed []Failure
		r := &Run{Policies: []Module{p}, Snapshot: []byte(snapshot), Failed: func(f Failure) { failed = append(failed, f) }}
		r.Judge(context.Background(), testPlan(), 1)
		if len(failed) != 1 || failed[0].Reason != c.want || failed[0].Policy != "p" {
			t.Errorf("answer %q, error %v: failures %+v, want one with reason %s", c.answer, c.err, failed, c.want)
		}
	}
	for _, r := range FailureReasons {
		if r == "" || strings.ToLower(r) != r {
			t.Errorf("reason %q is not a lower-case label value", r)
		}
	}
}

// Memory gives each policy the writes it held before, since when, and reports those it let go.
func TestMemoryTimesHolds(t *testing.T) {
	var m Memory
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	held := []hostplan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-2", Hold: hostplan.Hold{Policy: "handoff"}}}
	if rel := m.Record(t0, held, nil); len(rel) != 0 {
		t.Fatalf("released %v", rel)
	}
	if rel := m.Record(t0.Add(time.Minute), held, nil); len(rel) != 0 {
		t.Fatalf("released %v", rel)
	}
	if got := m.held("handoff"); len(got) != 1 || got[0].Since != "2026-11-26T10:00:00Z" || got[0].Name != "web-2" {
		t.Fatalf("held %+v: want web-2 since the first hold", got)
	}
	if got := m.held("pdb"); len(got) != 0 {
		t.Fatalf("another policy sees %+v", got)
	}
	if since, ok := m.Since("handoff", "delete", "Pod", "web-2"); !ok || !since.Equal(t0) {
		t.Fatalf("Since: %v %v, want the first hold's time", since, ok)
	}
	rel := m.Record(t0.Add(3*time.Minute), nil, nil)
	if len(rel) != 1 || rel[0].HeldFor != 3*time.Minute || rel[0].String() != "policy handoff no longer holds delete Pod web-2 (held 3m0s)" {
		t.Fatalf("released %+v", rel)
	}
	if got := m.held("handoff"); len(got) != 0 {
		t.Fatalf("still held %+v", got)
	}
}

// A write two policies hold is the first's, but each policy's own hold is remembered from when it began: when the
// first lets go, the second's input says it has held the write since the first sync, not since the release.
func TestEveryPolicysHoldIsRemembered(t *testing.T) {
	holding := map[string]bool{"first": true, "second": true}
	answer := func(name string) func(abi.PolicyInput) (string, error) {
		return func(abi.PolicyInput) (string, error) {
			if !holding[name] {
				return `{"abi":1,"holds":[]}`, nil
			}
			return `{"abi":1,"holds":[{"action":1,"reason":"R","message":"` + name + `"}]}`, nil
		}
	}
	first, second := &fake{name: "first", answer: answer("first")}, &fake{name: "second", answer: answer("second")}
	var mem Memory
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	sync := func(at time.Time) (map[int]hostplan.Hold, []abi.Event) {
		r := &Run{Policies: []Module{first, second}, Snapshot: []byte(snapshot), Memory: &mem}
		holds := r.Judge(context.Background(), testPlan(), 0)
		var held []hostplan.HeldWrite
		for i, h := range holds {
			a := testPlan().Actions[i]
			held = append(held, hostplan.HeldWrite{Verb: a.Verb, Kind: a.Kind, Name: a.Name, Hold: h})
		}
		return holds, Events(at, &mem, r.Held(held), nil, nil)
	}
	if holds, evs := sync(t0); holds[1].Policy != "first" || len(evs) != 0 {
		t.Fatalf("first sync: holds %+v, events %+v", holds, evs)
	}
	holding["first"] = false
	holds, evs := sync(t0.Add(time.Minute))
	if holds[1].Policy != "second" {
		t.Fatalf("second sync: holds %+v: want the write held by second", holds)
	}
	if len(evs) != 1 || !strings.Contains(evs[0].Message, "policy first no longer holds delete Pod web-2") {
		t.Fatalf("second sync's events %+v: want first's release", evs)
	}
	sync(t0.Add(2 * time.Minute))
	in := second.inputs[len(second.inputs)-1]
	if len(in.Context.Held) != 1 || in.Context.Held[0].Since != "2026-11-26T10:00:00Z" {
		t.Fatalf("second's held %+v: want web-2 since the first sync", in.Context.Held)
	}
	if got := (*Run)(nil).Held(nil); got != nil {
		t.Fatalf("a nil run adds %+v", got)
	}
}

func TestRetryAfterIsTheSoonest(t *testing.T) {
	held := []hostplan.HeldWrite{{Hold: hostplan.Hold{RetryAfter: 0}}, {Hold: hostplan.Hold{RetryAfter: time.Minute}}, {Hold: hostplan.Hold{RetryAfter: 20 * time.Second}}}
	if d := RetryAfter(held); d != 20*time.Second {
		t.Fatalf("RetryAfter %v", d)
	}
	if d := RetryAfter([]hostplan.HeldWrite{{Hold: hostplan.Hold{RetryAfter: time.Nanosecond}}}); d != MinRetryAfter {
		t.Fatalf("a nanosecond: %v, want %v", d, MinRetryAfter)
	}
	if d := RetryAfter(nil); d != 0 {
		t.Fatalf("RetryAfter of none %v", d)
	}
}

// The input the host writes is what the policy input schema describes, for a real snapshot and plan.
func TestInputMatchesTheSchema(t *testing.T) {
	base := filepath.Join("..", "..", "internal", "conformance", "cases", "pod-states", "parallel-steady-failed-web-1")
	snap, err := os.ReadFile(base + ".snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(base + ".plan.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := hostplan.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{name: "f", answer: func(abi.PolicyInput) (string, error) { return `{"abi":1,"holds":[]}`, nil }}
	var m Memory
	m.Record(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC), []hostplan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-1", Hold: hostplan.Hold{Policy: "f"}}}, nil)
	r := &Run{Policies: []Module{f}, Snapshot: snap, Memory: &m, Signals: map[string]json.RawMessage{"window": json.RawMessage(`true`)}}
	r.Judge(context.Background(), p, 0)
	if len(f.raw) != 1 {
		t.Fatalf("asked %d times", len(f.raw))
	}
	if err := schemacheck.ValidatePolicyInput(f.raw[0]); err != nil {
		t.Fatalf("the host's input breaks the schema: %v", err)
	}
	if in := f.inputs[0]; len(in.Context.Held) != 1 || in.Context.Held[0].Since != "2026-11-26T10:00:00Z" || string(in.Context.Signals["window"]) != "true" {
		t.Fatalf("context %+v", in.Context)
	}
}

// The budgets go only to a policy that asks for them in its describe.
func TestBudgetsGoToPoliciesThatAskForThem(t *testing.T) {
	answer := func(abi.PolicyInput) (string, error) { return `{"abi":1,"holds":[]}`, nil }
	asks, other := &fake{name: "pdb", answer: answer}, &fake{name: "window", answer: answer}
	r := &Run{Policies: []Module{asks, other}, Snapshot: []byte(snapshot),
		PodDisruptionBudgets: []json.RawMessage{json.RawMessage(`{"metadata":{"name":"db-pdb"}}`)}}
	r.Judge(context.Background(), testPlan(), 0)
	if len(asks.inputs[0].Context.PodDisruptionBudgets) != 1 || len(other.inputs[0].Context.PodDisruptionBudgets) != 0 {
		t.Fatalf("budgets given: %d to pdb, %d to window", len(asks.inputs[0].Context.PodDisruptionBudgets), len(other.inputs[0].Context.PodDisruptionBudgets))
	}
	if !Wants(r.Policies, abi.ContextPodDisruptionBudgets) || Wants([]Module{other}, abi.ContextPodDisruptionBudgets) {
		t.Fatal("Wants")
	}
}

// A policy is given the set and the objects the plan names, in plan order; one that asks for the snapshot
// gets it whole; a host's object lookup gives the same view without reading the snapshot's lists.
func TestPoliciesSeeWhatThePlanTouches(t *testing.T) {
	snap := `{"abi":1,"now":"2026-11-26T10:00:00Z","features":{"X":true},"statefulSet":{"metadata":{"name":"web"}},"eventActions":true,` +
		`"pods":[{"metadata":{"name":"web-0"}},{"metadata":{"name":"web-1"}},{"metadata":{"name":"web-2"}}],` +
		`"revisions":[{"metadata":{"name":"web-abc"}}],"claims":[{"metadata":{"name":"data-web-2"}}]}`
	p := &abi.Plan{ABI: 1, Actions: []abi.Action{{Verb: "delete", Kind: "Pod", Name: "web-2"}, {Verb: "create", Kind: "Pod", Name: "web-2"},
		{Verb: "delete", Kind: "Pod", Name: "web-0"}, {Verb: "create", Kind: "Pod", Name: "web-9"}}}
	answer := func(abi.PolicyInput) (string, error) { return `{"abi":1,"holds":[]}`, nil }
	view := `{"abi":1,"now":"2026-11-26T10:00:00Z","features":{"X":true},"statefulSet":{"metadata":{"name":"web"}},` +
		`"pods":[{"metadata":{"name":"web-2"}},{"metadata":{"name":"web-0"}}],"revisions":[],"claims":[]}`
	byName := map[string]json.RawMessage{"web-0": json.RawMessage(`{"metadata":{"name":"web-0"}}`), "web-2": json.RawMessage(`{"metadata":{"name":"web-2"}}`)}
	lookup := func(kind, name string) (json.RawMessage, bool) {
		raw, ok := byName[name]
		return raw, ok && kind == abi.KindPod
	}
	// the host's head: its members in the order it wrote them (a policy reads members by name)
	head := []byte(`{"abi":1,"now":"2026-11-26T10:00:00Z","statefulSet":{"metadata":{"name":"web"}},"features":{"X":true}`)
	headView := `{"abi":1,"now":"2026-11-26T10:00:00Z","statefulSet":{"metadata":{"name":"web"}},"features":{"X":true},` +
		`"pods":[{"metadata":{"name":"web-2"}},{"metadata":{"name":"web-0"}}],"revisions":[],"claims":[]}`
	for _, c := range []struct {
		name   string
		object func(string, string) (json.RawMessage, bool)
		head   []byte
		view   string
	}{{"read", nil, nil, view}, {"lookup", lookup, nil, view}, {"the host's parts", lookup, head, headView}} {
		part, whole := &fake{name: "part", answer: answer}, &fake{name: "whole", answer: answer}
		(&Run{Policies: []Module{part, whole}, Snapshot: []byte(snap), Object: c.object, Head: c.head}).Judge(context.Background(), p, 0)
		if got := string(part.inputs[0].Snapshot); got != c.view {
			t.Errorf("%s: the plan's view\n%s\nwant\n%s", c.name, got, c.view)
		}
		if got := string(whole.inputs[0].Snapshot); got != snap {
			t.Errorf("the whole snapshot: %s", got)
		}
	}
}

// A policy that asks for context "disrupted" is given the pods that are down and the replicas missing, from
// the host's pods (Run.Pods) or read out of the snapshot, the same; others are not.
func TestDisruptedGoesToPoliciesThatAskForIt(t *testing.T) {
	ready := `"status":{"conditions":[{"type":"Ready","status":"True"}]}`
	snap := `{"abi":1,"now":"2026-11-26T10:00:00Z","statefulSet":{"metadata":{"name":"web"},"spec":{"replicas":3}},` +
		`"pods":[{"metadata":{"name":"web-0"},` + ready + `},{"metadata":{"name":"web-2"},"status":{}}]}`
	p := &abi.Plan{ABI: 1, Actions: []abi.Action{{Verb: "delete", Kind: "Pod", Name: "web-0"}}}
	answer := func(abi.PolicyInput) (string, error) { return `{"abi":1,"holds":[]}`, nil }
	want := `{"pods":[{"metadata":{"name":"web-2"},"status":{}}],"missing":["web-1"]}`
	hostPods := func() Pods {
		return Pods{Names: []string{"web-0", "web-2"}, Down: []json.RawMessage{json.RawMessage(`{"metadata":{"name":"web-2"},"status":{}}`)}}
	}
	for _, pods := range []func() Pods{nil, hostPods} {
		down, other := &fake{name: "down", answer: answer}, &fake{name: "other", answer: answer}
		(&Run{Policies: []Module{down, other}, Snapshot: []byte(snap), Pods: pods}).Judge(context.Background(), p, 0)
		if got := gjson.GetBytes(down.raw[0], "context.disrupted").Raw; got != want {
			t.Errorf("host's pods %v: disrupted %s\nwant %s", pods != nil, got, want)
		}
		if gjson.GetBytes(other.raw[0], "context.disrupted").Exists() {
			t.Errorf("given to a policy that does not ask: %s", other.raw[0])
		}
		if err := schemacheck.ValidatePolicyInput(down.raw[0]); err != nil {
			t.Errorf("the input breaks the schema: %v", err)
		}
	}
}

// A plan with no write a policy may hold from from on is not shown to the policies: each answer could only
// hold nothing.
func TestPlansWithNothingToHoldAreNotShown(t *testing.T) {
	asked := &fake{name: "f", answer: func(abi.PolicyInput) (string, error) { return `{"abi":1,"holds":[]}`, nil }}
	r := &Run{Policies: []Module{asked}, Snapshot: []byte(snapshot)}
	p := testPlan() // 0 create, 1 delete, 2 planned to fail, 3 updateStatus
	for _, from := range []int{2, 3, 4} {
		if holds := r.Judge(context.Background(), p, from); len(holds) != 0 || len(asked.raw) != 0 {
			t.Fatalf("from %d: asked %d times, holds %v", from, len(asked.raw), holds)
		}
	}
	if r.Judge(context.Background(), p, 1); len(asked.raw) != 1 {
		t.Fatalf("from 1 (a delete to issue): asked %d times", len(asked.raw))
	}
}

func TestNames(t *testing.T) {
	for value, want := range map[string]string{"": "", " ": "", "pdb": "pdb", " pdb , window ": "pdb,window"} {
		got, err := Names(value)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("Names(%q) = %v, %v; want %q", value, got, err, want)
		}
	}
	for _, value := range []string{",,, ,", "pdb,,window", "pdb,pdb"} {
		if _, err := Names(value); err == nil {
			t.Errorf("Names(%q): no error", value)
		}
	}
}

// wanting is a policy that asks for the given context members and records its inputs.
type wanting struct {
	fake
	wants []string
}

func (w *wanting) Wants(c string) bool { return slices.Contains(w.wants, c) }

// The context a host writes (each member but held encoded once a sync) is json.Marshal(abi.PolicyContext)
// of what the policy asked for: members omitted when empty, in the struct's order.
func TestContextIsThePolicyContextEncoded(t *testing.T) {
	answer := func(abi.PolicyInput) (string, error) { return `{"abi":1,"holds":[]}`, nil }
	snap := `{"abi":1,"now":"2026-11-26T10:00:00Z","statefulSet":{"metadata":{"name":"web"},"spec":{"replicas":2}},"pods":[{"metadata":{"name":"web-0"},"status":{}}]}`
	since := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	signals := map[string]json.RawMessage{"b": json.RawMessage(`"x"`), "a": json.RawMessage(`true`)}
	budgets := []json.RawMessage{json.RawMessage(`{"metadata":{"name":"web"}}`)}
	nodes := []json.RawMessage{json.RawMessage(`{"metadata":{"name":"n1","labels":{"z":"a"}}}`)}
	disrupted := &abi.Disrupted{Pods: []json.RawMessage{json.RawMessage(`{"metadata":{"name":"web-0"},"status":{}}`)}, Missing: []string{"web-1"}}
	all := []string{abi.ContextPodDisruptionBudgets, abi.ContextNodes, abi.ContextDisrupted}
	for _, c := range []struct {
		name    string
		wants   []string
		held    bool
		signals map[string]json.RawMessage
		want    abi.PolicyContext
	}{
		{"nothing", nil, false, nil, abi.PolicyContext{}},
		{"signals only", nil, false, signals, abi.PolicyContext{Signals: signals}},
		{"everything", all, true, signals, abi.PolicyContext{Held: []abi.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-0", Since: "2026-11-26T09:00:00Z"}},
			Signals: signals, PodDisruptionBudgets: budgets, Nodes: nodes, Disrupted: disrupted}},
	} {
		p := &wanting{fake: fake{name: "p", answer: answer}, wants: c.wants}
		mem := &Memory{}
		if c.held {
			mem.Record(since, []hostplan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-0", Hold: hostplan.Hold{Policy: "p"}}}, nil)
		}
		r := &Run{Policies: []Module{p}, Snapshot: []byte(snap), Memory: mem, Signals: c.signals, PodDisruptionBudgets: budgets, Nodes: nodes}
		r.Judge(context.Background(), &abi.Plan{ABI: 1, Actions: []abi.Action{{Verb: "delete", Kind: "Pod", Name: "web-0"}}}, 0)
		want, err := json.Marshal(c.want)
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(p.raw[0], "context").Raw; got != string(want) {
			t.Errorf("%s: context\n%s\nwant\n%s", c.name, got, want)
		}
	}
}

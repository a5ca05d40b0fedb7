package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// A replay is a function of its scenario: every shipped scenario (testdata/scenarios, examples/) replayed
// twice prints the same text (-v) and the same JSON, byte for byte, plans included, and so does the demo's
// preview. Nothing in a timeline may come from the wall clock or the machine's speed.
func TestShippedScenariosAreDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("-short skips it: it replays every shipped scenario twice")
	}
	examples, _ := filepath.Glob("../../examples/*.yaml")
	if len(examples) == 0 {
		t.Fatal("no examples/*.yaml")
	}
	for _, f := range append(scenarioFiles(t), examples...) {
		if f == demoEdit {
			continue // the demo's edit, previewed below
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := LoadScenario(f)
			if err != nil {
				t.Fatal(err)
			}
			sameTwice(t, func() outputs { return timelineOutputs(t, sc, testOptions()) })
		})
	}
	t.Run("demo preview", func(t *testing.T) {
		base := settledScenario(t, filepath.Join(filepath.Dir(demoEdit), "rolling-update.yaml"), testOptions())
		edit, err := os.ReadFile(demoEdit)
		if err != nil {
			t.Fatal(err)
		}
		sameTwice(t, func() outputs { return previewOutputs(t, base, edit, testOptions()) })
	})
}

// demoEdit is the one examples/*.yaml that is an edit, not a scenario: `make demo` previews it on the world
// examples/rolling-update.yaml ends in.
const demoEdit = "../../examples/rolling-update-next.yaml"

// A policy that loops on every call times out by its work budget or by its timeout, whichever this machine
// reaches first, and its breaker then skips it for a while: the timeline says the same either way, and the
// breaker's pauses are virtual time (from the scenario's start, in 2020), so which syncs ask the policy
// follows the timeline. Its replays and its previews are the same, byte for byte.
func TestATimedOutPolicyReplaysTheSame(t *testing.T) {
	opts := loopingPolicyOptions(t)
	sc, err := ParseScenario([]byte(loopingPolicyScenario))
	if err != nil {
		t.Fatal(err)
	}
	first := sameTwice(t, func() outputs { return timelineOutputs(t, sc, opts) })
	text := string(first.text)
	if !strings.Contains(text, "policy evaluate exceeded its timeout or its work budget") {
		t.Fatalf("the policy never timed out:\n%s", text)
	}
	// asked again after 5s, 10s, 20s of the timeline's time: four timeouts in a row within its first minute
	for _, want := range []string{"not asked again until 2020-01-04T10:00:", "skipped after timing out 4 time(s) in a row"} {
		if !strings.Contains(text, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, text)
		}
	}
	base, err := Settled(sc, replayScenarioWith(t, sc, opts))
	if err != nil {
		t.Fatal(err)
	}
	sameTwice(t, func() outputs { return previewOutputs(t, base, []byte(loopingPolicySet("0.29")), opts) })
}

// loopingPolicyScenario's set names the test policy "bad" (host/wasm/testdata/baddirect), which loops on
// every call whose input holds "loop" (the set's annotation).
var loopingPolicyScenario = `name: policy-timeout
start: "2020-01-04T10:00:00Z"
manifests:
  - ` + loopingPolicySet("0.27") + `
events:
  - settled: true
    set: {"spec.template.spec.containers[0].image": registry.k8s.io/nginx-slim:0.28}
`

// loopingPolicySet is the set, at this image tag, on one line (YAML).
func loopingPolicySet(tag string) string {
	return `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: web, namespace: default, annotations: {ordinal.dev/policies: bad, bad.test/mode: loop}}, ` +
		`spec: {replicas: 3, serviceName: web, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, ` +
		`spec: {containers: [{name: nginx, image: "registry.k8s.io/nginx-slim:` + tag + `"}]}}}}`
}

// loopingPolicyOptions are testOptions with the policy "bad" of host/wasm/testdata/baddirect.wasm, under a
// small work budget (a loop ends in milliseconds) and the default timeout.
func loopingPolicyOptions(t *testing.T) Options {
	b, err := os.ReadFile("../wasm/testdata/baddirect.wasm")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := wasm.LoadPolicy(context.Background(), b, wasm.Config{WorkBudget: 1 << 24})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bad.Close(context.Background()) })
	opts := testOptions()
	opts.NamedPolicy = func(ctx context.Context, name string) (policy.Module, error) {
		if name == "bad" {
			return bad, nil
		}
		return namedTestPolicy(ctx, name)
	}
	return opts
}

// outputs are what `ordinal replay -v` or `ordinal preview` prints, as text and as JSON.
type outputs struct{ text, json []byte }

// sameTwice runs out twice and fails unless both runs print the same bytes; it returns the first.
func sameTwice(t *testing.T, out func() outputs) outputs {
	t.Helper()
	a, b := out(), out()
	if !bytes.Equal(a.text, b.text) {
		t.Errorf("two runs print different text:\n%s", lineDiff(string(a.text), string(b.text)))
	}
	if !bytes.Equal(a.json, b.json) {
		t.Errorf("two runs print different JSON:\n%s", lineDiff(string(a.json), string(b.json)))
	}
	return a
}

func timelineOutputs(t *testing.T, sc *Scenario, opts Options) outputs {
	t.Helper()
	tl := replayScenarioWith(t, sc, opts)
	var out outputs
	var text, js bytes.Buffer
	if err := tl.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	if err := tl.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	out.text, out.json = text.Bytes(), js.Bytes()
	return out
}

func previewOutputs(t *testing.T, base *Scenario, edit []byte, opts Options) outputs {
	t.Helper()
	if js, err := yamlToJSON(edit); err == nil {
		edit = js
	}
	p, err := PreviewEdit(context.Background(), base, edit, opts)
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	return outputs{text.Bytes(), js.Bytes()}
}

func replayScenarioWith(t *testing.T, sc *Scenario, opts Options) *Timeline {
	t.Helper()
	tl, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// settledScenario is the world the scenario at path settles in, as `ordinal preview --scenario` starts from.
func settledScenario(t *testing.T, path string, opts Options) *Scenario {
	t.Helper()
	sc, err := LoadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	base, err := Settled(sc, replayScenarioWith(t, sc, opts))
	if err != nil {
		t.Fatal(err)
	}
	return base
}

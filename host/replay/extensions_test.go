package replay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// A set annotated for reserve-ordinals on a module without the extension (the faithful one) is upstream's:
// its pods are web-0..3 and the replay's outcome counts those, not the ordinals the annotation would leave;
// on the extended module the same set runs web-0, web-2..4, and that is complete too.
func TestReservedOrdinalsOutcomeFollowsTheModule(t *testing.T) {
	b, err := os.ReadFile("../../testdata/scenarios/reserve-ordinals.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, module := range []string{"", "extended"} {
		y := strings.Replace(string(b), `annotations:
        ordinal.dev/module: extended`, `annotations:
        ordinal.dev/reserve-ordinals: "1"`, 1)
		if module != "" {
			y = strings.Replace(y, `ordinal.dev/reserve-ordinals: "1"`, `ordinal.dev/reserve-ordinals: "1"
        ordinal.dev/module: extended`, 1)
		}
		y = y[:strings.Index(y, "events:")]
		sc, err := ParseScenario([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		tl, err := Run(context.Background(), sc, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		if tl.Outcome.Result != "complete" {
			t.Errorf("module %q: outcome %s: %s", module, tl.Outcome.Result, tl.Outcome.Summary)
		}
		created := map[string]bool{}
		for _, st := range tl.Steps {
			for _, a := range st.Actions {
				if a.Kind == world.KindPod && a.Verb == "create" {
					created[a.Name] = true
				}
			}
		}
		if want := module == ""; created["web-1"] != want || created["web-4"] == want {
			t.Errorf("module %q: created %v", module, created)
		}
	}
}

// recreateSet: a manifest that is not a StatefulSet is refused when the scenario loads; one the API server
// would refuse as a create, or of another namespace, stops the replay as an invalid world before anything
// is orphaned.
func TestRecreateSetRefusals(t *testing.T) {
	const base = `name: r
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default}
    spec:
      replicas: 1
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: x}]}
events:
  - after: 1s
    recreateSet: `
	const spec = `spec: {replicas: 1, serviceName: web, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}}`
	for _, c := range []struct{ name, event, load, run string }{
		{"a string", `"web"`, "want a StatefulSet manifest", ""},
		{"a Pod", `{apiVersion: v1, kind: Pod, metadata: {name: web}}`, "want a StatefulSet manifest", ""},
		{"another API", `{apiVersion: apps/v2, kind: StatefulSet, metadata: {name: web}, ` + spec + `}`, "want apps/v1", ""},
		{"no name", `{kind: StatefulSet, ` + spec + `}`, "metadata.name", ""},
		{"another name", `{kind: StatefulSet, metadata: {name: db}, ` + spec + `}`, "", `names StatefulSet "db", not "web"`},
		{"another namespace", `{kind: StatefulSet, metadata: {name: web, namespace: prod}, ` + spec + `}`, "", `namespace "prod"`},
		{"an invalid spec", `{kind: StatefulSet, metadata: {name: web}, spec: {replicas: -1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}}}`, "", "spec.replicas"},
	} {
		sc, err := ParseScenario([]byte(base + c.event + "\n"))
		if c.load != "" {
			if err == nil || !strings.Contains(err.Error(), c.load) {
				t.Errorf("%s: loading: %v, want %q", c.name, err, c.load)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err = Run(context.Background(), sc, testOptions())
		var iw *InvalidWorldError
		if !errors.As(err, &iw) || !strings.Contains(err.Error(), c.run) {
			t.Errorf("%s: %v, want an invalid world saying %q", c.name, err, c.run)
		}
	}
}

// Regression (issue 32, finding 1): a module the set names whose gate outlasted the caller's wait (a
// webhook review's budget) is still being checked, not an invalid world: the webhook says so, and the
// next preview gets the module.
func TestCallersDeadlineIsNeverAnInvalidWorld(t *testing.T) {
	sc, err := ParseScenario([]byte(`name: r
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default, annotations: {ordinal.dev/module: copy}}
    spec: {replicas: 1, serviceName: web, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.NamedModule = func(_ context.Context, name string) (hostplan.Reconciler, error) {
		return nil, fmt.Errorf("module %q is %w", name, wasm.ErrStillChecking)
	}
	_, err = Run(context.Background(), sc, opts)
	var iw *InvalidWorldError
	if !errors.Is(err, wasm.ErrStillChecking) || errors.As(err, &iw) {
		t.Fatalf("a module still being checked: %v, want that error and no invalid world", err)
	}
}

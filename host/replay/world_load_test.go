package replay

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// A world from manifests says what the manifests say: a given uid, generation, resourceVersion and
// creationTimestamp are kept, a Pending claim stays Pending; only what is left out is made up (a claim
// without a status existed before the start, so it is Bound).
func TestManifestWorldKeepsWhatManifestsSay(t *testing.T) {
	sc, err := ParseScenario([]byte(`
name: given
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: prod, uid: 0b5e1c1e-0000-4000-8000-000000000001, generation: 4, resourceVersion: "8812", creationTimestamp: "2026-01-02T03:04:05Z"}
    spec:
      replicas: 1
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: nginx:1.27}]}
    status: {observedGeneration: 4, replicas: 0}
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: waiting}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
    status: {phase: Pending}
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: existing}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := initialWorld(t, sc)
	set := e.api.Get(world.KindSet, "web")
	for path, want := range map[string]string{
		"metadata.uid": "0b5e1c1e-0000-4000-8000-000000000001", "metadata.resourceVersion": "8812",
		"metadata.creationTimestamp": "2026-01-02T03:04:05Z",
	} {
		if got := jsonobj.GetStr(set, path); got != want {
			t.Errorf("set %s = %q, want %q", path, got, want)
		}
	}
	if g, _ := jsonobj.GetInt(set, "metadata.generation"); g != 4 {
		t.Errorf("set generation %d, want 4", g)
	}
	if got := jsonobj.GetStr(e.api.Get(world.KindClaim, "waiting"), "status.phase"); got != "Pending" {
		t.Errorf("claim with status Pending is %q", got)
	}
	if got := jsonobj.GetStr(e.api.Get(world.KindClaim, "existing"), "status.phase"); got != "Bound" {
		t.Errorf("claim without status is %q, want Bound", got)
	}
	// And a set that gives none of them still gets them.
	sc.Manifests = sc.Manifests[:1]
	m, _ := jsonobj.DecodeObj(sc.Manifests[0])
	md := jsonobj.GetObj(m, "metadata")
	for _, k := range []string{"uid", "generation", "resourceVersion", "creationTimestamp"} {
		delete(md, k)
	}
	sc.Manifests[0] = []byte(mustJSON(m))
	set = initialWorld(t, sc).api.Get(world.KindSet, "web")
	if jsonobj.GetStr(set, "metadata.uid") == "" || jsonobj.GetStr(set, "metadata.resourceVersion") != "1000" || jsonobj.GetStr(set, "metadata.creationTimestamp") == "" {
		t.Errorf("made-up metadata missing: %v", jsonobj.GetObj(set, "metadata"))
	}
	if g, _ := jsonobj.GetInt(set, "metadata.generation"); g != 1 {
		t.Errorf("made-up generation %d, want 1", g)
	}
}

// initialWorld is an engine holding the scenario's initial world, as Run builds it before the first sync.
// snapshotScenario is the scenario of the snapshot file at path.
func snapshotScenario(t *testing.T, path string) *Scenario {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ScenarioFromSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func initialWorld(t *testing.T, sc *Scenario) *engine {
	t.Helper()
	e := &engine{sc: sc, start: sc.start()}
	e.clock = world.NewClock(e.start)
	if err := e.initWorld(); err != nil {
		t.Fatal(err)
	}
	return e
}

// A snapshot whose set the API server could not hold is no world to replay: an invalid world, with the
// API server's message; the same snapshot with a valid name replays.
func TestSnapshotWorldIsValidated(t *testing.T) {
	b, err := os.ReadFile("../../examples/ci/web.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	valid, err := ScenarioFromSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if tl, err := Run(t.Context(), valid, testOptions()); err != nil || tl.Outcome.Result != "complete" {
		t.Fatalf("replay of the snapshot: %v", err)
	}
	o, err := jsonobj.DecodeObj(b)
	if err != nil {
		t.Fatal(err)
	}
	jsonobj.Set(o, "statefulSet.metadata.name", "Web_1")
	sc, err := ScenarioFromSnapshot(mustJSON(o))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), sc, testOptions())
	var iw *InvalidWorldError
	if !errors.As(err, &iw) || !strings.Contains(err.Error(), `metadata.name: Invalid value: "Web_1"`) {
		t.Fatalf("replay of a set named Web_1: %v", err)
	}
}

// A set whose name makes its revision label longer than 63 bytes is accepted, and every pod it asks for is
// refused with the API server's message; the replay calls that stuck, not a limit reached.
func TestPodsTheAPIServerRefuses(t *testing.T) {
	name := strings.Repeat("a", 55)
	sc, err := ParseScenario([]byte(`
name: long
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: ` + name + `, namespace: default}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: nginx}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(t.Context(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := `create Pod ` + name + `-0: Invalid: Pod "` + name + `-0" is invalid: metadata.labels: Invalid value: "` + name + `-`
	if tl.Outcome.Result != "stuck" || !strings.Contains(tl.Outcome.Summary, want) || !strings.Contains(tl.Outcome.Summary, "must be no more than 63 bytes") {
		t.Errorf("outcome %s: %s", tl.Outcome.Result, tl.Outcome.Summary)
	}
}

// A world loaded with objects of the replay's own uids goes on above the highest of them, read as the
// decimal number it is: zero-padded, "000000001027" once read as octal (535), and "000000000999" not at all,
// so pods created during a preview got uids the world's own pods had.
func TestLoadedWorldGivesNewUIDsAboveItsOwn(t *testing.T) {
	sc, err := ParseScenario([]byte(`
name: given-uids
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: prod, uid: 00000000-0000-4000-8000-000000000999}
    spec:
      replicas: 1
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: nginx:1.27}]}
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: data, uid: 00000000-0000-4000-8000-000000001027}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := initialWorld(t, sc)
	// The next object created, as the module's writes create them.
	next := Obj{"metadata": Obj{"name": "next"}, "spec": Obj{"accessModes": []any{"ReadWriteOnce"},
		"resources": Obj{"requests": Obj{"storage": "1Gi"}}}}
	if err := e.api.Create(world.KindClaim, next); err != nil {
		t.Fatal(err)
	}
	if got, want := jsonobj.GetStr(e.api.Get(world.KindClaim, "next"), "metadata.uid"), world.SimUIDPrefix+"000000001028"; got != want {
		t.Errorf("the next uid is %s, want %s", got, want)
	}
}

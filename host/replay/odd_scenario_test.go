package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A scenario of odd text (keys with dots and quotes, unicode and escapes, U+2028, NUL in a string, numbers
// written as floats) whose set is edited, applied and recreated: every snapshot's layout compact equals
// json.Compact and the set's kept bytes are the snapshot's (verifyEncodedObjects checks both as it runs),
// and a replay gives the same timeline twice.
func TestOddScenarioReplays(t *testing.T) {
	p := filepath.Join(t.TempDir(), "odd.yaml")
	if err := os.WriteFile(p, []byte(oddScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	var texts [2]bytes.Buffer
	var final []byte
	for i := range texts {
		tl := replayFile(t, p, "")
		if err := tl.WriteText(&texts[i], false); err != nil {
			t.Fatal(err)
		}
		final = tl.Final
	}
	// and a preview from the final world, indented and with a duplicate key (the last one is the set's), of an
	// edit of odd text
	var indented bytes.Buffer
	if err := json.Indent(&indented, final, " ", "\t "); err != nil {
		t.Fatal(err)
	}
	odd := bytes.Replace(indented.Bytes(), []byte(`"statefulSet": {`), []byte(`"statefulSet": {"spec": {"replicas": 9},`), 1)
	if bytes.Equal(odd, indented.Bytes()) {
		t.Fatal("no set in the final world")
	}
	world, err := ScenarioFromSnapshot(odd)
	if err != nil {
		t.Fatal(err)
	}
	edit := `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"default",` +
		`"annotations":{"\u00e9":"\u2028\u0000 \"x\""}},"spec":{"replicas":3,"serviceName":"web",` +
		`"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"},` +
		`"annotations":{"k":"\ud83d\ude00  \t"}},"spec":{"containers":[{"name":"web","image":"nginx:3"}]}}}}`
	pv, err := PreviewEdit(context.Background(), world, []byte(edit), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := pv.WriteText(&out); err != nil || !strings.Contains(out.String(), "outcome: complete") {
		t.Fatalf("preview (%v):\n%.2000s", err, out.String())
	}
	if !bytes.Equal(texts[0].Bytes(), texts[1].Bytes()) {
		t.Fatal("two replays differ")
	}
	if !bytes.Contains(texts[0].Bytes(), []byte("== complete")) {
		t.Fatalf("the replay did not complete:\n%.2000s", texts[0].String())
	}
}

const oddScenario = `name: odd
description: "odd keys, unicode, escapes and numbers; a set edited and applied mid-scenario"
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: web
      namespace: default
      labels: {"a.b/c": "v"}
      annotations: {"a.b/c": "ü\u2028<>&", "q": "x\\y\"", "\u00e9t\u00e9": "\U0001F600", "e": "\t\n", "z": ""}
    spec:
      replicas: 3
      serviceName: web
      selector:
        matchLabels: {app: web}
      template:
        metadata:
          labels: {app: web}
          annotations: {big: "12345678901234567890123", "x y": " spaced  "}
        spec:
          terminationGracePeriodSeconds: 1.0e1
          containers:
            - name: web
              image: nginx
              args: ["--a=1", "{\"j\": [1, 2]}", "\u0000x"]
              env: [{name: "N", value: "0x10"}]
              resources: {limits: {cpu: 100m, memory: 1.5Gi}}
events:
  - settled: true
    after: 10s
    set:
      "spec.template.metadata.annotations['x y']": "  more  spaces \u00a0 "
      'metadata.annotations["a.b/c"]': "\u2029"
  - settled: true
    after: 10s
    set:
      "spec.replicas": 5
      "metadata.annotations.e": null
  - settled: true
    after: 5s
    apply:
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: web, namespace: default, annotations: {"k": "\u00ff"}}
      spec:
        replicas: 2
        serviceName: web
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: web, image: "nginx:2"}]}
  - settled: true
    after: 5s
    recreateSet:
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: web, namespace: default}
      spec:
        replicas: 1
        serviceName: web
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: web, image: "nginx"}]}
`

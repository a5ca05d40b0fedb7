package replay

import (
	"bytes"
	"os"
	"path/filepath"
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
	for i := range texts {
		tl := replayFile(t, p, "")
		if err := tl.WriteText(&texts[i], false); err != nil {
			t.Fatal(err)
		}
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

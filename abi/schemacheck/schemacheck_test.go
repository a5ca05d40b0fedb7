package schemacheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/schemacheck"
)

const minimalSnapshot = `{"abi":1,"now":"2026-05-01T12:00:00Z",
 "statefulSet":{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"default","uid":"u1"},"spec":{"replicas":1}},
 "pods":[],"revisions":null,"features":{"MaxUnavailableStatefulSet":false}}`

func TestSnapshotSchema(t *testing.T) {
	if err := schemacheck.ValidateSnapshot([]byte(minimalSnapshot)); err != nil {
		t.Fatalf("minimal snapshot rejected: %v", err)
	}
	bad := map[string]string{
		"no abi":         `{"now":"2026-05-01T12:00:00Z","statefulSet":{"metadata":{}}}`,
		"abi 2":          `{"abi":2,"now":"2026-05-01T12:00:00Z","statefulSet":{"metadata":{}}}`,
		"no now":         `{"abi":1,"statefulSet":{"metadata":{}}}`,
		"no statefulSet": `{"abi":1,"now":"2026-05-01T12:00:00Z"}`,
		"pods not array": `{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":{"metadata":{}},"pods":{}}`,
		"gate not bool":  `{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":{"metadata":{}},"features":{"MaxUnavailableStatefulSet":"yes"}}`,
		"truncated":      minimalSnapshot[:40],
	}
	for name, doc := range bad {
		if err := schemacheck.ValidateSnapshot([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestConformanceSnapshotsValidate checks the snapshot schema against every
// snapshot the conformance generator wrote (and the examples), and the plan
// schema against every expected plan.
func TestConformanceSnapshotsValidate(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../internal/conformance/cases/*/*.json", "../../testdata/golden/*.json", "../../examples/*.json"} {
		found, _ := filepath.Glob(pattern)
		if len(found) == 0 {
			t.Fatalf("no files match %s", pattern)
		}
		files = append(files, found...)
	}
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(f, ".snapshot.json"):
			err = schemacheck.ValidateSnapshot(doc)
		case strings.HasSuffix(f, ".plan.json"):
			err = schemacheck.ValidatePlan(doc)
		default:
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestPlanSchema(t *testing.T) {
	good := []string{
		`{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[]}`,
		`{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"error":{"code":"InvalidJSON","message":"unexpected end of input","path":""}}`,
		`{"abi":1,"actions":[
			{"verb":"create","kind":"Pod","namespace":"default","name":"web-0","object":{"metadata":{"name":"web-0"}}},
			{"verb":"create","kind":"Pod","namespace":"default","name":"web-1","object":{},"error":"pods \"web-1\" already exists"},
			{"verb":"patch","kind":"Pod","namespace":"default","name":"web-2","patchType":"application/strategic-merge-patch+json","patch":{"metadata":{}}},
			{"verb":"delete","kind":"Pod","namespace":"default","name":"web-3"},
			{"verb":"updateStatus","kind":"StatefulSet","namespace":"default","name":"web","object":{"status":{"replicas":1}}}],
		 "requeueAfterSeconds":10.5,"events":[{"type":"Warning","reason":"FailedCreate","message":"x"}],
		 "error":{"code":"SyncFailed","message":"boom"}}`,
	}
	for i, doc := range good {
		if err := schemacheck.ValidatePlan([]byte(doc)); err != nil {
			t.Errorf("good plan %d rejected: %v", i, err)
		}
	}
	bad := map[string]string{
		"missing events":      `{"abi":1,"actions":[],"requeueAfterSeconds":0}`,
		"unknown code":        `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"error":{"code":"Oops","message":"x"}}`,
		"unknown verb":        `{"abi":1,"actions":[{"verb":"get","kind":"Pod","namespace":"d","name":"p"}],"requeueAfterSeconds":0,"events":[]}`,
		"create w/o object":   `{"abi":1,"actions":[{"verb":"create","kind":"Pod","namespace":"d","name":"p"}],"requeueAfterSeconds":0,"events":[]}`,
		"patch w/o patchType": `{"abi":1,"actions":[{"verb":"patch","kind":"Pod","namespace":"d","name":"p","patch":{}}],"requeueAfterSeconds":0,"events":[]}`,
		"delete with object":  `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"d","name":"p","object":{}}],"requeueAfterSeconds":0,"events":[]}`,
		"status of a pod":     `{"abi":1,"actions":[{"verb":"updateStatus","kind":"Pod","namespace":"d","name":"p","object":{"status":{}}}],"requeueAfterSeconds":0,"events":[]}`,
		"extra field":         `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"extra":1}`,
		"event type":          `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[{"type":"Info","reason":"r","message":"m"}]}`,
	}
	for name, doc := range bad {
		if err := schemacheck.ValidatePlan([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDescribeSchema(t *testing.T) {
	good := `{"abi":1,"module":"ordinal","moduleVersion":"0.1.0","kubernetesVersion":"v1.37.1",
	  "features":{"MaxUnavailableStatefulSet":true,"StatefulSetRecreateStrategy":false}}`
	if err := schemacheck.ValidateDescribe([]byte(good)); err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.ValidateDescribe([]byte(`{"abi":1,"module":"ordinal"}`)); err == nil {
		t.Error("incomplete describe accepted")
	}
}

// TestTypesRoundTrip checks the Go types carry every field of a full plan.
func TestTypesRoundTrip(t *testing.T) {
	in := `{"abi":1,"actions":[{"verb":"patch","kind":"Pod","namespace":"default","name":"web-2","patchType":"application/strategic-merge-patch+json","patch":{"metadata":{"ownerReferences":[]}},"error":"conflict"}],"requeueAfterSeconds":2.5,"events":[{"type":"Normal","reason":"R","message":"M"}],"error":{"code":"SyncFailed","message":"boom","path":"pods[0]"}}`
	var p abi.Plan
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip changed the plan:\n in  %s\n out %s", in, out)
	}
	if err := schemacheck.ValidatePlan(out); err != nil {
		t.Error(err)
	}
	if got := p.Error.Error(); got != "SyncFailed at pods[0]: boom" {
		t.Errorf("Error() = %q", got)
	}
}

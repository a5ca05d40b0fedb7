package statefulset

import (
	"encoding/json"
	"strings"
	"testing"
)

const crdAPIVersion = "ordinal.dev/v1"

// rekind rewrites, everywhere in a decoded JSON value, an object that names apps/v1 StatefulSet (a
// set's type meta, an ownerReference) to name the custom resource instead. Patches inside a plan are
// JSON objects, so their ownerReferences are reached too.
func rekind(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x["kind"] == kindStatefulSet && x["apiVersion"] == appsV1 {
			x["apiVersion"] = crdAPIVersion
		}
		for k, e := range x {
			x[k] = rekind(e)
		}
	case []any:
		for i, e := range x {
			x[i] = rekind(e)
		}
	}
	return v
}

func rekindJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(rekind(v))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOwnerKindFollowsTheSet runs every conformance case with the set (and every reference to an
// apps/v1 StatefulSet) renamed to a custom resource with apps/v1's spec and status: the plan must be
// upstream's with the same renaming and nothing else: the same writes in the same order, the same
// revision names, the owner references naming the custom resource. This is the host's CRD mode.
func TestOwnerKindFollowsTheSet(t *testing.T) {
	snaps := conformanceSnapshots(t)
	renamed := 0
	for _, c := range snaps {
		name, in := c.name, c.in
		crdIn := rekindJSON(t, in)
		if !strings.Contains(string(crdIn), crdAPIVersion) {
			continue // a snapshot without a set's type meta (the module's defaults apply)
		}
		renamed++
		want := rekindJSON(t, Reconcile(in))
		got := Reconcile(crdIn)
		if d := diffJSON(want, got); d != "" {
			t.Errorf("%s: as %s the plan differs from upstream's beyond the owner's apiVersion:\n%s", name, crdAPIVersion, d)
		}
		if strings.Contains(string(got), `"apiVersion":"apps/v1","kind":"StatefulSet"`) {
			t.Errorf("%s: the plan still names apps/v1 StatefulSet as an owner", name)
		}
	}
	if renamed < len(snaps)/2 {
		t.Fatalf("only %d of %d cases carry the set's apiVersion: the test would prove little", renamed, len(snaps))
	}
}

// TestSetTypeMeta: the set's apiVersion must be group/version and its kind StatefulSet; an apps set
// read at an older version still owns as apps/v1 (upstream's controllerKind).
func TestSetTypeMeta(t *testing.T) {
	base := `{"abi":1,"now":"2026-01-01T00:00:00Z","statefulSet":{%s"metadata":{"name":"web","namespace":"ns","uid":"u1"},` +
		`"spec":{"replicas":1,"selector":{"matchLabels":{"a":"b"}},"serviceName":"web","podManagementPolicy":"OrderedReady",` +
		`"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}},"revisionHistoryLimit":10,` +
		`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{"replicas":0}},` +
		`"pods":[],"revisions":[],"claims":[]}`
	for _, tc := range []struct {
		typeMeta, wantOwner, wantErr string
	}{
		{``, `"apiVersion":"apps/v1","kind":"StatefulSet"`, ""},
		{`"apiVersion":"apps/v1beta2","kind":"StatefulSet",`, `"apiVersion":"apps/v1","kind":"StatefulSet"`, ""},
		{`"apiVersion":"ordinal.dev/v1","kind":"StatefulSet",`, `"apiVersion":"ordinal.dev/v1","kind":"StatefulSet"`, ""},
		{`"apiVersion":"v1","kind":"StatefulSet",`, "", `statefulSet.apiVersion`},
		{`"apiVersion":"a/b/c",`, "", `statefulSet.apiVersion`},
		{`"apiVersion":"ordinal.dev/v1","kind":"Deployment",`, "", `statefulSet.kind`},
	} {
		out := string(Reconcile([]byte(strings.Replace(base, "%s", tc.typeMeta, 1))))
		if tc.wantErr != "" {
			if !strings.Contains(out, `"error"`) || !strings.Contains(out, tc.wantErr) {
				t.Errorf("%q: want an error at %s, got %.300s", tc.typeMeta, tc.wantErr, out)
			}
			continue
		}
		if !strings.Contains(out, tc.wantOwner) || strings.Contains(out, `"error"`) {
			t.Errorf("%q: want a pod owned by %s, got %.400s", tc.typeMeta, tc.wantOwner, out)
		}
	}
}

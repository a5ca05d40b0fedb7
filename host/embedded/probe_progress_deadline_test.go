package embedded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// Probes of extension progress-deadline (branch probe-deadline) with the embedded modules.

func probeLoad(t *testing.T, b []byte) *wasm.Module {
	t.Helper()
	m, err := wasm.Load(context.Background(), b, wasm.Config{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

func probeCase(t *testing.T, dir, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "conformance", "cases", dir, name+".snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// docs/extensions.md: a set without the extensions' annotations gets upstream's plan from the
// extended module, byte for byte. A set whose status carries conditions named Available and Progressing
// written by someone else (a tool that mimics Deployment's conditions, an earlier controller) does not.
func TestProbeExtendedIsFaithfulWithForeignConditions(t *testing.T) {
	ctx := context.Background()
	faithful, extended := probeLoad(t, embedded.Module()), probeLoad(t, embedded.ExtendedModule())
	v := probeCase(t, "status", "ordered-consistent-rollingupdate")
	v["statefulSet"].(map[string]any)["status"].(map[string]any)["conditions"] = []any{
		map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "by another tool", "lastTransitionTime": "2026-11-22T10:00:00Z"},
		map[string]any{"type": "Progressing", "status": "True", "reason": "RolloutComplete", "message": "by another tool", "lastTransitionTime": "2026-11-22T10:00:00Z"},
	}
	snap, _ := json.Marshal(v)
	want, err1 := faithful.Reconcile(ctx, snap)
	got, err2 := extended.Reconcile(ctx, snap)
	if err1 != nil || err2 != nil || !bytes.Equal(want, got) {
		t.Errorf("the extended module's plan differs from the faithful module's (%v, %v):\n faithful %.400s\n extended %.400s", err1, err2, want, got)
	}
}

// The module and the firewall must agree on the rollback: a plan the module makes that the firewall refuses
// is refused whole, every sync, so the set gets no status and no pod write until someone removes the
// annotation. The current revision's data with a repeated key (a ControllerRevision written by hand: the
// API server stores a RawExtension's bytes as given) is read by the module (last key wins) and refused by
// the firewall (checkKeys).
func TestProbeRollbackOfARevisionWithADuplicateKeyWedgesTheSet(t *testing.T) {
	ctx := context.Background()
	extended := probeLoad(t, embedded.ExtendedModule())
	v := probeCase(t, "rolling-update", "ordered-p0-mu-unset")
	md := v["statefulSet"].(map[string]any)["metadata"].(map[string]any)
	md["annotations"] = map[string]any{abi.AnnotationProgressDeadlineSeconds: "30", abi.AnnotationOnProgressDeadline: "Rollback"}
	// the first sync: the rollout to the new revision starts
	first, err := extended.Reconcile(ctx, mustMarshal(t, v))
	if err != nil {
		t.Fatal(err)
	}
	var p abi.Plan
	if err := json.Unmarshal(first, &p); err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	for _, a := range p.Actions {
		if a.Verb == abi.VerbUpdateStatus {
			var o struct{ Status map[string]any }
			_ = json.Unmarshal(a.Object, &o)
			st = o.Status
		}
	}
	if st == nil {
		t.Fatal("no status in the first sync")
	}
	bad := st["updateRevision"].(string)
	st["conditions"] = []any{map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
		"message": `StatefulSet "web" has timed out progressing to revision ` + bad + ".", "lastTransitionTime": "2026-11-22T10:00:00Z"}}
	v["statefulSet"].(map[string]any)["status"] = st
	snap := mustMarshal(t, v)
	// control: with the revision as the controller wrote it, the rollback passes the firewall
	check := func(snap []byte) (string, error) {
		plan, err := extended.Reconcile(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		var p abi.Plan
		if err := json.Unmarshal(plan, &p); err != nil {
			t.Fatal(err)
		}
		scope, err := firewall.ScopeFromSnapshot(snap)
		if err != nil {
			t.Fatal(err)
		}
		verbs := []string{}
		for _, a := range p.Actions {
			verbs = append(verbs, a.Verb+" "+a.Kind)
		}
		return strings.Join(verbs, ", "), firewall.Check(scope, &p)
	}
	if verbs, err := check(snap); err != nil || !strings.Contains(verbs, "patch StatefulSet") {
		t.Fatalf("control: %s: %v", verbs, err)
	}
	dup := bytes.Replace(snap, []byte(`"$patch":"replace"`), []byte(`"$patch":"replace","$patch":"replace"`), 1)
	if bytes.Equal(dup, snap) {
		t.Fatal("no $patch in the snapshot")
	}
	verbs, err := check(dup)
	if err != nil {
		t.Errorf("the module planned [%s] and the firewall refused the whole plan: %v", verbs, err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

package firewall_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// Probe (branch probe-deadline): set patches a hostile module might send, each of which the firewall's
// "exactly that patch" rule (abi/README.md §10, set_rollback.go) should refuse.
func TestProbeSetRollbackPatchShapes(t *testing.T) {
	on := map[string]string{abi.AnnotationProgressDeadlineSeconds: "30", abi.AnnotationOnProgressDeadline: "Rollback"}
	snap, tmpl := rollbackSnapshot(t, on)
	tb, _ := json.Marshal(tmpl)
	const jp = "application/json-patch+json"
	good := `[{"op":"test","path":"/metadata/generation","value":2},{"op":"replace","path":"/spec/template","value":` + string(tb) + `}]`
	raw := func(p string) abi.Action {
		return abi.Action{Verb: abi.VerbPatch, Kind: abi.KindStatefulSet, Namespace: "default", Name: "web", PatchType: jp, Patch: json.RawMessage(p)}
	}
	deleting := func() []byte {
		var v map[string]any
		_ = json.Unmarshal(snap, &v)
		v["statefulSet"].(map[string]any)["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-22T10:00:00Z"
		b, _ := json.Marshal(v)
		return b
	}()
	for _, tc := range []struct {
		name   string
		snap   []byte
		action abi.Action
		allow  bool
	}{
		{"control: the rollback", snap, raw(good), true},
		{"duplicate op key", snap, raw(strings.Replace(good, `{"op":"test",`, `{"op":"replace","op":"test",`, 1)), false},
		{"duplicate value key", snap, raw(strings.Replace(good, `"value":2}`, `"value":2,"value":2}`, 1)), false},
		{"op Replace", snap, raw(strings.Replace(good, `"op":"replace"`, `"op":"Replace"`, 1)), false},
		{"extra from", snap, raw(strings.Replace(good, `"op":"replace",`, `"op":"replace","from":"/spec/template",`, 1)), false},
		{"path /spec/template/spec", snap, raw(strings.Replace(good, `"/spec/template"`, `"/spec/template/spec"`, 1)), false},
		{"value with an extra field", snap, raw(strings.Replace(good, `"value":{`, `"value":{"x":1,`, 1)), false},
		{"generation as a string", snap, raw(strings.Replace(good, `"value":2}`, `"value":"2"}`, 1)), false},
		{"generation 2.0", snap, raw(strings.Replace(good, `"value":2}`, `"value":2.0}`, 1)), false},
		{"template number 30 as 30.0", snap, raw(strings.Replace(good, `"terminationGracePeriodSeconds":30`, `"terminationGracePeriodSeconds":30.0`, 1)), false},
		{"another set's name", snap, func() abi.Action { a := raw(good); a.Name = "db"; return a }(), false},
		{"set being deleted", deleting, raw(good), false},
		{"json-patch on a pod", snap, func() abi.Action { a := raw(good); a.Kind = abi.KindPod; a.Name = "web-0"; return a }(), false},
		{"trailing garbage", snap, raw(good + "x"), false},
		{"three ops (move)", snap, raw(strings.TrimSuffix(good, "]") + `,{"op":"move","from":"/spec/replicas","path":"/spec/x"}]`), false},
		{"ops swapped", snap, raw(func() string {
			var ops []json.RawMessage
			_ = json.Unmarshal([]byte(good), &ops)
			return "[" + string(ops[1]) + "," + string(ops[0]) + "]"
		}()), false},
		{"op with case-variant key", snap, raw(strings.Replace(good, `"value":2}`, `"value":2,"Value":3}`, 1)), false},
		{"namespace other", snap, func() abi.Action { a := raw(good); a.Namespace = "kube-system"; return a }(), false},
		{"patch type with parameter", snap, func() abi.Action { a := raw(good); a.PatchType = jp + "; charset=utf-8"; return a }(), false},
		{"null patch", snap, raw(`null`), false},
		{"empty patch", snap, raw(``), false},
		{"escaped path ~1", snap, raw(strings.Replace(good, `"/spec/template"`, `"/spec/template~1"`, 1)), false},
		{"unicode-escaped path", snap, raw(strings.Replace(good, `"/spec/template"`, `"/spec/templat\u0065"`, 1)), true}, // same string once decoded
	} {
		scope, err := firewall.ScopeFromSnapshot(tc.snap)
		if err != nil {
			t.Fatal(err)
		}
		var perr any
		func() {
			defer func() { perr = recover() }()
			err = firewall.Check(scope, &abi.Plan{ABI: 1, Actions: []abi.Action{tc.action}})
		}()
		if perr != nil {
			t.Errorf("%s: panic: %v", tc.name, perr)
			continue
		}
		var refused *firewall.RefusedError
		switch {
		case tc.allow && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case !tc.allow && !errors.As(err, &refused):
			t.Errorf("%s: ALLOWED (%v), want refused", tc.name, err)
		default:
			t.Logf("%s: ok (%v)", tc.name, err)
		}
	}
}

// RATIONALE "A rollback at the progress deadline": "the template compared as decoded JSON against the
// revision's own, so a module cannot use the rollback to write a template the set never ran". A hostile
// module does it in two syncs, each allowed: (1) create a ControllerRevision <set>-<anything> controlled by
// the set holding any template, and write a status whose currentRevision names it (updateStatus content
// is not checked); (2) send the rollback patch with that template. The set's spec.template (the user's
// intent, kept across module swaps) then holds a template the set never ran.
func TestProbeRollbackToARevisionTheModuleMade(t *testing.T) {
	on := map[string]string{abi.AnnotationProgressDeadlineSeconds: "30", abi.AnnotationOnProgressDeadline: "Rollback"}
	snap, _ := rollbackSnapshot(t, on)
	var v map[string]any
	if err := json.Unmarshal(snap, &v); err != nil {
		t.Fatal(err)
	}
	set := v["statefulSet"].(map[string]any)
	uid := set["metadata"].(map[string]any)["uid"].(string)
	evilTemplate := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}, "spec": map[string]any{
		"hostPID": true, "containers": []any{map[string]any{"name": "x", "image": "evil.example/miner:latest",
			"securityContext": map[string]any{"privileged": true}}}}}
	evilData := map[string]any{"spec": map[string]any{"template": func() map[string]any {
		m := map[string]any{"$patch": "replace"}
		for k, x := range evilTemplate {
			m[k] = x
		}
		return m
	}()}}
	evil := map[string]any{"apiVersion": "apps/v1", "kind": "ControllerRevision",
		"metadata": map[string]any{"name": "web-evil", "namespace": "default", "labels": map[string]any{"app": "web"},
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": uid, "controller": true, "blockOwnerDeletion": true}}},
		"data": evilData, "revision": 99}
	evilJSON, _ := json.Marshal(evil)
	status := map[string]any{}
	for k, x := range set["status"].(map[string]any) {
		status[k] = x
	}
	status["currentRevision"] = "web-evil"
	statusJSON, _ := json.Marshal(map[string]any{"status": status})

	// sync 1
	scope, err := firewall.ScopeFromSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	plan1 := &abi.Plan{ABI: 1, Actions: []abi.Action{
		{Verb: abi.VerbCreate, Kind: abi.KindControllerRevision, Namespace: "default", Name: "web-evil", Object: evilJSON},
		{Verb: abi.VerbUpdateStatus, Kind: abi.KindStatefulSet, Namespace: "default", Name: "web", Object: statusJSON},
	}}
	if err := firewall.Check(scope, plan1); err != nil {
		t.Logf("sync 1 refused (good): %v", err)
		return
	}
	// sync 2: the world after sync 1
	evil["metadata"].(map[string]any)["uid"] = "00000000-0000-4000-8000-0000000000ee"
	v["revisions"] = append(v["revisions"].([]any), evil)
	set["status"] = status
	snap2, _ := json.Marshal(v)
	scope2, err := firewall.ScopeFromSnapshot(snap2)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := json.Marshal(evilTemplate)
	patch := `[{"op":"test","path":"/metadata/generation","value":2},{"op":"replace","path":"/spec/template","value":` + string(tb) + `}]`
	plan2 := &abi.Plan{ABI: 1, Actions: []abi.Action{{Verb: abi.VerbPatch, Kind: abi.KindStatefulSet, Namespace: "default", Name: "web",
		PatchType: "application/json-patch+json", Patch: json.RawMessage(patch)}}}
	if err := firewall.Check(scope2, plan2); err == nil {
		t.Errorf("a module wrote a template the set never ran into spec.template (privileged, hostPID, another image) in two allowed plans")
	}
}

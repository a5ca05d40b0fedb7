package firewall_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// Regression tests for the holes of issue 11, each named after its hole.

// An orphan web-99999999999999999999 with the set's labels is a member to upstream (its parent is "web";
// its ordinal overflows an int32 and reads -1), so the module adopts it. The firewall once parsed the name
// with an overflowing integer parse, refused the adoption, and with it the whole plan on every sync: anyone
// who could create a pod in the namespace froze the set. The real plan of the shipped module must pass.
func TestFirewallOrdinalOverflowDoesNotFreezeSet(t *testing.T) {
	snap, err := fs.ReadFile(conformance.FS(), "ownership/ordered-orphan-extra-ordinal.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	const huge = "web-99999999999999999999"
	snap = bytes.ReplaceAll(snap, []byte(`"web-3"`), []byte(`"`+huge+`"`))

	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	raw, err := m.Reconcile(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	var plan abi.Plan
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatal(err)
	}
	adopted := false
	for _, a := range plan.Actions {
		adopted = adopted || (a.Verb == abi.VerbPatch && a.Name == huge)
	}
	if !adopted {
		t.Fatalf("the module no longer adopts %s (upstream does); plan: %s", huge, raw)
	}
	s, err := firewall.ScopeFromSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := firewall.Check(s, &plan); err != nil {
		t.Fatalf("the firewall refuses upstream's plan for an overflowing ordinal: %v", err)
	}

	// The overflow is a member, never an ordinal in range: creating it, or its claim, stays refused.
	for _, a := range []abi.Action{
		act(abi.VerbCreate, abi.KindPod, "prod", "web-99999999999999999999", pod("prod", "web-99999999999999999999", webRef)),
		act(abi.VerbCreate, abi.KindPod, "prod", "web-4294967296", pod("prod", "web-4294967296", webRef)),
		act(abi.VerbCreate, abi.KindPersistentVolumeClaim, "prod", "data-web-99999999999999999999",
			`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data-web-99999999999999999999","namespace":"prod"}}`),
	} {
		err := firewall.Check(scope(t, testSnapshot), &abi.Plan{Actions: []abi.Action{a}})
		if !isRefused(err, firewall.RuleName) {
			t.Errorf("create %s %s: want a name refusal, got %v", a.Kind, a.Name, err)
		}
	}
}

// The firewall once decoded objects with encoding/json, which matches keys case-insensitively and lets
// the last duplicate win, while the API server decodes case-sensitively: an update of web-0 with
// "metadata" naming another owner followed by "Metadata" naming the set passed the firewall, and the API
// server stored the first. Objects and patches whose keys repeat, exactly or but for case, are refused; what
// remains is judged with the API server's decoder.
func TestFirewallKeyCaseBypass(t *testing.T) {
	const (
		foreignMeta = `"metadata":{"name":"web-0","namespace":"prod","uid":"web-0-uid","labels":{"app":"web"},"ownerReferences":[` + dbRef + `]}`
		setMeta     = `"Metadata":{"name":"web-0","namespace":"prod","uid":"web-0-uid","labels":{"app":"web"},"ownerReferences":[` + webRef + `]}`
		spec        = `"spec":{"containers":[{"name":"c","image":"x"}]}`
	)
	for _, tc := range []struct {
		name string
		a    abi.Action
		rule firewall.Rule
	}{
		{"update with metadata then Metadata", act(abi.VerbUpdate, abi.KindPod, "prod", "web-0",
			`{"apiVersion":"v1","kind":"Pod",`+foreignMeta+`,`+setMeta+`,`+spec+`}`), firewall.RuleObject},
		{"update with Metadata then metadata", act(abi.VerbUpdate, abi.KindPod, "prod", "web-0",
			`{"apiVersion":"v1","kind":"Pod",`+setMeta+`,`+foreignMeta+`,`+spec+`}`), firewall.RuleObject},
		{"update with metadata twice", act(abi.VerbUpdate, abi.KindPod, "prod", "web-0",
			`{"apiVersion":"v1","kind":"Pod",`+foreignMeta+`,`+strings.Replace(setMeta, "Metadata", "metadata", 1)+`,`+spec+`}`), firewall.RuleObject},
		{"update with only Metadata", act(abi.VerbUpdate, abi.KindPod, "prod", "web-0",
			`{"apiVersion":"v1","kind":"Pod",`+setMeta+`,`+spec+`}`), firewall.RuleObject},
		{"create with ownerReferences twice", act(abi.VerbCreate, abi.KindPod, "prod", "web-1",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","ownerReferences":[`+dbRef+`],"ownerReferences":[`+webRef+`]},`+spec+`}`), firewall.RuleObject},
		{"create with OwnerReferences", act(abi.VerbCreate, abi.KindPod, "prod", "web-1",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","ownerReferences":[`+dbRef+`],"OwnerReferences":[`+webRef+`]},`+spec+`}`), firewall.RuleObject},
		{"create naming itself with Name", act(abi.VerbCreate, abi.KindPod, "prod", "web-1",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"Name":"web-1","generateName":"db-","ownerReferences":[`+webRef+`]},`+spec+`}`), firewall.RuleObject},
		{"create with a duplicate deep in the spec", act(abi.VerbCreate, abi.KindPod, "prod", "web-1",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","ownerReferences":[`+webRef+`]},"spec":{"containers":[{"name":"c","image":"x","Image":"y"}]}}`), firewall.RuleObject},
		{"adoption with Uid", patch(abi.KindPod, "web-5",
			`{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","Uid":"web-uid","controller":true,"blockOwnerDeletion":true}],"uid":"web-5-uid"}}`), firewall.RulePatch},
		{"adoption with metadata twice", patch(abi.KindPod, "web-5",
			`{"metadata":{"labels":{"app":"db"}},"metadata":{"ownerReferences":[`+webRef+`],"uid":"web-5-uid"}}`), firewall.RulePatch},
		{"adoption with a Metadata label change", patch(abi.KindPod, "web-5",
			`{"metadata":{"ownerReferences":[`+webRef+`],"uid":"web-5-uid"},"Metadata":{"labels":{"app":"db"}}}`), firewall.RulePatch},
		{"claim update with ownerReferences twice", act(abi.VerbUpdate, abi.KindPersistentVolumeClaim, "prod", "data-web-0",
			`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data-web-0","namespace":"prod","uid":"data-web-0-uid","resourceVersion":"5","ownerReferences":[`+dbRef+`],"ownerReferences":[`+webRef+`]},"spec":{"storageClassName":"fast"}}`), firewall.RuleObject},
		{"claim update with Spec", act(abi.VerbUpdate, abi.KindPersistentVolumeClaim, "prod", "data-web-0",
			`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data-web-0","namespace":"prod","uid":"data-web-0-uid","resourceVersion":"5","ownerReferences":[`+webRef+`]},"spec":{"storageClassName":"fast"},"Spec":{"storageClassName":"slow"}}`), firewall.RuleObject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := firewall.Check(scope(t, testSnapshot), &abi.Plan{Actions: []abi.Action{tc.a}})
			if !isRefused(err, tc.rule) {
				t.Fatalf("want a %s refusal, got %v", tc.rule, err)
			}
		})
	}

	// The same objects spelt once, correctly, pass: the refusal is about the repeated keys.
	ok := act(abi.VerbUpdate, abi.KindPod, "prod", "web-0",
		`{"apiVersion":"v1","kind":"Pod",`+strings.Replace(setMeta, "Metadata", "metadata", 1)+`}`)
	if err := firewall.Check(scope(t, testSnapshot), &abi.Plan{Actions: []abi.Action{ok}}); err != nil {
		t.Fatalf("a clean update of web-0 is refused: %v", err)
	}
}

func isRefused(err error, rule firewall.Rule) bool {
	var re *firewall.RefusedError
	return errors.As(err, &re) && len(re.Violations) == 1 && re.Violations[0].Rule == rule
}

// wantJudged fails t unless err is the verdict rule says: allowed (""), or refused by that rule alone.
func wantJudged(t *testing.T, err error, rule firewall.Rule) {
	t.Helper()
	if rule == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if !isRefused(err, rule) {
		t.Fatalf("want a %s refusal, got %v", rule, err)
	}
}

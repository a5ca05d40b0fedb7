package webhook

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
)

// Adding a misspelt ordinal.dev/ annotation, and nothing else, is previewed (it changes what the controller
// would do as a spec change would, for all the webhook knows) and `kubectl apply` is told the key does
// nothing, with the key meant; a value outside an extension's list on a module without it is told too.
func TestWebhookWarnsOfAnUnknownAnnotation(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	f := newFixture(t, w.src, nil, nil)
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, w.edit(func(s *appsv1.StatefulSet) {
		s.Annotations = map[string]string{"ordinal.dev/pod-updte-policy": "InPlaceOnly", "ordinal.dev/paused": "True"}
	}), true))
	if !resp.Allowed {
		t.Fatalf("denied: %+v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "ordinal.dev/pod-updte-policy is unknown, it does nothing (did you mean ordinal.dev/pod-update-policy?)",
		`ordinal.dev/paused: "True" is ignored`, `ordinal.dev/paused: "True" is none of true, false (did you mean "true"?): a module with the extension pause would not read it either`)
}

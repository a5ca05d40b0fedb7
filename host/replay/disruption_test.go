package replay

import (
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// A budget kube-apiserver would refuse is refused by the replay's world, saying why.
func TestInvalidBudgetsAreRefused(t *testing.T) {
	for spec, want := range map[string]string{
		`{"minAvailable":2,"maxUnavailable":1}`: "cannot be both set",
		`{"maxUnavailable":"150%"}`:             "a percentage from 0% to 100%",
		`{"maxUnavailable":"abc"}`:              "a percentage",
		`{"minAvailable":-5}`:                   "at least 0",
		`{"maxUnavailable":1.5}`:                "an integer",
		`{"maxUnavailable":"1"}`:                "a percentage",
		`{"maxUnavailable":1,"selector":{"matchExpressions":[{"key":"app","operator":"Bogus"}]}}`: "selector",
	} {
		o, err := jsonobj.DecodeObj([]byte(`{"kind":"PodDisruptionBudget","metadata":{"name":"b"},"spec":` + spec + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := validatePDB(o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", spec, err, want)
		}
	}
	for _, spec := range []string{`{"minAvailable":2}`, `{"maxUnavailable":"25%","selector":{"matchLabels":{"app":"web"}}}`, `{"minAvailable":0}`} {
		o, _ := jsonobj.DecodeObj([]byte(`{"kind":"PodDisruptionBudget","metadata":{"name":"b"},"spec":` + spec + `}`))
		if err := validatePDB(o); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
}

package webhook

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// trappingPolicy fails every call as a module that traps does.
type trappingPolicy struct{}

func (trappingPolicy) Name() string        { return "trapping" }
func (trappingPolicy) Wants(c string) bool { return false }
func (trappingPolicy) Evaluate(context.Context, []byte) ([]byte, error) {
	return nil, &wasm.Error{Kind: wasm.ErrTrap, Op: "evaluate", Msg: "module trapped: unreachable"}
}

// A policy that fails during the preview is an admission warning, said before the details, and /preview says it
// too (its text, and its JSON's policyFailures, typed); a rollout that ends waiting on a hold says which policy
// holds what, and what for, rather than that it does not finish.
func TestWebhookTellsPolicyFailuresAndHolds(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	shipped := shippedPolicies(t)
	named := func(ctx context.Context, name string) (policy.Module, error) {
		if name == "trapping" {
			return trappingPolicy{}, nil
		}
		return shipped(ctx, name)
	}
	edit := func(annotations map[string]string) *appsv1.StatefulSet {
		return w.edit(func(s *appsv1.StatefulSet) {
			s.Annotations = annotations
			s.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.28"
		})
	}

	t.Run("failure", func(t *testing.T) {
		f := newFixture(t, w.src, nil, func(c *Config) { c.NamedPolicy = named })
		resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, edit(map[string]string{"ordinal.dev/policies": "trapping"}), true))
		if !resp.Allowed || len(resp.Warnings) < 2 || !strings.Contains(resp.Warnings[1], "policy trapping failed (trap) ") {
			t.Fatalf("allowed %v, warnings (the failure second, after the headline):\n  %s", resp.Allowed, strings.Join(resp.Warnings, "\n  "))
		}
		if text := f.previewText(t); !strings.Contains(text, "! policy trapping failed (trap) ") {
			t.Errorf("/preview does not say the failure:\n%s", text)
		}
		res, err := http.Get(f.http.URL + "/preview/prod/web?format=json")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var got struct {
			Preview struct {
				PolicyFailures []struct{ Policy, Reason string } `json:"policyFailures"`
			} `json:"preview"`
		}
		if err := json.Unmarshal(b, &got); err != nil || len(got.Preview.PolicyFailures) != 1 ||
			got.Preview.PolicyFailures[0].Policy != "trapping" || got.Preview.PolicyFailures[0].Reason != policy.FailTrap {
			t.Errorf("/preview?format=json: %v, policyFailures %+v", err, got.Preview.PolicyFailures)
		}
	})

	t.Run("held", func(t *testing.T) {
		client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "signals", Namespace: "ordinal-system"}, Data: map[string]string{"db-healthy": "false"}})
		f := newFixture(t, w.src, nil, func(c *Config) {
			c.NamedPolicy, c.Client, c.SignalsConfigMap = named, client, "ordinal-system/signals"
		})
		resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, edit(map[string]string{"ordinal.dev/policies": "window", "window.ordinal.dev/signal": "db-healthy"}), true))
		wantWarning(t, resp.Warnings, `the rollout waits on a policy: policy window holds delete Pod web-2 since +0s (SignalNotTrue): signal "db-healthy" is false`)
		for _, w := range resp.Warnings {
			if strings.Contains(w, "does not finish") {
				t.Errorf("a held rollout is called unfinished: %q", w)
			}
		}
	})
}

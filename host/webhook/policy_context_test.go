package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/policies"
)

// shippedPolicies gives the shipped policy modules by name, as the webhook's registry does, loaded once.
func shippedPolicies(t *testing.T) func(context.Context, string) (policy.Module, error) {
	t.Helper()
	var mu sync.Mutex
	loaded := map[string]*wasm.Policy{}
	t.Cleanup(func() {
		for _, p := range loaded {
			p.Close(context.Background())
		}
	})
	return func(ctx context.Context, name string) (policy.Module, error) {
		mu.Lock()
		defer mu.Unlock()
		if p, ok := loaded[name]; ok {
			return p, nil
		}
		code, ok := policies.Builtin()[name]
		if !ok {
			return nil, errors.New("unknown policy " + name)
		}
		p, err := wasm.LoadPolicy(ctx, code, boundedLoad)
		if err != nil {
			return nil, err
		}
		loaded[name] = p
		return p, nil
	}
}

// previewText is the full preview of prod/web the webhook serves on /preview.
func (f *fixture) previewText(t *testing.T) string {
	t.Helper()
	res, err := http.Get(f.http.URL + "/preview/prod/web")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/preview/prod/web: %d %s", res.StatusCode, b)
	}
	return string(b)
}

// The webhook previews an edit of a set that names policies with what those policies read, as `kubectl
// ordinal preview` gives it them (policy.ReadLiveContext): the cluster's PodDisruptionBudgets and
// nodes they ask for, and the signals of --signals-configmap. The API server is faked at the client the
// webhook is given (Config.Client); a set that names no policies costs no call to it, and a context that
// cannot be read is no preview (the failure policy answers).
func TestPoliciesArePreviewedWithTheirLiveContext(t *testing.T) {
	w := newWorld(t, 4, "OrderedReady", 2, "Retain", "")
	named := shippedPolicies(t)
	budget := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", Generation: 1},
		Spec:   policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptrTo(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 0, CurrentHealthy: 3, DesiredHealthy: 3, ExpectedPods: 4}}
	signals := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "signals", Namespace: "ordinal-system"}, Data: map[string]string{"db-healthy": "false"}}
	edit := func(annotations map[string]string) (*appsv1.StatefulSet, *appsv1.StatefulSet) {
		old := w.set.DeepCopy()
		old.Annotations = annotations
		cur := old.DeepCopy()
		cur.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/nginx-slim:0.28"
		cur.Generation++
		return old, cur
	}
	review := func(t *testing.T, f *fixture, annotations map[string]string) *admissionv1.AdmissionResponse {
		old, cur := edit(annotations)
		return f.post(t, reviewOf(t, admissionv1.Update, old, cur, true))
	}
	pdbHold := "held by policy pdb (DisruptionBudget): PodDisruptionBudget web allows no more disruptions"
	signalHold := `held by policy window (SignalNotTrue): signal "db-healthy" is false`

	t.Run("budgets", func(t *testing.T) {
		client := fake.NewClientset(budget)
		f := newFixture(t, w.src, nil, func(c *Config) { c.NamedPolicy, c.Client = named, client })
		if resp := review(t, f, map[string]string{"ordinal.dev/policies": "pdb"}); !resp.Allowed {
			t.Fatalf("denied: %v", resp.Result)
		}
		if text := f.previewText(t); !strings.Contains(text, pdbHold) {
			t.Errorf("the preview does not show the budget's hold:\n%s", text)
		}
		if !listed(client, "poddisruptionbudgets") {
			t.Errorf("the budgets were not read: %v", client.Actions())
		}
		// without the cluster, the policy has no budget and holds nothing (what the webhook did before)
		blind := newFixture(t, w.src, nil, func(c *Config) { c.NamedPolicy = named })
		review(t, blind, map[string]string{"ordinal.dev/policies": "pdb"})
		if text := blind.previewText(t); strings.Contains(text, "held by policy pdb") || strings.Contains(text, "policy pdb holds") {
			t.Errorf("a hold without budgets:\n%s", text)
		}
	})

	t.Run("signals", func(t *testing.T) {
		client := fake.NewClientset(signals)
		f := newFixture(t, w.src, nil, func(c *Config) {
			c.NamedPolicy, c.Client, c.SignalsConfigMap = named, client, "ordinal-system/signals"
		})
		review(t, f, map[string]string{"ordinal.dev/policies": "window", "window.ordinal.dev/signal": "db-healthy"})
		if text := f.previewText(t); !strings.Contains(text, signalHold) {
			t.Errorf("the preview does not show the signal's hold:\n%s", text)
		}
	})

	t.Run("no policies, no policy calls", func(t *testing.T) {
		client := fake.NewClientset(budget, signals)
		f := newFixture(t, w.src, nil, func(c *Config) {
			c.NamedPolicy, c.Client, c.SignalsConfigMap = named, client, "ordinal-system/signals"
		})
		if resp := review(t, f, nil); !resp.Allowed || len(resp.Warnings) == 0 {
			t.Fatalf("allowed %v, warnings %q", resp.Allowed, resp.Warnings)
		}
		// one call only: the set's events, its pods' pace (preview.SetEvents)
		if a := client.Actions(); len(a) != 1 || a[0].GetVerb() != "list" || a[0].GetResource().Resource != "events" {
			t.Errorf("%d calls to the API server for a set without policies, want only the list of its events: %v", len(a), a)
		}
	})

	t.Run("a context that cannot be read", func(t *testing.T) {
		client := fake.NewClientset()
		client.PrependReactor("list", "poddisruptionbudgets", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, errors.New("etcd is on fire")
		})
		f := newFixture(t, w.src, nil, func(c *Config) { c.NamedPolicy, c.Client = named, client })
		resp := review(t, f, map[string]string{"ordinal.dev/policies": "pdb"})
		if !resp.Allowed {
			t.Fatalf("fail-open by default, denied: %v", resp.Result)
		}
		wantWarning(t, resp.Warnings, "no rollout preview", "etcd is on fire")
	})
}

// listed reports whether client was asked to list resource.
func listed(client *fake.Clientset, resource string) bool {
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" && a.GetResource().Resource == resource {
			return true
		}
	}
	return false
}

func ptrTo[T any](v T) *T { return &v }

package webhook

import (
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/rbacrules"
)

// The webhook's deployed RBAC (examples/deploy/webhook/rbac.yaml) grants exactly what its code uses: the
// informers of InformerSource (pods, ControllerRevisions, claims: list and watch), the event recorder
// of its RolloutPreview events (core events: create, and patch for a repeat), the set's own events a preview
// learns its pods' termination pace from (list) and what a set's policies read
// (PodDisruptionBudgets and nodes: list), and the set a review of its scale subresource is of (get).
// e2e TestWebhookApply runs
// the webhook with a token of the deployed ServiceAccount under it.
func TestDeployedWebhookRBACIsLeastPrivilege(t *testing.T) {
	granted, err := rbacrules.Granted("../../examples/deploy/webhook/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]string{"/events create": "the event recorder", "/events patch": "the event recorder, for a repeated event",
		"/events list": "preview.SetEvents: the set's events, its pods' termination pace"}
	// --module-configmap=ordinal-system/ordinal-module (host/cli's configMapModules, by name)
	used["/configmaps:ordinal-module list"], used["/configmaps:ordinal-module watch"] = "WatchModuleConfigMap", "WatchModuleConfigMap"
	for _, r := range []string{"/pods", "apps/controllerrevisions", "/persistentvolumeclaims"} {
		used[r+" list"], used[r+" watch"] = "InformerSource", "InformerSource"
	}
	// what a set's policies read, for a set that names them (Config.Client: policy.ReadLiveContext)
	used["policy/poddisruptionbudgets list"] = "policy.Budgets: the budgets a set's policy reads (abi.ContextPodDisruptionBudgets)"
	used["/nodes list"] = "policy.Nodes: the nodes a set's policy reads (abi.ContextNodes)"
	// the set a review of its scale subresource is of, of either kind (Config.GetSet: snapshot.GetSet)
	used["apps/statefulsets get"], used["ordinal.dev/statefulsets get"] = "scaledSets", "scaledSets"
	extra, missing := rbacrules.Compare(granted, used)
	if len(extra) > 0 {
		t.Errorf("examples/deploy/webhook/rbac.yaml grants what the webhook never uses:\n  %s", strings.Join(extra, "\n  "))
	}
	if len(missing) > 0 {
		t.Errorf("examples/deploy/webhook/rbac.yaml lacks what the webhook uses:\n  %s", strings.Join(missing, "\n  "))
	}
}

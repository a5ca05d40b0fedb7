package controller

import (
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/internal/rbacrules"
)

// usedPermissions are the permissions the controller's code uses, "group/resource verb" (a resource name
// after a colon), each for a reason in the code.
func usedPermissions() map[string]string {
	used := map[string]string{}
	for _, r := range []string{"ordinal.dev/statefulsets", "apps/statefulsets", "/pods", "apps/controllerrevisions", "/persistentvolumeclaims"} {
		used[r+" list"] = "the informers"
		used[r+" watch"] = "the informers"
	}
	// The sets: ordinal.dev/v1 StatefulSets always (CRD mode), apps/v1's with --apps-v1; the same verbs on each.
	for group, mode := range map[string]string{"ordinal.dev": "CRD mode", "apps": "--apps-v1"} {
		used[group+"/statefulsets get"] = "recheckSet: upstream's canAdopt, an uncached GET of the set before adopting (" + mode + ")"
		used[group+"/statefulsets/status update"] = "a plan's updateStatus (" + mode + ")"
		used[group+"/statefulsets patch"] = "a plan's rollback at the progress deadline, extension progress-deadline (firewall: set_rollback.go; " + mode + ")"
		used[group+"/statefulsets/finalizers update"] = "pods carry an owner reference to the set with blockOwnerDeletion (OwnerReferencesPermissionEnforcement; " + mode + ")"
	}
	resources := map[string]string{abi.KindPod: "/pods", abi.KindControllerRevision: "apps/controllerrevisions",
		abi.KindPersistentVolumeClaim: "/persistentvolumeclaims"}
	for kind, verbs := range firewall.Writes() {
		for _, v := range verbs {
			if v == abi.VerbResize { // the pods/resize subresource, a PUT
				used[resources[kind]+"/resize update"] = "a plan's resize of a Pod, extension in-place-update (firewall: in_place.go)"
				continue
			}
			used[resources[kind]+" "+v] = "a plan's " + v + " of a " + kind + " (the firewall's writes)"
		}
	}
	used["/pods/finalizers update"] = "claims carry an owner reference to their pod with blockOwnerDeletion under the retention policy"
	// Never a plan's verb: OwnerReferencesPermissionEnforcement refuses a change of an object's ownerReferences
	// (the retention policy's claim patches, claim adoption) to whoever may not delete that object. Pods and
	// revisions are deleted by plans anyway. Found by the e2e cluster, which enables the plugin.
	used["/persistentvolumeclaims delete"] = "claim owner reference patches (OwnerReferencesPermissionEnforcement)"
	used["policy/poddisruptionbudgets list"] = "policyCaches: the budgets a set's policy reads (abi.ContextPodDisruptionBudgets)"
	used["policy/poddisruptionbudgets watch"] = "policyCaches: the budgets' informer"
	used["policy/poddisruptionbudgets get"] = "policy.ClientBudgets: a budget read again after its spend's 409 (abi/POLICY.md 4.1)"
	used["policy/poddisruptionbudgets/status update"] = "policy.ClientBudgets: the disruptions a policy's allowed deletes spend (abi/POLICY.md 4.1)"
	used["/nodes list"] = "policyCaches: the nodes a set's policy reads (abi.ContextNodes)"
	used["/nodes watch"] = "policyCaches: the nodes' informer"
	used["/events create"] = "the event recorder"
	used["/events patch"] = "the event recorder, for a repeated event"
	used["/configmaps:ordinal-module list"] = "WatchModuleConfigMap (--module-configmap=ordinal-system/ordinal-module, by name)"
	used["/configmaps:ordinal-module watch"] = "WatchModuleConfigMap"
	used["coordination.k8s.io/leases create"] = "leader election, the first time"
	used["coordination.k8s.io/leases:ordinal-controller get"] = "leader election"
	used["coordination.k8s.io/leases:ordinal-controller update"] = "leader election"
	return used
}

// The deployed RBAC (examples/deploy/rbac.yaml) grants exactly what the controller's code uses: no verb the
// code never uses (least privilege), and none missing (e2e TestControllerRunsUnderTheDeployedRBAC runs the
// controller under it through a rollout).
func TestDeployedRBACIsLeastPrivilege(t *testing.T) {
	granted, err := rbacrules.Granted("../../examples/deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	extra, missing := rbacrules.Compare(granted, usedPermissions())
	if len(extra) > 0 {
		t.Errorf("examples/deploy/rbac.yaml grants what the code never uses:\n  %s", strings.Join(extra, "\n  "))
	}
	if len(missing) > 0 {
		t.Errorf("examples/deploy/rbac.yaml lacks what the code uses:\n  %s", strings.Join(missing, "\n  "))
	}
}

// The sharded overlay's Role (examples/deploy-sharded/rbac.yaml) grants what sharding uses beyond the base:
// the shard and member Leases, whose names are not known in advance (the base's Role grants create).
func TestShardedRBACIsLeastPrivilege(t *testing.T) {
	granted, err := rbacrules.Granted("../../examples/deploy-sharded/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]string{
		"coordination.k8s.io/leases get":    "the shards' and the member's electors (sharding.go)",
		"coordination.k8s.io/leases update": "the electors' renewals and releases",
		"coordination.k8s.io/leases list":   "the Lease informer: which members are live (rebalance)",
		"coordination.k8s.io/leases watch":  "the Lease informer",
	}
	extra, missing := rbacrules.Compare(granted, used)
	if len(extra) > 0 || len(missing) > 0 {
		t.Errorf("examples/deploy-sharded/rbac.yaml: grants unused %q, lacks %q", extra, missing)
	}
}

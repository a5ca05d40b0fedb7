//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ordinal-dev/ordinal/host/crd"
)

var (
	appsSetGVR    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	ordinalSetGVR = schema.GroupVersionResource{Group: crd.Group, Version: crd.Version, Resource: crd.Resource}
)

// `kubectl ordinal migrate` through the real kubectl: a set of kube-controller-manager's own controller
// moves to ordinal.dev/v1 and back with no pod deleted and no ControllerRevision made, and a set mid-rollout
// is refused. Not parallel: it turns kube-controller-manager's StatefulSet controller on, which acts in every
// namespace.
func TestMigrateToOrdinalAndBack(t *testing.T) {
	requireHookEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute) // a hang guard, not a budget
	t.Cleanup(cancel)
	if err := installCRD(cfg.rest); err != nil { // idempotent: the suite's setup applied it already
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, ctx)
	backups := t.TempDir()
	restartKCM(t, kcmBuiltinSTS)
	wantKCMControllers(t, true)

	tr := trackPods(t, ctx, ns, "mig", true)
	createSet(t, ctx, ns, newSet("mig", 3, withClaims(appsv1.DeletePersistentVolumeClaimRetentionPolicyType, "")))
	createSet(t, ctx, ns, newSet("roll", 2))
	kcmSet := waitRolledOut(t, ctx, ns, "mig", 3)
	waitRolledOut(t, ctx, ns, "roll", 2)
	// whenDeleted=Delete: kube-controller-manager gives each claim an owner reference to the set
	waitClaims(t, ctx, ns, "mig's 3 claims owned by the apps/v1 set", time.Minute, claimsOwnedBy(kcmSet.UID, "apps/v1", 3))
	uids := tr.uidsByName(ctx)
	revs := revisionNameSet(listRevisions(t, ctx, ns, "mig"))
	src, err := dyn.Resource(appsSetGVR).Namespace(ns).Get(ctx, "mig", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("apps/v1 set: %s; revisions %v", statusString(kcmSet), revs)

	// ---- refused: a set mid-rollout (its new revision never becomes Ready) is left as it is
	patchSet(t, ctx, ns, "roll", `{"spec":{"template":{"metadata":{"annotations":{"`+annVersion+`":"v2","`+annNeverReady+`":"true"}}}}}`)
	roll := waitSet(t, ctx, ns, "roll", "mid-rollout: roll-1 at the update revision, not Ready", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReplicas == 1 && s.Status.CurrentRevision != s.Status.UpdateRevision
	})
	out, perr, code := plugin(t, ctx, "migrate", "statefulset/roll", "-n", ns, "--to", "ordinal", "--wait=false", "--backup-dir", backups)
	if code != 1 || !strings.Contains(perr, "is mid-rollout") || !strings.Contains(perr, "--allow-rollout") {
		t.Errorf("migrate of a set mid-rollout: exit %d, want 1 and a refusal naming --allow-rollout\n%s%s", code, out, perr)
	}
	if s := getSet(t, ctx, ns, "roll"); s.UID != roll.UID || s.DeletionTimestamp != nil {
		t.Errorf("the refused set was changed: uid %s -> %s, deleting %v", roll.UID, s.UID, s.DeletionTimestamp != nil)
	}
	if _, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Get(ctx, "roll", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an ordinal.dev set roll after the refusal: %v", err)
	}
	if files, _ := os.ReadDir(backups); len(files) > 0 {
		t.Errorf("a refusal left backup files: %v", files)
	}

	// ---- a dry run checks and says what it would do, and changes nothing
	out, perr, code = plugin(t, ctx, "migrate", "statefulset/mig", "-n", ns, "--to", "ordinal", "--dry-run", "--backup-dir", backups)
	if code != 0 || !strings.Contains(out, "dry run: nothing was changed") || !strings.Contains(out, "delete the apps/v1 StatefulSet "+ns+"/mig with propagationPolicy=Orphan") {
		t.Errorf("migrate --dry-run: exit %d\n%s%s", code, out, perr)
	}
	if s := getSet(t, ctx, ns, "mig"); s.UID != kcmSet.UID || s.DeletionTimestamp != nil {
		t.Errorf("the dry run changed the set: uid %s -> %s, deleting %v", kcmSet.UID, s.UID, s.DeletionTimestamp != nil)
	}
	if files, _ := os.ReadDir(backups); len(files) > 0 {
		t.Errorf("a dry run wrote backup files: %v", files)
	}

	// ---- apps/v1 -> ordinal.dev/v1
	mark := tr.mark()
	out, perr, code = plugin(t, ctx, "migrate", "statefulset/mig", "-n", ns, "--to", "ordinal", "--wait=false", "--backup-dir", backups)
	t.Logf("$ kubectl ordinal migrate statefulset/mig --to ordinal --wait=false -> exit %d\n%s%s", code, out, perr)
	if code != 0 {
		t.Fatalf("migrate --to ordinal: exit %d", code)
	}
	if _, err := cfg.kc.AppsV1().StatefulSets(ns).Get(ctx, "mig", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the apps/v1 set is still there after the migration: %v", err)
	}
	osts, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Get(ctx, "mig", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the ordinal.dev set: %v", err)
	}
	if !reflect.DeepEqual(osts.Object["spec"], src.Object["spec"]) {
		t.Errorf("spec changed:\n apps/v1     %v\n ordinal.dev %v", src.Object["spec"], osts.Object["spec"])
	}
	wantCarried(t, osts.Object, kcmSet, "app=mig")
	// the user's own manifest, its apiVersion changed, applies to the migrated set: its claim templates are
	// immutable, and the CRD defaults them as kube-apiserver defaulted the apps/v1 set's (hack/crd-defaults)
	mine, err := runtime.DefaultUnstructuredConverter.ToUnstructured(newSet("mig", 3, withClaims(appsv1.DeletePersistentVolumeClaimRetentionPolicyType, "")))
	if err != nil {
		t.Fatal(err)
	}
	manifest := &unstructured.Unstructured{Object: mine}
	manifest.SetAPIVersion(crd.Group + "/" + crd.Version)
	manifest.SetKind(crd.Kind)
	manifest.SetNamespace(ns)
	manifest.SetResourceVersion(osts.GetResourceVersion())
	if _, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Update(ctx, manifest, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("the set's manifest as ordinal.dev/v1, applied after the migration (server-side dry run): %v", err)
	}
	if g, ok, _ := unstructuredInt(osts.Object, "status", "observedGeneration"); ok {
		t.Errorf("status.observedGeneration %d carried over to a new object (generation %d)", g, osts.GetGeneration())
	}
	// the finished migration keeps its backup under a name of its own, named in the output
	kept, _ := filepath.Glob(filepath.Join(backups, "*.done-*.json"))
	if files, _ := os.ReadDir(backups); len(kept) != 2 || len(files) != 2 || !strings.Contains(out, "backup kept: ") {
		t.Errorf("after the migration: backup files %v (kept %v), want the object and status kept and named\n%s", files, kept, out)
	}
	for _, k := range kept {
		if !strings.Contains(k, ".status.") && !strings.Contains(out, k) {
			t.Errorf("the kept backup %s is not named in the output", k)
		}
	}
	// the garbage collector removed every owner reference to the old set before the set was gone
	wantNoOwner(t, ctx, ns, "mig", kcmSet.UID)
	if got := revisionNameSet(listRevisions(t, ctx, ns, "mig")); !slices.Equal(got, revs) {
		t.Errorf("ControllerRevisions changed by the migration: %v -> %v", revs, got)
	}
	// kube-controller-manager leaves the orphans alone: a set created after the migration is rolled out by it
	// (its controller has handled every event before that set's), and the orphaned pods are untouched
	createSet(t, ctx, ns, newSet("later", 1))
	waitRolledOut(t, ctx, ns, "later", 1)
	samePods(t, ctx, ns, uids, "after the migration to ordinal.dev", "mig-0", "mig-1", "mig-2")
	for _, p := range tr.snapshot() {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
			t.Errorf("pod %s has a controller (%s %s) with no controller of ordinal.dev sets running", p.Name, ref.Kind, ref.UID)
		}
	}
	wantNoPodChange(t, tr, mark)

	// ---- Ordinal's controller adopts the pods, revisions and claims of the ordinal.dev set
	ordinalAdopts(t, ctx, dyn, ns, tr, uids, revs, kcmSet, osts.GetUID())
	// ---- both kinds side by side, each to its own controller
	sideBySide(t, ctx, dyn, ns, "roll", "later")

	// ---- ordinal.dev/v1 -> apps/v1, waiting for kube-controller-manager to adopt
	mark = tr.mark()
	args := []string{"migrate", "mig", "-n", ns, "--to", "apps", "--timeout", "50s", "--backup-dir", backups}
	out, perr, code = plugin(t, ctx, args...)
	t.Logf("$ kubectl ordinal %s -> exit %d\n%s%s", strings.Join(args, " "), code, out, perr)
	if code != 0 || !strings.Contains(out, "migrated: every pod is controlled by the apps/v1 StatefulSet") {
		t.Fatalf("migrate --to apps: exit %d", code)
	}
	if _, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Get(ctx, "mig", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ordinal.dev set is still there: %v", err)
	}
	back := getSet(t, ctx, ns, "mig")
	backRaw, err := dyn.Resource(appsSetGVR).Namespace(ns).Get(ctx, "mig", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(backRaw.Object["spec"], src.Object["spec"]) {
		t.Errorf("spec changed by the round trip:\n before %v\n after  %v", src.Object["spec"], backRaw.Object["spec"])
	}
	tr.waitFor(ctx, "every pod controlled by the new apps/v1 set", time.Minute, controlledBy(3, back.UID))
	waitFor(t, ctx, "every revision controlled by the new apps/v1 set", time.Minute, func() bool { return revisionsControlledBy(t, ctx, ns, back.UID) })
	waitClaims(t, ctx, ns, "the claims' retention owner reference names the new apps/v1 set", time.Minute, claimsOwnedBy(back.UID, "apps/v1", 3))
	back = waitRolledOut(t, ctx, ns, "mig", 3)
	if back.Status.CurrentRevision != kcmSet.Status.CurrentRevision || back.Status.UpdateRevision != kcmSet.Status.UpdateRevision ||
		ptrStr(back.Status.CollisionCount) != ptrStr(kcmSet.Status.CollisionCount) {
		t.Errorf("revisions after the round trip: %s, before: %s", statusString(back), statusString(kcmSet))
	}
	if got := revisionNameSet(listRevisions(t, ctx, ns, "mig")); !slices.Equal(got, revs) {
		t.Errorf("ControllerRevisions changed by the round trip: %v -> %v", revs, got)
	}
	samePods(t, ctx, ns, uids, "kube-controller-manager adopted the pods", "mig-0", "mig-1", "mig-2")
	wantNoPodChange(t, tr, mark)
	tr.checkInvariants()
}

// ordinalAdopts runs `ordinal controller` (CRD mode) on the migrated ordinal.dev set and checks that it
// adopts the pods, revisions and claims with no new revision and no pod restarted.
func ordinalAdopts(t *testing.T, ctx context.Context, dyn dynamic.Interface, ns string, tr *podTracker, uids map[string]types.UID,
	revs []string, kcmSet *appsv1.StatefulSet, newUID types.UID) {
	t.Helper()
	mark := tr.mark()
	c := startController(t, ns, ctrlOpts{crdOnly: true}) // kube-controller-manager has the apps/v1 sets
	c.waitReady(ctx)
	tr.waitFor(ctx, "every pod controlled by the ordinal.dev set", 2*time.Minute, controlledBy(3, newUID))
	waitFor(t, ctx, "every revision controlled by the ordinal.dev set", 2*time.Minute, func() bool { return revisionsControlledBy(t, ctx, ns, newUID) })
	waitClaims(t, ctx, ns, "the claims' retention owner reference names the ordinal.dev set", time.Minute, claimsOwnedBy(newUID, crd.GroupVersion.String(), 3))
	waitFor(t, ctx, "the ordinal.dev set's status observed by Ordinal", 2*time.Minute, func() bool {
		u, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Get(ctx, "mig", metav1.GetOptions{})
		if err != nil {
			return false
		}
		g, _, _ := unstructuredInt(u.Object, "status", "observedGeneration")
		r, _, _ := unstructuredInt(u.Object, "status", "readyReplicas")
		return g == u.GetGeneration() && r == 3
	})
	osts, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Get(ctx, "mig", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantCarried(t, osts.Object, kcmSet, "app=mig")
	if got := revisionNameSet(listRevisions(t, ctx, ns, "mig")); !slices.Equal(got, revs) {
		t.Errorf("ControllerRevisions changed by Ordinal's adoption: %v -> %v", revs, got)
	}
	samePods(t, ctx, ns, uids, "Ordinal adopted the pods", "mig-0", "mig-1", "mig-2")
	wantNoPodChange(t, tr, mark)
}

// sideBySide creates and rolls out an ordinal.dev set while kube-controller-manager's StatefulSet controller
// and Ordinal's (CRD kind only) both run: Ordinal creates and replaces its pods, kube-controller-manager
// leaves them alone, and neither touches the apps/v1 sets appsSets (their pods stay, no status write of
// Ordinal's, pods still controlled by them).
func sideBySide(t *testing.T, ctx context.Context, dyn dynamic.Interface, ns string, appsSets ...string) {
	t.Helper()
	before := map[string]types.UID{}
	var appsPods []string
	pods, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOfNoCopy(&p); ref != nil && ref.APIVersion == "apps/v1" && slices.Contains(appsSets, ref.Name) {
			before[p.Name] = p.UID
			appsPods = append(appsPods, p.Name)
		}
	}
	if len(appsPods) == 0 {
		t.Fatalf("no pod of %v", appsSets)
	}
	tr := trackPods(t, ctx, ns, "side", true)
	side := createOrdinalSet(t, ctx, dyn, ns, newSet("side", 2))
	first := waitOrdinalRolledOut(t, ctx, dyn, ns, "side", 2)
	mark := tr.mark()
	patchOrdinalSet(t, ctx, dyn, ns, "side", setVersion("v2"))
	second := waitOrdinalRolledOut(t, ctx, dyn, ns, "side", 2)
	if second == first {
		t.Errorf("the ordinal.dev set's template changed but its revision did not: %s", first)
	}
	wantOrdinals(t, "side's pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 1, 0)
	tr.waitFor(ctx, "side's pods controlled by the ordinal.dev set", time.Minute, controlledBy(2, side.GetUID()))
	tr.checkInvariants()
	cur, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Get(ctx, "side", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := statusManagers(cur.GetManagedFields()); !slices.Equal(m, []string{"ordinal"}) {
		t.Errorf("the ordinal.dev set's status written by %v, want ordinal alone", m)
	}
	samePods(t, ctx, ns, before, "apps/v1 pods beside an ordinal.dev set", appsPods...)
	for _, name := range appsSets {
		s := getSet(t, ctx, ns, name)
		if m := statusManagers(s.ManagedFields); slices.Contains(m, "ordinal") {
			t.Errorf("Ordinal wrote the status of the apps/v1 set %s (status managers %v)", name, m)
		}
	}
}

// createOrdinalSet creates set as an ordinal.dev/v1 StatefulSet (the same manifest, another apiVersion).
func createOrdinalSet(t *testing.T, ctx context.Context, dyn dynamic.Interface, ns string, set *appsv1.StatefulSet) *unstructured.Unstructured {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(set)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(crd.GroupVersion.String())
	u.SetKind(crd.Kind)
	out, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create ordinal.dev StatefulSet %s: %v", set.Name, err)
	}
	return out
}

func patchOrdinalSet(t *testing.T, ctx context.Context, dyn dynamic.Interface, ns, name, patch string) {
	t.Helper()
	if _, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch ordinal.dev StatefulSet %s with %s: %v", name, patch, err)
	}
	t.Logf("patched ordinal.dev StatefulSet %s: %s", name, patch)
}

// waitOrdinalRolledOut waits until an ordinal.dev set is rolled out (as waitRolledOut) and returns its revision.
func waitOrdinalRolledOut(t *testing.T, ctx context.Context, dyn dynamic.Interface, ns, name string, replicas int64) string {
	t.Helper()
	var rev string
	waitFor(t, ctx, fmt.Sprintf("ordinal.dev set %s: %d/%d ready and updated, currentRevision == updateRevision", name, replicas, replicas), 2*time.Minute, func() bool {
		u, err := dyn.Resource(ordinalSetGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		st, _ := u.Object["status"].(map[string]any)
		g, _, _ := unstructuredInt(u.Object, "status", "observedGeneration")
		ready, _, _ := unstructuredInt(u.Object, "status", "readyReplicas")
		updated, _, _ := unstructuredInt(u.Object, "status", "updatedReplicas")
		current, _, _ := unstructuredInt(u.Object, "status", "currentReplicas")
		rev, _ = st["updateRevision"].(string)
		return g == u.GetGeneration() && ready == replicas && updated == replicas && current == replicas &&
			rev != "" && st["currentRevision"] == rev
	})
	return rev
}

// statusManagers are the field managers that wrote an object's status subresource.
func statusManagers(mf []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, e := range mf {
		if e.Subresource == "status" && !slices.Contains(out, e.Manager) {
			out = append(out, e.Manager)
		}
	}
	sort.Strings(out)
	return out
}

// wantCarried checks the status carried over to the ordinal.dev set: the revisions and counts of the apps/v1
// set, and status.selector.
func wantCarried(t *testing.T, obj map[string]any, from *appsv1.StatefulSet, selector string) {
	t.Helper()
	st, _ := obj["status"].(map[string]any)
	cc, _, _ := unstructuredInt(obj, "status", "collisionCount")
	if st["currentRevision"] != from.Status.CurrentRevision || st["updateRevision"] != from.Status.UpdateRevision ||
		cc != int64(ptrInt32(from.Status.CollisionCount)) || st["selector"] != selector {
		t.Errorf("status carried: %v\nwant currentRevision %s, updateRevision %s, collisionCount %s, selector %s",
			st, from.Status.CurrentRevision, from.Status.UpdateRevision, ptrStr(from.Status.CollisionCount), selector)
	}
}

func ptrInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func unstructuredInt(obj map[string]any, path ...string) (int64, bool, error) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[p]
	}
	v, ok := cur.(int64)
	return v, ok, nil
}

func revisionNameSet(revs []appsv1.ControllerRevision) []string {
	var out []string
	for _, r := range revs {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}

func claimsOwnedBy(uid types.UID, apiVersion string, n int) func(map[string]*corev1.PersistentVolumeClaim) bool {
	return func(m map[string]*corev1.PersistentVolumeClaim) bool {
		owned := 0
		for _, c := range m {
			if slices.ContainsFunc(c.OwnerReferences, func(r metav1.OwnerReference) bool {
				return r.UID == uid && r.APIVersion == apiVersion && r.Kind == "StatefulSet"
			}) {
				owned++
			}
		}
		return owned == n
	}
}

func controlledBy(n int, uid types.UID) func(podView) bool {
	return func(v podView) bool {
		if v.count() != n {
			return false
		}
		for i := 0; i < n; i++ {
			if ref := metav1.GetControllerOfNoCopy(v.pod(i)); ref == nil || ref.UID != uid {
				return false
			}
		}
		return true
	}
}

func revisionsControlledBy(t *testing.T, ctx context.Context, ns string, uid types.UID) bool {
	for _, r := range listRevisions(t, ctx, ns, "mig") {
		if ref := metav1.GetControllerOfNoCopy(&r); ref == nil || ref.UID != uid {
			return false
		}
	}
	return true
}

// wantNoOwner checks that no pod, revision or claim of the set names the owner uid any more.
func wantNoOwner(t *testing.T, ctx context.Context, ns, set string, uid types.UID) {
	t.Helper()
	names := func(refs []metav1.OwnerReference) bool {
		return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == uid })
	}
	pods, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + set})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if names(p.OwnerReferences) {
			t.Errorf("pod %s still names the old set: %s", p.Name, ownersString(p.OwnerReferences))
		}
	}
	for _, r := range listRevisions(t, ctx, ns, set) {
		if names(r.OwnerReferences) {
			t.Errorf("revision %s still names the old set: %s", r.Name, ownersString(r.OwnerReferences))
		}
	}
	for n, c := range listClaims(t, ctx, ns) {
		if names(c.OwnerReferences) {
			t.Errorf("claim %s still names the old set: %s", n, ownersString(c.OwnerReferences))
		}
	}
	if n := len(listClaims(t, ctx, ns)); n != 3 {
		t.Errorf("%d claims, want 3", n)
	}
}

// wantNoPodChange: since mark, no pod was created, deleted, or stopped being Ready.
func wantNoPodChange(t *testing.T, tr *podTracker, mark int) {
	t.Helper()
	for _, k := range []stepKind{stepCreated, stepTerminating, stepDeleted, stepUnready} {
		if s := tr.stepsOf(k, mark); len(s) > 0 {
			t.Errorf("pods %s: %v", k, s)
		}
	}
}

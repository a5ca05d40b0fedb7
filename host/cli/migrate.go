package cli

// The decisions of `kubectl ordinal migrate`, as pure functions over the objects the API server returned
// (plugin_migrate.go makes the calls): which kind is the source, whether the set may move, the target object
// and the status carried over, and where an interrupted migration stands when the command runs again.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// lastAppliedAnnotation is client-side kubectl apply's record of the applied manifest. It names the old
// apiVersion: it is carried with the target's (lastAppliedAs), so that the next `kubectl apply` of the moved
// manifest three-way merges against it, neither warning that it is missing nor keeping what the file dropped.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// lastAppliedAs is a last-applied-configuration naming the target's apiVersion (kubectl's JSON, its trailing
// newline kept, every other field as written: a number is not rounded through float64); ok false when it is
// not a JSON object, and then it is not carried.
func lastAppliedAs(record string, to migrateKind) (string, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(record), &m); err != nil || m == nil {
		return "", false
	}
	m["apiVersion"], _ = json.Marshal(to.apiVersion())
	m["kind"], _ = json.Marshal("StatefulSet")
	b, err := json.Marshal(m)
	if err != nil {
		return "", false
	}
	if strings.HasSuffix(record, "\n") {
		b = append(b, '\n')
	}
	return string(b), true
}

// migrateKind is one of the two kinds a set moves between: the controller's Target, and how migrate
// names it.
type migrateKind struct {
	flag       string // the --to value
	target     snapshot.Target
	controller string // who reconciles it
}

var (
	appsKind    = migrateKind{flag: "apps", target: snapshot.StatefulSetTarget, controller: "kube-controller-manager's StatefulSet controller"}
	ordinalKind = migrateKind{flag: "ordinal", target: snapshot.CRDTarget, controller: "ordinal controller"}
)

func (k migrateKind) apiVersion() string { return k.target.APIVersion() }

func (k migrateKind) gvr() schema.GroupVersionResource {
	return k.target.GroupVersion.WithResource(k.target.Resource)
}

// kubectl is the resource as kubectl names it unambiguously: statefulsets.apps, statefulsets.ordinal.dev.
func (k migrateKind) kubectl() string { return k.target.Resource + "." + k.target.GroupVersion.Group }

func (k migrateKind) String() string { return k.apiVersion() + " StatefulSet" }

// migrateKinds reads --to: the kind the set leaves and the kind it becomes.
func migrateKinds(to string) (from, target migrateKind, err error) {
	switch strings.ToLower(to) {
	case "ordinal", "ordinal.dev", "ordinal.dev/v1":
		return appsKind, ordinalKind, nil
	case "apps", "apps/v1":
		return ordinalKind, appsKind, nil
	case "":
		return from, target, fmt.Errorf("--to is required: ordinal (apps/v1 -> ordinal.dev/v1) or apps (ordinal.dev/v1 -> apps/v1)")
	}
	return from, target, fmt.Errorf("--to %q: want ordinal (apps/v1 -> ordinal.dev/v1) or apps (ordinal.dev/v1 -> apps/v1)", to)
}

// parseMigrateArg reads the set's name: statefulset/NAME or NAME, the kind naming either group
// (statefulsets.ordinal.dev/web, osts/web); --to says which kind the set leaves.
func parseMigrateArg(s string) (string, error) {
	_, name, err := parseSetArg(s)
	return name, err
}

// rolloutReasons says why a set is mid-rollout (empty: settled): its controller has not seen the latest
// spec, or its pods are not all at one revision that is both current and update revision.
func rolloutReasons(s *appsv1.StatefulSet) []string {
	st, replicas := s.Status, ptrInt(s.Spec.Replicas)
	var out []string
	if st.ObservedGeneration < s.Generation {
		out = append(out, fmt.Sprintf("status.observedGeneration %d < metadata.generation %d: no controller has synced the latest spec", st.ObservedGeneration, s.Generation))
	}
	if st.CurrentRevision != st.UpdateRevision {
		out = append(out, fmt.Sprintf("status.currentRevision %s != status.updateRevision %s: a rolling update is under way", st.CurrentRevision, st.UpdateRevision))
	}
	if st.UpdatedReplicas != replicas {
		out = append(out, fmt.Sprintf("status.updatedReplicas %d != spec.replicas %d", st.UpdatedReplicas, replicas))
	}
	if st.CurrentReplicas != replicas {
		out = append(out, fmt.Sprintf("status.currentReplicas %d != spec.replicas %d", st.CurrentReplicas, replicas))
	}
	return out
}

// migration is one set's move: the target object to create (metadata and spec) and the status written
// through the status subresource after it. It is also what the backup file holds.
type migration struct {
	from, to        migrateKind
	namespace, name string
	object          map[string]any // apiVersion, kind, metadata, spec
	status          map[string]any
}

// typedSet reads a StatefulSet of either kind as apps/v1's Go type (the same spec and status; the CRD's
// status.selector is dropped).
func typedSet(obj map[string]any) (*appsv1.StatefulSet, error) {
	var s appsv1.StatefulSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// checkSource refuses a source set that must not move now: being deleted, controlled by another object
// (it would recreate it), or mid-rollout without allowRollout.
func checkSource(from migrateKind, obj map[string]any, allowRollout bool) error {
	s, err := typedSet(obj)
	if err != nil {
		return fmt.Errorf("the %s %s/%s cannot be read: %w", from, nsOf(obj), nameOf(obj), err)
	}
	id := fmt.Sprintf("the %s %s/%s", from, s.Namespace, s.Name)
	if s.DeletionTimestamp != nil {
		return fmt.Errorf("%s is being deleted (since %s): nothing to migrate", id, s.DeletionTimestamp.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if ref := metav1.GetControllerOfNoCopy(s); ref != nil {
		return fmt.Errorf("%s is controlled by %s %s/%s, which would recreate it: migrate that object's sets through it", id, ref.Kind, s.Namespace, ref.Name)
	}
	// A pause is the kind's own (the extension's annotation on ordinal.dev, the partition on apps/v1): it
	// would not hold on the other side, and `kubectl ordinal resume` of the other kind could not undo it.
	_, byPartition := s.Annotations[rollout.PausedPartitionAnnotation]
	if _, byAnnotation := abi.EnumAnnotation(s.Annotations, abi.AnnotationPaused); byAnnotation || byPartition {
		return fmt.Errorf("%s is paused (kubectl ordinal pause): resume it first (kubectl ordinal resume %s), and pause it again after the migration if you want; a pause does not carry over to the other kind", id, s.Name)
	}
	if r := rolloutReasons(s); len(r) > 0 && !allowRollout {
		return fmt.Errorf("%s is mid-rollout:\n  %s\nwait until the rollout completes (kubectl ordinal status %s), or pass --allow-rollout: the new controller continues the rollout from the status carried over (status.currentRevision)",
			id, strings.Join(r, "\n  "), s.Name)
	}
	return nil
}

// buildMigration makes the target of a source set: the same name, namespace, labels, annotations (kubectl's
// last-applied-configuration naming the target's apiVersion) and owner references, the spec exactly as the API server returned
// it (defaulted: the revision names hash the template as stored); and the status to carry: the source's,
// without observedGeneration (the new object is at generation 1, its controller has not seen it) and, for
// ordinal.dev, with status.selector (spec.selector as a string, the scale subresource's).
func buildMigration(from, to migrateKind, src map[string]any) (*migration, error) {
	s, err := typedSet(src)
	if err != nil {
		return nil, fmt.Errorf("the %s %s/%s cannot be read: %w", from, nsOf(src), nameOf(src), err)
	}
	spec, ok := src["spec"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the %s %s/%s has no spec", from, s.Namespace, s.Name)
	}
	meta := map[string]any{"name": s.Name, "namespace": s.Namespace}
	if len(s.Labels) > 0 {
		meta["labels"] = stringMap(s.Labels)
	}
	ann := map[string]any{}
	for k, v := range s.Annotations {
		if k != lastAppliedAnnotation {
			ann[k] = v
		} else if rec, ok := lastAppliedAs(v, to); ok {
			ann[k] = rec
		}
	}
	if len(ann) > 0 {
		meta["annotations"] = ann
	}
	if refs, ok := src["metadata"].(map[string]any)["ownerReferences"]; ok {
		meta["ownerReferences"] = runtime.DeepCopyJSONValue(refs)
	}
	status := map[string]any{}
	if st, ok := src["status"].(map[string]any); ok {
		status = runtime.DeepCopyJSONValue(st).(map[string]any)
	}
	delete(status, "observedGeneration")
	delete(status, "selector")
	if to == ordinalKind {
		status["selector"] = metav1.FormatLabelSelector(s.Spec.Selector)
	}
	return &migration{from: from, to: to, namespace: s.Namespace, name: s.Name,
		object: map[string]any{"apiVersion": to.apiVersion(), "kind": "StatefulSet", "metadata": meta,
			"spec": runtime.DeepCopyJSONValue(spec)},
		status: status}, nil
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func nsOf(obj map[string]any) string {
	s, _ := obj["metadata"].(map[string]any)["namespace"].(string)
	return s
}

func nameOf(obj map[string]any) string {
	s, _ := obj["metadata"].(map[string]any)["name"].(string)
	return s
}

// backupPaths are the files a migration is saved in before the source is deleted: the target object with
// the status (for `kubectl create -f`, which ignores the status) and the status alone (a merge patch for
// `kubectl patch --subresource=status`). One name per namespace, set and direction, so a second run finds it.
func backupPaths(dir string, to migrateKind, ns, name string) (object, status string) {
	base := filepath.Join(dir, fmt.Sprintf("ordinal-migrate_%s_%s_to-%s", ns, name, to.flag))
	return base + ".json", base + ".status.json"
}

// backupFiles are the two files' contents.
func (m *migration) backupFiles() (object, status []byte, err error) {
	obj := runtime.DeepCopyJSON(m.object)
	obj["status"] = runtime.DeepCopyJSONValue(m.status)
	if object, err = json.MarshalIndent(obj, "", "  "); err != nil {
		return nil, nil, err
	}
	if status, err = json.MarshalIndent(map[string]any{"status": m.status}, "", "  "); err != nil {
		return nil, nil, err
	}
	return append(object, '\n'), append(status, '\n'), nil
}

// readBackup reads a backup object file (the status file is for a person's `kubectl patch`; the object
// file holds the status too).
func readBackup(from, to migrateKind, b []byte) (*migration, error) {
	var obj map[string]any
	if err := utiljson.Unmarshal(b, &obj); err != nil { // numbers as the dynamic client decodes them
		return nil, err
	}
	if obj["apiVersion"] != to.apiVersion() || obj["kind"] != "StatefulSet" {
		return nil, fmt.Errorf("not a %s (apiVersion %v, kind %v)", to, obj["apiVersion"], obj["kind"])
	}
	if _, ok := obj["spec"].(map[string]any); !ok {
		return nil, fmt.Errorf("no spec")
	}
	status, _ := obj["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	delete(obj, "status")
	if nameOf(obj) == "" {
		return nil, fmt.Errorf("no metadata.name")
	}
	return &migration{from: from, to: to, namespace: nsOf(obj), name: nameOf(obj), object: obj, status: status}, nil
}

// migrateStep is where a migration stands, from what the cluster and the backup directory hold.
type migrateStep int

const (
	stepMigrate     migrateStep = iota // the source is there: check it, save the backup, delete it, create the target
	stepAwaitGone                      // our orphaning delete of the source is under way: wait for it to be gone, then create
	stepCreate                         // the source is gone, the target absent, the backup present: create from it
	stepWriteStatus                    // the target was created from the backup, its status never written: write it
	stepDone                           // the target exists and the source is gone: nothing to do but wait for adoption
)

func (s migrateStep) String() string {
	return [...]string{"migrate", "await-gone", "create", "write-status", "done"}[s]
}

// migrateState is what the command finds: the source and target objects (nil: not found) and the backup
// of an earlier run (nil: none).
type migrateState struct {
	from, to       migrateKind
	namespace      string
	name           string
	source, target map[string]any
	backup         *migration
	allowRollout   bool
}

// planMigrate decides the next step and the migration it carries out; notes are warnings for the user.
func planMigrate(st migrateState) (step migrateStep, m *migration, notes []string, err error) {
	id := st.namespace + "/" + st.name
	switch {
	case st.source != nil && st.target != nil:
		return 0, nil, nil, fmt.Errorf("both a %s and a %s %s exist: refusing to replace the %s; delete one of them first", st.from, st.to, id, st.to)
	case st.source != nil:
		m, err := buildMigration(st.from, st.to, st.source)
		if err != nil {
			return 0, nil, nil, err
		}
		if meta, _ := st.source["metadata"].(map[string]any); meta["deletionTimestamp"] != nil {
			// Our own earlier run's delete, interrupted before the set was gone: the backup is of this very
			// object (its metadata and spec; the status may have moved since: the latest is carried).
			if st.backup != nil && len(rollout.Diff(st.backup.object, m.object)) == 0 {
				return stepAwaitGone, m, []string{fmt.Sprintf("the %s %s is being deleted by an earlier migration (its backup matches): continuing", st.from, id)}, nil
			}
		}
		if err := checkSource(st.from, st.source, st.allowRollout); err != nil {
			return 0, nil, nil, err
		}
		return stepMigrate, m, nil, nil
	case st.target == nil && st.backup != nil:
		return stepCreate, st.backup, []string{fmt.Sprintf("the %s %s is gone and the %s was never created: creating it from the backup of an earlier run", st.from, id, st.to)}, nil
	case st.target == nil:
		return 0, nil, nil, fmt.Errorf("no %s %s (and no %s of that name, and no backup of an interrupted migration)", st.from, id, st.to)
	case st.backup == nil:
		return stepDone, nil, []string{fmt.Sprintf("%s is already a %s (no %s of that name): nothing to migrate", id, st.to, st.from)}, nil
	}
	// The target exists and a backup too: the run that created it stopped before it wrote the status or
	// before it removed the backup.
	t, err := typedSet(st.target)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("the %s %s cannot be read: %w", st.to, id, err)
	}
	if t.Status.ObservedGeneration == 0 && t.Status.UpdateRevision == "" && t.Status.CollisionCount == nil {
		return stepWriteStatus, st.backup, []string{fmt.Sprintf("the %s %s was created by an earlier run, its status never written: writing it", st.to, id)}, nil
	}
	if d := revisionDiff(st.backup.status, st.target); d != "" {
		notes = append(notes, fmt.Sprintf("the %s %s was synced by %s before the status was carried over (%s): it decided without the old set's revisions; check its pods and revisions",
			st.to, id, st.to.controller, d))
	}
	return stepDone, st.backup, notes, nil
}

// revisionDiff says how the target's revision fields differ from the status carried ("": they agree).
func revisionDiff(carried map[string]any, target map[string]any) string {
	tst, _ := target["status"].(map[string]any)
	var d []string
	for _, k := range []string{"currentRevision", "updateRevision", "collisionCount"} {
		if len(rollout.Diff(carried[k], tst[k])) > 0 {
			d = append(d, fmt.Sprintf("%s %v, carried %v", k, orNone(tst[k]), orNone(carried[k])))
		}
	}
	return strings.Join(d, "; ")
}

func orNone(v any) any {
	if v == nil {
		return "none"
	}
	return v
}

// specDiff lists the paths where the spec the target's API server would store differs from the source's
// (empty: identical), so a migration that would change the template (and so every revision name) is refused
// before anything is deleted.
func specDiff(want, got any) []string {
	var out []string
	for _, c := range rollout.Diff(map[string]any{"spec": want}, map[string]any{"spec": got}) {
		out = append(out, c.String())
	}
	return out
}

// finishByHand is what the user is told when the source is gone and the target could not be created or
// its status not written: the state is in the backup files, and the same command finishes it.
func finishByHand(m *migration, objectFile, statusFile, rerun string, created bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The %s %s/%s is deleted; its pods, revisions and claims are orphaned and keep running, but no controller manages them until the %s exists",
		m.from, m.namespace, m.name, m.to)
	if created {
		b.WriteString(" with its status")
	}
	fmt.Fprintf(&b, ".\nIt is saved in %s. To finish, run the same command again:\n  %s\nor by hand:\n", objectFile, rerun)
	if !created {
		fmt.Fprintf(&b, "  kubectl create -f %s\n", objectFile)
	}
	fmt.Fprintf(&b, "  kubectl patch %s %s -n %s --subresource=status --type=merge --patch-file %s\n", m.to.kubectl(), m.name, m.namespace, statusFile)
	fmt.Fprintf(&b, "  rm %s %s", objectFile, statusFile)
	return b.String()
}

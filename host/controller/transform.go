package controller

import (
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// The informers' transform (issue 34): what the controller keeps of each object it caches. A pod informer
// caches every pod of the cluster (or of --namespace), most of them not a StatefulSet's, and each pod
// decoded from the API server carries its own copy of every string. Two things are dropped without
// changing any sync's snapshot (TestTransformKeepsSnapshots) or any handler's decision:
//
//   - a pod no snapshot can ever carry is kept as a stub (its metadata without annotations): one whose
//     controller is of a kind this controller does not reconcile (a ReplicaSet, a Job, a DaemonSet) and
//     whose name does not end in -<digits>. SelectObjects takes a pod only when its controller's UID is
//     the set's or it is named <set>-<n>; the handlers read such a pod's labels, controller reference,
//     resource version and deletion timestamp, which the stub keeps. A pod whose controller changes
//     arrives whole in the update and is transformed again.
//   - every other pod keeps all its fields (an update is a PUT of the whole pod), but the strings pods
//     repeat (namespace, labels, owner, node, images, container and volume names, condition types) are
//     interned with the unique package, shared by every cached pod rather than copied in each one.
//
// Revisions and claims keep all their fields: a revision's data is what a sync compares, and a claim's
// name decides which set it belongs to. Everything first goes through snapshot.TrimManagedFields, as before.

// informerTransform is the shared informers' transform for a controller reconciling the given kinds.
func informerTransform(targets []snapshot.Target) cache.TransformFunc {
	kinds := map[string]bool{}
	for _, t := range targets {
		kinds[t.Kind] = true
	}
	return func(obj any) (any, error) {
		obj, err := snapshot.TrimManagedFields(obj)
		if err != nil {
			return obj, err
		}
		if p, ok := obj.(*corev1.Pod); ok {
			if neverSnapshotted(p, kinds) {
				return stubPod(p), nil
			}
			internPod(p)
		}
		return obj, nil
	}
}

// neverSnapshotted reports whether no sync of a set of the given kinds can select p (snapshot.SelectObjects).
func neverSnapshotted(p *corev1.Pod, kinds map[string]bool) bool {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil || kinds[ref.Kind] {
		return false
	}
	parent, _ := ordinal.Parse(p.Name) // "" only when the name has no -<digits> suffix at all
	return parent == ""
}

// stubPod is what the handlers read of a pod no snapshot carries.
func stubPod(p *corev1.Pod) *corev1.Pod {
	m := p.ObjectMeta
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: intern(m.Namespace), UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		Labels: internMap(m.Labels), OwnerReferences: internRefs(m.OwnerReferences),
	}}
}

func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

func internMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

func internSlice(s []string) {
	for i := range s {
		s[i] = intern(s[i])
	}
}

func internRefs(refs []metav1.OwnerReference) []metav1.OwnerReference {
	for i := range refs {
		refs[i].APIVersion, refs[i].Kind, refs[i].Name = intern(refs[i].APIVersion), intern(refs[i].Kind), intern(refs[i].Name)
	}
	return refs
}

// internPod replaces, in place, the strings pods share by their canonical copies. It changes no value.
func internPod(p *corev1.Pod) {
	m := &p.ObjectMeta
	m.Namespace, m.GenerateName = intern(m.Namespace), intern(m.GenerateName)
	m.Labels, m.Annotations = internMap(m.Labels), internMap(m.Annotations)
	m.OwnerReferences = internRefs(m.OwnerReferences)
	internSlice(m.Finalizers)
	for i := range m.ManagedFields {
		f := &m.ManagedFields[i]
		f.Manager, f.APIVersion, f.FieldsType, f.Subresource = intern(f.Manager), intern(f.APIVersion), intern(f.FieldsType), intern(f.Subresource)
	}
	s := &p.Spec
	s.NodeName, s.ServiceAccountName, s.DeprecatedServiceAccount = intern(s.NodeName), intern(s.ServiceAccountName), intern(s.DeprecatedServiceAccount)
	s.SchedulerName, s.Subdomain, s.PriorityClassName = intern(s.SchedulerName), intern(s.Subdomain), intern(s.PriorityClassName)
	s.RestartPolicy, s.DNSPolicy = corev1.RestartPolicy(intern(string(s.RestartPolicy))), corev1.DNSPolicy(intern(string(s.DNSPolicy)))
	s.NodeSelector = internMap(s.NodeSelector)
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			internContainer(&cs[i])
		}
	}
	for i := range s.Volumes {
		s.Volumes[i].Name = intern(s.Volumes[i].Name)
	}
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		t.Key, t.Operator, t.Effect = intern(t.Key), corev1.TolerationOperator(intern(string(t.Operator))), corev1.TaintEffect(intern(string(t.Effect)))
	}
	st := &p.Status
	st.Phase, st.QOSClass, st.HostIP = corev1.PodPhase(intern(string(st.Phase))), corev1.PodQOSClass(intern(string(st.QOSClass))), intern(st.HostIP)
	for i := range st.HostIPs {
		st.HostIPs[i].IP = intern(st.HostIPs[i].IP)
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status, c.Reason = corev1.PodConditionType(intern(string(c.Type))), corev1.ConditionStatus(intern(string(c.Status))), intern(c.Reason)
	}
	for _, cs := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range cs {
			c := &cs[i]
			c.Name, c.Image, c.ImageID = intern(c.Name), intern(c.Image), intern(c.ImageID)
		}
	}
}

func internContainer(c *corev1.Container) {
	c.Name, c.Image, c.TerminationMessagePath = intern(c.Name), intern(c.Image), intern(c.TerminationMessagePath)
	c.ImagePullPolicy, c.TerminationMessagePolicy = corev1.PullPolicy(intern(string(c.ImagePullPolicy))), corev1.TerminationMessagePolicy(intern(string(c.TerminationMessagePolicy)))
	internSlice(c.Command)
	internSlice(c.Args)
	for i := range c.Env {
		c.Env[i].Name, c.Env[i].Value = intern(c.Env[i].Name), intern(c.Env[i].Value)
	}
	for i := range c.Ports {
		c.Ports[i].Name, c.Ports[i].Protocol = intern(c.Ports[i].Name), corev1.Protocol(intern(string(c.Ports[i].Protocol)))
	}
	for i := range c.VolumeMounts {
		c.VolumeMounts[i].Name, c.VolumeMounts[i].MountPath = intern(c.VolumeMounts[i].Name), intern(c.VolumeMounts[i].MountPath)
	}
}

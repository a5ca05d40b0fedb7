package firewall

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// A pod update changes what upstream's updateStatefulPod changes, and, on a set that opted in to extension
// in-place-update, what an in-place update changes; nothing else of the snapshot's pod:
//   - labels: the identity labels (statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index) set to
//     the pod's own name and ordinal (updateIdentity); in place also the revision label, moved to a revision
//     holding the set's template with every image the template's, the template's labels set to its values,
//     and the labels the pod's revision's template gave it removed;
//   - annotations: in place only, as the labels: the template's set, the old template's removed, and the
//     record ordinal.dev/in-place-update naming the revision the pod is moved to;
//   - spec: images (checkPodImages) and volumes (updateStorage), and, in place, containers' resources to
//     the template's (the resize before the update gave the pod them).
// The API server lets a pod update change more than that: finalizers, any label or annotation,
// activeDeadlineSeconds (the kubelet then kills the pod), tolerations. A module that changed those would
// disrupt or pin pods without a delete a policy sees, or relabel a pod to the update revision it does not
// run, and the status would count it updated.

var identityLabels = map[string]bool{"statefulset.kubernetes.io/pod-name": true, "apps.kubernetes.io/pod-index": true}

// snapshotPod is the snapshot's pod of target; nil when the host records none (then only images are judged).
func snapshotPod(target *Object) (*corev1.Pod, error) {
	if target.Pod != nil {
		return target.Pod, nil
	}
	if target.PodOf != nil {
		return target.PodOf()
	}
	return nil, nil
}

// checkPodUpdate judges the content of a pod update, p (its identity and owner references checked before).
func (st *planState) checkPodUpdate(target *Object, p *corev1.Pod) (Rule, string) {
	s := st.s
	if rule, reason := s.checkPodImages(target, &p.Spec); rule != "" {
		return rule, reason
	}
	old, err := snapshotPod(target)
	if err != nil {
		return RuleObject, "the snapshot's pod does not decode: " + err.Error()
	}
	if old == nil {
		return "", ""
	}
	// the metadata, but for the labels, the annotations and what the API server keeps or checks elsewhere
	// (shallow copies: only their own fields are cleared, nothing they point to)
	clearMeta := func(m metav1.ObjectMeta) metav1.ObjectMeta {
		m.Labels, m.Annotations, m.ResourceVersion, m.ManagedFields = nil, nil, "", nil
		m.Name, m.Namespace, m.UID, m.OwnerReferences = "", "", "", nil
		return m
	}
	if !equality.Semantic.DeepEqual(clearMeta(old.ObjectMeta), clearMeta(p.ObjectMeta)) {
		return RuleObject, "a pod update changes metadata other than labels and annotations (finalizers, ...)"
	}
	if field := st.podSpecChange(&old.Spec, &p.Spec); field != "" {
		return RuleObject, "a pod update changes " + field + ": only images, volumes and, in place, the template's resources change"
	}
	newRev := p.Labels[abi.LabelRevision]
	if rule, reason := st.checkStrings("label", old.Labels, p.Labels, old, newRev, &p.Spec); rule != "" {
		return rule, reason
	}
	return st.checkStrings("annotation", old.Annotations, p.Annotations, old, newRev, &p.Spec)
}

// podSpecChange names the first field of the spec a pod update changes beyond images, volumes and, in place,
// containers' resources set to the template's ("" none).
func (st *planState) podSpecChange(old, now *corev1.PodSpec) string {
	a, b := old.DeepCopy(), now.DeepCopy()
	a.Volumes, b.Volumes = nil, nil
	for _, l := range []struct {
		name string
		a, b []corev1.Container
	}{{"initContainers", a.InitContainers, b.InitContainers}, {"containers", a.Containers, b.Containers}} {
		for i := range l.a {
			l.a[i].Image = ""
		}
		for i := range l.b {
			l.b[i].Image = ""
			if i >= len(l.a) || l.a[i].Name != l.b[i].Name || equality.Semantic.DeepEqual(l.a[i].Resources, l.b[i].Resources) {
				continue
			}
			want, ok := st.s.inPlace.containers[containerKey(l.name, l.b[i].Name)]
			if !st.s.inPlace.on || !ok || !equality.Semantic.DeepEqual(l.b[i].Resources, want.Resources) {
				return fmt.Sprintf("spec.%s[%d].resources", l.name, i)
			}
			l.b[i].Resources = l.a[i].Resources
		}
	}
	return specFieldDiff(a, b)
}

// specFieldDiff names the first field of pod spec b that differs from a ("spec.tolerations"; "" none).
func specFieldDiff(a, b *corev1.PodSpec) string {
	if equality.Semantic.DeepEqual(a, b) {
		return ""
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < va.NumField(); i++ {
		if !equality.Semantic.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return "spec." + jsonName(va.Type().Field(i))
		}
	}
	return "spec"
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' {
			return tag[:i]
		}
	}
	if tag == "" {
		return f.Name
	}
	return tag
}

// checkStrings judges the labels or annotations (what) a pod update gives a pod that had old.
func (st *planState) checkStrings(what string, old, now map[string]string, pod *corev1.Pod, newRev string, spec *corev1.PodSpec) (Rule, string) {
	s := st.s
	var keys []string
	for k, v := range now {
		if o, ok := old[k]; !ok || o != v {
			keys = append(keys, k)
		}
	}
	for k := range old {
		if _, ok := now[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // one verdict for one plan
	for _, k := range keys {
		v, set := now[k]
		refuse := func(why string) (Rule, string) {
			if !set {
				return RuleObject, fmt.Sprintf("a pod update removes the %s %q: %s", what, k, why)
			}
			return RuleObject, fmt.Sprintf("a pod update sets the %s %q to %.64q: %s", what, k, v, why)
		}
		if what == "label" && identityLabels[k] {
			_, n := ordinal.Parse(pod.Name)
			if set && (k == "statefulset.kubernetes.io/pod-name" && v == pod.Name || k == "apps.kubernetes.io/pod-index" && v == strconv.FormatInt(n, 10)) {
				continue
			}
			return refuse("an identity label names the pod and its ordinal")
		}
		if !s.inPlace.on {
			return refuse("only extension in-place-update (" + abi.AnnotationPodUpdatePolicy + ") changes a pod's labels beyond its identity, or its annotations")
		}
		if what == "label" && k == abi.LabelRevision || what == "annotation" && k == abi.AnnotationInPlaceUpdate {
			if !set || !st.holdsSetTemplate(v) {
				return refuse("an in-place update moves a pod to a revision holding the set's spec.template")
			}
			if what == "annotation" && v != newRev {
				return refuse("the in-place record names the revision the pod's label does")
			}
			if what == "label" {
				for key, image := range PodImages(spec) {
					if want, ok := s.inPlace.containers[key]; !ok || want.Image != image {
						return refuse(key + ": a pod moved in place runs the set's template's images")
					}
				}
			}
			continue
		}
		tmpl := st.templateStrings(what, "")
		if want, ok := tmpl[k]; set && ok && want == v {
			continue // the template's
		}
		if !set {
			if _, keep := tmpl[k]; !keep {
				if ov, ok := st.templateStrings(what, pod.Labels[abi.LabelRevision])[k]; ok && ov == old[k] {
					continue // the old template's, which the new one drops
				}
			}
		}
		return refuse("an in-place update sets the set's template's and removes its revision's template's")
	}
	return "", ""
}

// holdsSetTemplate reports whether revision name (of the snapshot, or created earlier in the plan) holds the
// set's spec.template.
func (st *planState) holdsSetTemplate(name string) bool {
	data, ok := st.createdRevisions[name]
	if !ok {
		if st.s.Revisions[name] == nil {
			return false
		}
		data = st.s.dataOf(name)
	}
	return st.s.dataHoldsSetTemplate(data)
}

// dataHoldsSetTemplate reports whether a revision's data holds the set's spec.template (with "$patch":"replace").
func (s *Scope) dataHoldsSetTemplate(data []byte) bool {
	t, ok := revisionTemplate(data)
	return ok && reflect.DeepEqual(t, s.setTemplateDecoded())
}

// templateStrings is the labels or annotations of the set's template (revision "") or of the snapshot's
// revision's template.
func (st *planState) templateStrings(what, revision string) map[string]string {
	var t any
	if revision == "" {
		t = st.s.setTemplateDecoded()
	} else if st.s.Revisions[revision] != nil {
		t, _ = revisionTemplate(st.s.dataOf(revision))
	}
	field := map[string]string{"label": "labels", "annotation": "annotations"}[what]
	tm, _ := t.(map[string]any)
	md, _ := tm["metadata"].(map[string]any)
	m, _ := md[field].(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

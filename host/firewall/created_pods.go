package firewall

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	sigsjson "sigs.k8s.io/json"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// A created pod is upstream's newVersionedStatefulSetPod: a template the set has (its spec.template, or the
// template of a ControllerRevision of the snapshot the set controls: upstream creates a pod from its current
// or its update revision; a revision the plan creates holds the set's template, revisions.go) with the pod's
// identity (its name as hostname, the set's serviceName as subdomain, the identity and revision labels) and
// its claims (a volume per claim template, naming the claim <template>-<set>-<ordinal>). Without it a module
// could create a pod of the set with any image, a hostPath or privileged container, another app's service
// account, or another set's claim mounted, and the rule of a pod update's images (in_place.go) would be moot:
// a module would delete a pod and create it again as it likes.

// namedTemplate is a template a created pod may come from.
type namedTemplate struct {
	from string // "spec.template", or "revision NAME"
	t    *corev1.PodTemplateSpec
}

// checkCreatedPod judges a pod a plan creates (decoded by decodePod, its name, namespace and owner checked before).
func (st *planState) checkCreatedPod(name string, p *corev1.Pod) (Rule, string) {
	var first string
	judge := func(t namedTemplate) bool {
		diff := st.s.createdPodDiff(name, p, t.t)
		if diff != "" && first == "" {
			first = diff + " (against the set's " + t.from + ")"
		}
		return diff == ""
	}
	// the set's spec.template first: the update revision's, which most created pods are; the revisions'
	// templates are decoded only for a pod that is not
	if st.s.podTemplate != nil && judge(namedTemplate{"spec.template", st.s.podTemplate}) {
		return "", ""
	}
	for _, t := range st.revisionTemplates() {
		if judge(t) {
			return "", ""
		}
	}
	if first == "" {
		first = "the set has no template"
	}
	return RuleObject, "a created pod is a template of the set with the pod's identity and claims: " + first
}

// revisionTemplates are the templates of the ControllerRevisions of the snapshot the set controls, which a
// created pod may come from too (its current revision's), decoded once per plan.
func (st *planState) revisionTemplates() []namedTemplate {
	if st.templates != nil {
		return st.templates
	}
	s := st.s
	st.templates = []namedTemplate{}
	for _, name := range slices.Sorted(maps.Keys(s.Revisions)) { // a refusal names the same revision every time
		if o := s.Revisions[name]; !st.owned(abi.KindControllerRevision, o) { // adoptions come first in a sync
			continue
		}
		m, ok := revisionTemplate(s.dataOf(name))
		if !ok {
			continue
		}
		b, err := json.Marshal(m)
		var t corev1.PodTemplateSpec
		if err != nil || sigsjson.UnmarshalCaseSensitivePreserveInts(b, &t) != nil {
			continue
		}
		st.templates = append(st.templates, namedTemplate{"revision " + name, &t})
	}
	return st.templates
}

// createdPodDiff names the first part of pod p (to be created as name) that is not template t with the pod's
// identity and claims ("" none).
func (s *Scope) createdPodDiff(name string, p *corev1.Pod, t *corev1.PodTemplateSpec) string {
	_, n := ordinal.Parse(name)
	// labels: the template's, the identity labels and the revision label
	for k, v := range p.Labels {
		switch {
		case k == "statefulset.kubernetes.io/pod-name" && v == name, k == "apps.kubernetes.io/pod-index" && v == strconv.FormatInt(n, 10),
			k == abi.LabelRevision:
		case t.Labels[k] == v && hasKey(t.Labels, k):
		default:
			return fmt.Sprintf("metadata.labels[%q]", k)
		}
	}
	for k := range t.Labels {
		if _, ok := p.Labels[k]; !ok {
			return fmt.Sprintf("metadata.labels[%q]", k)
		}
	}
	if !equality.Semantic.DeepEqual(p.Annotations, t.Annotations) {
		return "metadata.annotations"
	}
	if !equality.Semantic.DeepEqual(p.Finalizers, t.Finalizers) {
		return "metadata.finalizers"
	}
	a, b := t.Spec, p.Spec // shallow copies: only their own fields are cleared below, nothing they point to
	if b.Hostname != name && b.Hostname != a.Hostname {
		return "spec.hostname"
	}
	if b.Subdomain != s.serviceName && b.Subdomain != a.Subdomain {
		return "spec.subdomain"
	}
	a.Hostname, b.Hostname, a.Subdomain, b.Subdomain = "", "", "", ""
	// volumes: one per claim template naming the pod's claim, then the template's others
	claim := map[string]bool{}
	for _, c := range s.ClaimTemplates {
		claim[c] = true
	}
	var own []corev1.Volume
	for _, v := range b.Volumes {
		if !claim[v.Name] {
			own = append(own, v)
			continue
		}
		want := corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: v.Name + "-" + s.Name + "-" + strconv.FormatInt(n, 10)}}}
		if !equality.Semantic.DeepEqual(v, want) {
			return fmt.Sprintf("spec.volumes[%q]: a claim template's volume names the pod's claim %s", v.Name, want.PersistentVolumeClaim.ClaimName)
		}
	}
	var theirs []corev1.Volume
	for _, v := range a.Volumes {
		if !claim[v.Name] {
			theirs = append(theirs, v)
		}
	}
	if !equality.Semantic.DeepEqual(own, theirs) {
		return "spec.volumes"
	}
	a.Volumes, b.Volumes = nil, nil
	return specFieldDiff(&a, &b)
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

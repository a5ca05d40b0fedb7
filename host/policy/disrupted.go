package policy

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
)

// Pods is what a host knows of a snapshot's pods for context "disrupted" (Run.Pods).
type Pods struct {
	Names []string          // every pod's name, in the snapshot's order
	Down  []json.RawMessage // the pods that are not healthy (Healthy), as the snapshot carries them, in its order
}

// Healthy reports whether a pod is healthy as the disruption controller counts a PodDisruptionBudget's
// currentHealthy, and so as context "disrupted" means it (abi/POLICY.md section 2): not being deleted, and
// its Ready condition (the first of that type) True — and, beyond the disruption controller, not updated in
// place and still waiting for its containers to run its spec (kube.InPlace, the module's own rule): from the
// update to the kubelet's restart its Ready condition is still True, yet the pod is going down, as a pod
// being deleted is.
func Healthy(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	if v, ok := kube.InPlace(p); ok && v.Pending {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// healthyJSON is Healthy of a pod as a snapshot carries it (a deletionTimestamp member, even null, is
// a deletion). Only a pod whose in-place record names its revision is decoded whole, for kube.InPlace.
func healthyJSON(pod gjson.Result) bool {
	if pod.Get("metadata.deletionTimestamp").Exists() {
		return false
	}
	record := pod.Get("metadata.annotations").Get(gjson.Escape(abi.AnnotationInPlaceUpdate))
	if record.Exists() && record.String() == pod.Get("metadata.labels").Get(gjson.Escape(appsv1.ControllerRevisionHashLabelKey)).String() {
		var p corev1.Pod
		if err := json.Unmarshal([]byte(pod.Raw), &p); err == nil {
			return Healthy(&p)
		}
	}
	for _, c := range pod.Get("status.conditions").Array() {
		if c.Get("type").String() == string(corev1.PodReady) {
			return c.Get("status").String() == string(corev1.ConditionTrue)
		}
	}
	return false
}

// maxMissing bounds context "disrupted"'s missing names: a set of a billion replicas and no pods must not
// cost a billion names (a policy's message could not carry more than a few dozen of them anyway).
const maxMissing = abi.MaxDisruptedMissing

// disruptedOf is context "disrupted" (abi.PolicyContext.Disrupted) of a snapshot whose set is set and whose
// pods are pods: the pods that are not healthy, as the snapshot carries them, and the set's replicas
// <set>-<ordinal>, from spec.ordinals.start below start+spec.replicas, that no pod of the snapshot is named.
// It costs the pods that are down and one look at each name.
func disruptedOf(set gjson.Result, pods Pods) *abi.Disrupted {
	d := &abi.Disrupted{Pods: pods.Down, Missing: []string{}}
	if d.Pods == nil {
		d.Pods = []json.RawMessage{}
	}
	r := set.Get("spec.replicas")
	if !r.Exists() {
		return d
	}
	start, replicas, name := set.Get("spec.ordinals.start").Int(), r.Int(), set.Get("metadata.name").String()
	// Only the first len(Names)+maxMissing ordinals can be looked at: by then maxMissing are missing.
	span := min(max(replicas, 0), int64(len(pods.Names))+maxMissing)
	named := make([]bool, span)
	prefix := name + "-"
	for _, n := range pods.Names {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		o, ok := ordinalIn(rest)
		if i := o - start; ok && o >= start && i >= 0 && i < span { // i < 0: it overflowed (a start far below 0)
			named[i] = true
		}
	}
	for i := int64(0); i < span && len(d.Missing) < maxMissing; i++ {
		if !named[i] {
			d.Missing = append(d.Missing, prefix+strconv.FormatInt(start+i, 10))
		}
	}
	return d
}

// ordinalIn reads s as strconv.FormatInt writes an ordinal (ok false: it is not one, or has more than 18
// digits), without allocating: a 1000-pod set's names are read on each sync of a policy asking for
// "disrupted".
func ordinalIn(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	neg := len(digits) < len(s)
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && (len(digits) > 1 || neg) {
		return 0, false
	}
	var v int64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// podsOf reads a snapshot's pods, for a host that gives no Run.Pods.
func podsOf(snapshot []byte) Pods {
	var out Pods
	gjson.GetBytes(snapshot, "pods").ForEach(func(_, p gjson.Result) bool {
		out.Names = append(out.Names, p.Get("metadata.name").String())
		if !healthyJSON(p) {
			out.Down = append(out.Down, json.RawMessage(p.Raw))
		}
		return true
	})
	return out
}

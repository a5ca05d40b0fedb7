// Command zones is a policy module (abi/POLICY.md): a set's pods are taken down one failure domain at a
// time (kubernetes/kubernetes#114010, #51907). A pod delete — a rollout's, a scale-down's, a failed pod's
// replacement — is held while a pod of the set in another zone is disrupted (not Ready, or terminating), so
// a rollout with maxUnavailable above 1, or Parallel pods, never has two zones down at once. An in-place
// update of a pod (the extended module's pod-update-policy: its containers restart) takes its zone down as
// its delete would, and is held the same way, by its first write (abi/POLICY.md section 2.1). A later sync
// sees that pod down only once its Ready condition goes False (context "disrupted"), when the kubelet
// restarts it: a sync before that may take another zone's pod down (docs/in-place-updates.md).
//
// A pod's zone is its node's topology.kubernetes.io/zone label (the host supplies the nodes the set's pods
// run on: describe's context "nodes"); a pod not yet on a node, or on a node without the label, is in the
// zone "unknown", and so is a replica whose pod is missing (deleted, not created again yet). The set
// chooses another node label with zones.ordinal.dev/label.
//
// Of the set's other pods it needs to know only which are down: it asks the host for them (describe's
// context "disrupted": the pods that are not healthy and the replicas without a pod), not for the whole
// snapshot, so its input grows with what is down rather than with the set. Given an input without them (a
// whole snapshot, written by hand) it finds them in the snapshot's pods, the same way.
package main

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/policies/kit"
)

const (
	annotationLabel = "zones.ordinal.dev/label"
	defaultLabel    = "topology.kubernetes.io/zone"
	unknown         = "unknown"
	retry           = 15 * time.Second
)

func main() {}

func decide(in *kit.Input) ([]kit.Hold, error) {
	label := defaultLabel
	if v := in.Set().Get("metadata.annotations." + gjson.Escape(annotationLabel)); v.Exists() && v.String() != "" {
		label = v.String()
	}
	// A node's zone is read when a pod on it is looked at (the pods down and those the plan deletes: a few,
	// of a set on many nodes): of the nodes of that name, the last with the label set.
	nodes := map[string][]gjson.Result{}
	for _, n := range in.Context("nodes").Array() {
		name := n.Get("metadata.name").String()
		nodes[name] = append(nodes[name], n)
	}
	labelPath, zones := "metadata.labels."+gjson.Escape(label), map[string]string{}
	zoneOf := func(pod gjson.Result) string {
		node := pod.Get("spec.nodeName").String()
		z, ok := zones[node]
		if !ok {
			z = unknown
			for i := len(nodes[node]) - 1; i >= 0; i-- {
				if l := nodes[node][i].Get(labelPath); l.Exists() && l.String() != "" {
					z = l.String()
					break
				}
			}
			zones[node] = z
		}
		return z
	}
	// The zones disrupted now: where a pod of the set is not Ready or is terminating (pods are the set's:
	// the snapshot's pods this set controls or may adopt; others' are not its concern), and a replica whose
	// pod is gone (deleted, not yet created again), in a zone not known until its new pod is scheduled.
	disrupted := map[string][]string{}
	pods := map[string]gjson.Result{} // the snapshot's: with context "disrupted", those the plan names
	for _, p := range in.Pods().Array() {
		pods[p.Get("metadata.name").String()] = p
	}
	if d := in.Context("disrupted"); d.Exists() {
		for _, p := range d.Get("pods").Array() {
			z := zoneOf(p)
			disrupted[z] = append(disrupted[z], p.Get("metadata.name").String())
		}
		for _, n := range d.Get("missing").Array() {
			disrupted[unknown] = append(disrupted[unknown], n.String()+" missing")
		}
	} else {
		for _, p := range in.Pods().Array() {
			if !kit.Healthy(p) {
				z := zoneOf(p)
				disrupted[z] = append(disrupted[z], p.Get("metadata.name").String())
			}
		}
		set := in.Set()
		if r := set.Get("spec.replicas"); r.Exists() {
			start, name := set.Get("spec.ordinals.start").Int(), set.Get("metadata.name").String()
			for o := start; o < start+r.Int(); o++ {
				if n := name + "-" + strconv.FormatInt(o, 10); !pods[n].Exists() {
					disrupted[unknown] = append(disrupted[unknown], n+" missing")
				}
			}
		}
	}
	var holds []kit.Hold
	for _, d := range in.Disruptions() {
		a := d.Action
		if a.Errors.String() != "" {
			continue
		}
		pod, ok := pods[a.Name]
		if !ok || !kit.Healthy(pod) {
			continue // disrupted already: deleting it takes no other zone down
		}
		z := zoneOf(pod)
		if a.Index < in.From { // issued earlier in this sync (an in-place update: begun): its zone is down now
			disrupted[z] = append(disrupted[z], a.Name)
			continue
		}
		if other := otherZones(disrupted, z); len(other) > 0 {
			holds = append(holds, kit.Hold{Action: a.Index, Reason: "OtherZoneDisrupted", RetryAfter: retry,
				Message: "zone " + z + " waits: " + strings.Join(other, "; ")})
			continue
		}
		disrupted[z] = append(disrupted[z], a.Name)
	}
	return holds, nil
}

// otherZones describes the disrupted zones other than z, in order: "zone b: web-1, web-4 not healthy".
func otherZones(disrupted map[string][]string, z string) []string {
	var out []string
	for zone, pods := range disrupted {
		if zone != z && len(pods) > 0 {
			out = append(out, "zone "+zone+" is disrupted ("+strings.Join(pods, ", ")+")")
		}
	}
	sort.Strings(out)
	return out
}

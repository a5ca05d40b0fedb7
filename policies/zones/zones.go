// Command zones is a policy module (abi/POLICY.md): a set's pods are taken down one failure domain at a
// time (kubernetes/kubernetes#114010, #51907). A pod delete — a rollout's, a scale-down's, a failed pod's
// replacement — is held while a pod of the set in another zone is disrupted (not Ready, or terminating), so
// a rollout with maxUnavailable above 1, or Parallel pods, never has two zones down at once.
//
// A pod's zone is its node's topology.kubernetes.io/zone label (the host supplies the nodes the set's pods
// run on: describe's context "nodes"); a pod not yet on a node, or on a node without the label, is in the
// zone "unknown", and so is a replica whose pod is missing (deleted, not created again yet). The set
// chooses another node label with zones.ordinal.dev/label.
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
	nodeZone := map[string]string{}
	for _, n := range in.Context("nodes").Array() {
		if z := n.Get("metadata.labels." + gjson.Escape(label)); z.Exists() && z.String() != "" {
			nodeZone[n.Get("metadata.name").String()] = z.String()
		}
	}
	zoneOf := func(pod gjson.Result) string {
		if z, ok := nodeZone[pod.Get("spec.nodeName").String()]; ok {
			return z
		}
		return unknown
	}
	// The zones disrupted now: where a pod of the set is not Ready or is terminating (pods are the set's:
	// the snapshot's pods this set controls or may adopt; others' are not its concern).
	disrupted := map[string][]string{}
	pods := map[string]gjson.Result{}
	for _, p := range in.Snapshot.Get("pods").Array() {
		name := p.Get("metadata.name").String()
		pods[name] = p
		if !kit.Healthy(p) {
			z := zoneOf(p)
			disrupted[z] = append(disrupted[z], name)
		}
	}
	// A replica whose pod is gone (deleted, not yet created again) is a disruption too, in a zone not known
	// until its new pod is scheduled.
	set := in.Set()
	if r := set.Get("spec.replicas"); r.Exists() {
		start, name := set.Get("spec.ordinals.start").Int(), set.Get("metadata.name").String()
		for o := start; o < start+r.Int(); o++ {
			if n := name + "-" + strconv.FormatInt(o, 10); !pods[n].Exists() {
				disrupted[unknown] = append(disrupted[unknown], n+" missing")
			}
		}
	}
	var holds []kit.Hold
	for _, a := range in.Actions {
		if a.Verb != "delete" || a.Kind != "Pod" || a.Errors.String() != "" {
			continue
		}
		pod, ok := pods[a.Name]
		if !ok || !kit.Healthy(pod) {
			continue // disrupted already: deleting it takes no other zone down
		}
		z := zoneOf(pod)
		if a.Index < in.From { // issued earlier in this sync: its zone is down now
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

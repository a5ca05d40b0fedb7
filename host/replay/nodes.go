package replay

import (
	"encoding/json"
	"sort"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

const kindNode = "Node"

// nodeNames are the world's nodes by name, sorted: the replay's scheduler spreads pods over them.
func (e *engine) nodeNames() []string {
	var out []string
	for _, n := range e.nodes {
		out = append(out, jsonobj.GetStr(n, "metadata.name"))
	}
	sort.Strings(out)
	return out
}

// nodesFor are the nodes the set's pods run on, for the policies that ask for them.
func (e *engine) nodesFor(policies []policy.Module) []json.RawMessage {
	if len(e.nodes) == 0 || !policy.Wants(policies, abi.ContextNodes) {
		return nil
	}
	used := map[string]bool{}
	for _, n := range e.api.Names(world.KindPod) {
		used[jsonobj.GetStr(e.api.Get(world.KindPod, n), "spec.nodeName")] = true
	}
	var out []json.RawMessage
	for _, n := range e.nodes {
		name := jsonobj.GetStr(n, "metadata.name")
		if !used[name] {
			continue
		}
		labels := map[string]string{}
		for k, v := range jsonobj.GetObj(n, "metadata.labels") {
			if s, ok := v.(string); ok {
				labels[k] = s
			}
		}
		if b, err := policy.NodeJSON(name, labels); err == nil {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i]) < string(out[j]) })
	return out
}

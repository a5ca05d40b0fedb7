package statefulset

import (
	"sort"
	"strings"
)

// canonicalOrder applies the oracle's canonical order to writes whose upstream order comes
// from map iteration: consecutive PVC creates, and consecutive pod or revision patches, of one
// goroutine are sorted by natural name; consecutive claim events of one goroutine with the
// same type and reason are sorted by text. (Writes of burst goroutines are already issued in
// goroutine start order by runForAll.)
func canonicalOrder(p *plan) {
	mapKey := func(a *action) string {
		switch {
		case a.Verb == verbCreate && a.Kind == kindPVC, a.Verb == verbPatch && (a.Kind == kindPod || a.Kind == kindRevision):
			return a.Verb + "/" + a.Kind
		}
		return ""
	}
	acts := p.Actions
	for i := 0; i < len(acts); {
		k := mapKey(&acts[i])
		if k == "" {
			i++
			continue
		}
		j := i + 1
		for j < len(acts) && acts[j].gid == acts[i].gid && mapKey(&acts[j]) == k {
			j++
		}
		seg := acts[i:j]
		sort.SliceStable(seg, func(a, b int) bool { return naturalLess(seg[a].Name, seg[b].Name) })
		i = j
	}
	// Events follow their writes to where the sort put them.
	if moved := renumber(acts); moved != nil {
		for i := range p.Events {
			if a := p.Events[i].action; a >= 0 {
				p.Events[i].action = moved[a]
			}
		}
	}
	evs := p.Events
	claimKey := func(e *event) string {
		f := strings.Fields(e.Message)
		if len(f) > 1 && f[1] == "Claim" {
			return e.Type + "/" + e.Reason
		}
		return ""
	}
	for i := 0; i < len(evs); {
		k := claimKey(&evs[i])
		if k == "" {
			i++
			continue
		}
		j := i + 1
		for j < len(evs) && evs[j].gid == evs[i].gid && claimKey(&evs[j]) == k {
			j++
		}
		seg := evs[i:j]
		sort.SliceStable(seg, func(a, b int) bool {
			return seg[a].Type+" "+seg[a].Reason+" "+seg[a].Message < seg[b].Type+" "+seg[b].Reason+" "+seg[b].Message
		})
		i = j
	}
}

// renumber returns, by recording index, where each action is now; nil when none moved.
func renumber(acts []action) []int {
	for i := range acts {
		if acts[i].seq != i {
			moved := make([]int, len(acts))
			for j := range acts {
				moved[acts[j].seq] = j
			}
			return moved
		}
	}
	return nil
}

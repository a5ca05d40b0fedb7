package world

import "github.com/ordinal-dev/ordinal/internal/jsonobj"

// strategicMerge applies a strategic merge patch to a generic object, for the patches the
// controller sends: adopting and releasing pods and ControllerRevisions, which add or remove one
// entry of metadata.ownerReferences. Maps merge recursively, null deletes a key, lists whose items
// carry a "uid" (ownerReferences' patch merge key) merge by it and honour {"$patch":"delete"},
// {"$patch":"replace"} replaces a map, and any other list is replaced, as Kubernetes does for
// lists without a merge strategy.
func strategicMerge(orig Obj, patch Obj) Obj {
	if patch["$patch"] == "replace" {
		out := jsonobj.CloneObj(patch)
		delete(out, "$patch")
		return out
	}
	if orig == nil {
		orig = Obj{}
	}
	for k, pv := range patch {
		if k == "$patch" || len(k) > 0 && k[0] == '$' {
			continue // directives such as $setElementOrder only affect ordering
		}
		switch p := pv.(type) {
		case nil:
			delete(orig, k)
		case Obj:
			o, _ := orig[k].(Obj)
			orig[k] = strategicMerge(o, p)
		case []any:
			o, _ := orig[k].([]any)
			orig[k] = mergeList(o, p)
		default:
			orig[k] = jsonobj.Clone(pv)
		}
	}
	return orig
}

func mergeList(orig, patch []any) []any {
	keyed := len(patch) > 0
	for _, e := range patch {
		if jsonobj.GetStr(e, "uid") == "" {
			keyed = false
		}
	}
	if !keyed {
		return jsonobj.Clone(patch).([]any)
	}
	out := jsonobj.Clone(orig).([]any)
	if out == nil {
		out = []any{}
	}
	for _, e := range patch {
		pe := e.(Obj)
		uid := jsonobj.GetStr(pe, "uid")
		idx := -1
		for i, oe := range out {
			if jsonobj.GetStr(oe, "uid") == uid {
				idx = i
			}
		}
		if pe["$patch"] == "delete" {
			if idx >= 0 {
				out = append(out[:idx], out[idx+1:]...)
			}
			continue
		}
		if idx >= 0 {
			out[idx] = strategicMerge(out[idx].(Obj), pe)
		} else {
			out = append(out, jsonobj.CloneObj(pe))
		}
	}
	return out
}

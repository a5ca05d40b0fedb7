package policy

import (
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
)

// view is what a policy without describe's context "snapshot" is given of the snapshot: abi, now, features,
// the set, and of the pods, revisions and claims only those the plan's actions name (abi/POLICY.md
// section 2). It is made once per Run; each plan then costs what it names.
type view struct {
	head   []byte                                          // {"abi":1,"now":...,"features":...,"statefulSet":...
	object func(kind, name string) (json.RawMessage, bool) // the snapshot's object of that kind and name
}

var lists = map[string]string{abi.KindPod: "pods", abi.KindControllerRevision: "revisions", abi.KindPersistentVolumeClaim: "claims"}

// newView is the view of a snapshot. head and object, when the host has them (Run.Head, Run.Object), are
// taken as they are: the snapshot is then not read at all (a 1000-pod snapshot is 1.5 MB, and finding the
// set and the plan's objects in it cost more than the policies' calls).
func newView(snapshot, head []byte, object func(kind, name string) (json.RawMessage, bool)) *view {
	v := &view{object: object, head: head}
	if v.head == nil {
		v.head = headOf(snapshot)
	}
	if v.object == nil {
		index := map[string]map[string]string{}
		root := gjson.ParseBytes(snapshot)
		for kind, list := range lists {
			byName := map[string]string{}
			root.Get(list).ForEach(func(_, o gjson.Result) bool {
				byName[o.Get("metadata.name").String()] = o.Raw
				return true
			})
			index[kind] = byName
		}
		v.object = func(kind, name string) (json.RawMessage, bool) {
			raw, ok := index[kind][name]
			return json.RawMessage(raw), ok
		}
	}
	return v
}

// headOf reads the view's head out of the snapshot: abi, and now, features and the set where it has them.
func headOf(snapshot []byte) []byte {
	head := []byte(`{"abi":1`)
	for _, k := range []string{"now", "features", "statefulSet"} {
		if m := gjson.GetBytes(snapshot, k); m.Exists() {
			head = append(head, `,"`+k+`":`...)
			head = append(head, m.Raw...)
		}
	}
	return head
}

// of is the view for a plan: the head, then each list with the objects the plan's actions name, in plan order.
func (v *view) of(p *abi.Plan) []byte {
	out := append([]byte(nil), v.head...)
	for _, list := range []string{"pods", "revisions", "claims"} {
		out = append(out, `,"`+list+`":[`...)
		seen := map[string]bool{}
		first := true
		for _, a := range p.Actions {
			if lists[a.Kind] != list || seen[a.Name] {
				continue
			}
			seen[a.Name] = true
			if raw, ok := v.object(a.Kind, a.Name); ok {
				if !first {
					out = append(out, ',')
				}
				out = append(out, raw...)
				first = false
			}
		}
		out = append(out, ']')
	}
	return append(out, '}')
}

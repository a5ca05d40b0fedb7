package plan

import (
	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/inplace"
)

// InPlaceAt is the in-place update action i of p is part of (inplace.At), podRevision giving the revision
// label of the snapshot's pod of a name ("" for none; nil: no pods): the one reading of a host's plan for
// the policy host's spends and the replay's timeline alike.
func InPlaceAt(p *abi.Plan, i int, podRevision func(name string) string) (inplace.Update, bool) {
	return inplace.At(planPods{p, podRevision}, i)
}

// planPods is a plan and its snapshot's pods as inplace.At reads them.
type planPods struct {
	p        *abi.Plan
	revision func(name string) string
}

func (pp planPods) Len() int { return len(pp.p.Actions) }

func (pp planPods) Action(i int) (verb, kind, name string) {
	a := &pp.p.Actions[i]
	return a.Verb, a.Kind, a.Name
}

func (pp planPods) Marks(i int) (revision, inPlace string) {
	meta := gjson.GetBytes(pp.p.Actions[i].Object, "metadata")
	return stringMember(meta.Get("labels"), inplace.LabelRevision), stringMember(meta.Get("annotations"), inplace.Annotation)
}

func (pp planPods) PodRevision(name string) string {
	if pp.revision == nil {
		return ""
	}
	return pp.revision(name)
}

// stringMember is the string member key of object o ("" when absent or not a string).
func stringMember(o gjson.Result, key string) string {
	if v := o.Get(gjson.Escape(key)); v.Type == gjson.String {
		return v.Str
	}
	return ""
}

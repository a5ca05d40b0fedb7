package statefulset

import (
	"strconv"
	"strings"

	"github.com/ordinal-dev/ordinal/internal/inplaceready"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
	"github.com/ordinal-dev/ordinal/internal/qos"
)

// Extension in-place-update (extended module only; kubernetes/kubernetes#122926): with
// ordinal.dev/pod-update-policy on the set, a pod the rolling update would delete to move it to the update
// revision is instead updated in place when its revision's template and the update revision's differ only
// in what a running pod can change: container and init-container images, the template's labels and
// annotations (a pod update), and containers' CPU and memory (the pods/resize subresource). The pod keeps
// its UID, node and claims; its revision label moves with the update, so status, partition and history read
// it as upstream reads a recreated pod. Where and when pods move is upstream's (the same loops, the same
// budget); only how one moves changes.
//
// Availability stays honest without a readiness gate (RATIONALE.md): a pod the extension updated carries
// annotationInPlaceUpdate naming the revision it was moved to, and while that names its revision the pod
// counts as not Ready until every container's status reports the spec's image (and resources, and no
// resize pending), and as Ready only since the last of its containers started (inPlaceAvailability).

const (
	annotationPodUpdatePolicy = "ordinal.dev/pod-update-policy" // ReCreate | InPlaceIfPossible | InPlaceOnly
	// annotationInPlaceUpdate, on a pod: the revision its last in-place update moved it to
	annotationInPlaceUpdate = "ordinal.dev/in-place-update"

	policyReCreate          = "ReCreate"
	policyInPlaceIfPossible = "InPlaceIfPossible"
	policyInPlaceOnly       = "InPlaceOnly"

	// the condition InPlaceOnly sets while it holds a pod its change cannot update in place
	conditionInPlaceUpdateBlocked = "InPlaceUpdateBlocked"
	reasonNotInPlace              = "ChangeNotInPlace"

	// events
	reasonInPlaceUpdate  = "InPlaceUpdate"  // a pod is updated in place
	reasonRecreateNeeded = "RecreatingPod"  // InPlaceIfPossible recreates a pod, and says why
	reasonInPlaceBlocked = "InPlaceBlocked" // InPlaceOnly holds a pod, and says why
)

// podUpdatePolicy is the set's pod-update-policy: "" for ReCreate (upstream), absent, empty (enumAnnotation),
// or the faithful module. An invalid value holds every pod write (podsHeld) with a warning: whoever wrote it
// asked not to have pods recreated, so falling back to recreating them would do what they meant to avoid.
func (s *syncer) podUpdatePolicy() string {
	if !extendedBuild {
		return ""
	}
	switch v := s.set.Meta.Annotations[annotationPodUpdatePolicy]; v {
	case policyInPlaceIfPossible, policyInPlaceOnly:
		return v
	}
	return ""
}

// checkPodUpdatePolicy warns of, and holds pod writes for, a pod-update-policy that is none of the three.
func (s *syncer) checkPodUpdatePolicy() {
	v, ok := s.enumAnnotation(annotationPodUpdatePolicy)
	if !extendedBuild || !ok || v == policyReCreate || v == policyInPlaceIfPossible || v == policyInPlaceOnly {
		return
	}
	s.podsHeld = true
	s.event(eventWarning, "InvalidAnnotation", annotationPodUpdatePolicy+": "+strconv.Quote(v)+" is none of "+
		policyReCreate+", "+policyInPlaceIfPossible+", "+policyInPlaceOnly+": no pod is created, deleted or updated until it is fixed")
}

// inPlaceVerdict is whether pods of one revision can move to the update revision in place.
type inPlaceVerdict struct {
	ok    bool
	field string // why not: the first field that differs and that a pod cannot change in place
	// unknown: the pod's revision is not in the set's history (its ControllerRevision deleted), so what
	// changes cannot be told
	unknown string
	from    jsonv.Value
	to      jsonv.Value
	resize  bool // container resources change (a pods/resize write)
}

// verdictFor judges a move from revision name to the update revision (memoized per sync: a rollout has few
// revisions and many pods).
func (s *syncer) verdictFor(name string, update *revision, updateTemplate jsonv.Value) *inPlaceVerdict {
	if v, ok := s.inPlaceVerdicts[name]; ok {
		return v
	}
	v := &inPlaceVerdict{unknown: name}
	if r := s.revByKey[key(s.set.Meta.Namespace, name)]; r != nil {
		if from, err := s.revisionTemplate(r); err == nil {
			v.from, v.to, v.unknown = from, updateTemplate, ""
			v.ok, v.field, v.resize = inPlaceDiff(from, updateTemplate)
		}
	}
	if s.inPlaceVerdicts == nil {
		s.inPlaceVerdicts = map[string]*inPlaceVerdict{}
	}
	s.inPlaceVerdicts[name] = v
	return v
}

// why says why a pod cannot move in place, as the events and the condition say it.
func (v *inPlaceVerdict) why() string {
	if v.unknown != "" {
		return "its revision " + v.unknown + " is not in the set's history, so what changes cannot be told"
	}
	return v.field + " changes, which a pod cannot change in place"
}

// inPlaceDiff reports whether template from can become template to in place: equal once the labels, the
// annotations, the images and the resizable resources are set aside. field names the first other
// difference (spec.containers[0].env); resize says whether resources change.
func inPlaceDiff(from, to jsonv.Value) (ok bool, field string, resize bool) {
	a, b := from.Clone(), to.Clone()
	for _, t := range []*jsonv.Value{&a, &b} {
		if m := t.G("metadata"); m.K == jsonv.Object {
			m.Delete("labels")
			m.Delete("annotations")
			t.Set("metadata", m)
		}
	}
	spec := func(t *jsonv.Value, list string) []jsonv.Value {
		if cs := t.Path("spec", list); cs.K == jsonv.Array {
			return cs.A // shares the clone's items: changes below are the clone's
		}
		return nil
	}
	for _, list := range []string{"initContainers", "containers"} {
		ca, cb := spec(&a, list), spec(&b, list)
		for i := range ca {
			if i >= len(cb) || ca[i].K != jsonv.Object || cb[i].K != jsonv.Object ||
				ca[i].G("name").Str() != cb[i].G("name").Str() {
				break // the lists differ otherwise: the comparison below names it
			}
			ca[i].Delete("image")
			cb[i].Delete("image")
			if list == "containers" && !jsonv.Equal(ca[i].G("resources"), cb[i].G("resources")) &&
				resizable(ca[i].G("resources"), cb[i].G("resources")) {
				ca[i].Delete("resources")
				cb[i].Delete("resources")
				resize = true
			}
		}
	}
	if resize && qosClass(from) != qosClass(to) {
		return false, "spec.containers[*].resources (the pod's QoS class would change)", false
	}
	if f := firstDifference(a, b, "template"); f != "" {
		return false, strings.TrimPrefix(f, "template."), false
	}
	return true, "", resize
}

// resizable: a container's resources change only in CPU and memory values, requests and limits naming the
// same resources (what pods/resize accepts without changing the pod's QoS class, checked apart).
func resizable(from, to jsonv.Value) bool {
	for _, k := range []string{"requests", "limits"} {
		a, b := from.G(k), to.G(k)
		if a.K != b.K || (a.K != jsonv.Object && a.K != jsonv.Null) || len(a.O) != len(b.O) {
			return false
		}
		for _, m := range a.O {
			if m.Key != "cpu" && m.Key != "memory" || !b.Has(m.Key) {
				return false
			}
		}
	}
	for _, m := range from.O {
		if m.Key != "requests" && m.Key != "limits" {
			return false // claims and the like: not resized
		}
	}
	for _, m := range to.O {
		if m.Key != "requests" && m.Key != "limits" {
			return false
		}
	}
	return true
}

// qosClass is the QoS class of a pod made from template t (v1/qos.ComputePodQOS, internal/qos: the replay's
// API server refuses a resize that changes it with the same rule, as kube-apiserver does).
func qosClass(t jsonv.Value) string {
	var p qos.Pod
	if r, ok := t.Path("spec").Get("resources"); ok && r.K == jsonv.Object {
		lvl := inPlaceResources(r)
		p.Level = &lvl
	}
	for _, c := range t.Path("spec", "containers").A {
		p.Containers = append(p.Containers, inPlaceResources(c.G("resources")))
	}
	for _, c := range t.Path("spec", "initContainers").A {
		p.InitContainers = append(p.InitContainers, inPlaceResources(c.G("resources")))
	}
	return qos.Class(p)
}

// firstDifference names the first path at which a and b differ ("" when equal), in a's member order.
func firstDifference(a, b jsonv.Value, path string) string {
	if jsonv.Equal(a, b) {
		return ""
	}
	switch {
	case a.K == jsonv.Object && b.K == jsonv.Object:
		for _, m := range a.O {
			if f := firstDifference(m.Val, b.G(m.Key), path+"."+m.Key); f != "" {
				return f
			}
		}
		for _, m := range b.O {
			if !a.Has(m.Key) {
				return path + "." + m.Key
			}
		}
	case a.K == jsonv.Array && b.K == jsonv.Array && len(a.A) == len(b.A):
		for i := range a.A {
			if f := firstDifference(a.A[i], b.A[i], path+"["+strconv.Itoa(i)+"]"); f != "" {
				return f
			}
		}
	}
	return path
}

// replaceOldPod moves the pod of slot i, at a revision other than update, toward the update revision as the
// rolling update's step: upstream deletes it (the next sync recreates it); with pod-update-policy it is
// updated in place where its change allows. held: InPlaceOnly keeps the pod, the pass stops there.
func (s *syncer) replaceOldPod(replicas *replicaSlots, i int, update *revision) (held bool, err error) {
	p := replicas.at(i)
	policy := s.podUpdatePolicy()
	if policy == "" || !p.isCreated() || p.isTerminating() {
		return false, s.deletePod(p)
	}
	v := s.verdictFor(p.revisionLabel(), update, replicas.updateTemplate)
	if !v.ok {
		if policy == policyInPlaceOnly {
			return true, nil // inPlaceCondition said why
		}
		// the event reports the delete that follows (deletePod issues it first): a host reads which pod is
		// recreated, and why, from the event's action (abi/README.md, Events), not from its words
		s.eventOf(len(s.plan.Actions), eventNormal, reasonRecreateNeeded, "Recreating Pod "+p.Meta.Name+" of StatefulSet "+s.set.Meta.Name+
			" to move it to revision "+update.Meta.Name+": "+v.why())
		return false, s.deletePod(p)
	}
	return false, s.updateInPlace(p, v, update.Meta.Name)
}

// updateInPlace writes the in-place update of p: where resources change, first a resize of the pod (the
// pods/resize subresource, which takes only container resources), then an update of the pod (images,
// template labels and annotations, the revision label, the in-place record, and the resources the resize
// gave it). Both carry the snapshot's resourceVersion; the host's applier sends the update at the version its
// own resize returned (host/plan, own writes), so a change by anyone else in between is still a Conflict.
// The resize comes first so that a pod labelled with the update revision always runs its resources: a
// refused update leaves a pod at its old revision with new resources, which the next sync moves again.
func (s *syncer) updateInPlace(p *pod, v *inPlaceVerdict, update string) error {
	obj := withTypeMeta(p.obj().Clone(), "v1", kindPod, p.Meta.Namespace)
	spec := obj.G("spec")
	var resized []string
	if v.resize {
		cs := spec.G("containers")
		for i := range cs.A {
			want := containerNamed(v.to.Path("spec", "containers"), cs.A[i].G("name").Str())
			if jsonv.Equal(cs.A[i].G("resources"), want.G("resources")) {
				continue
			}
			resized = append(resized, cs.A[i].G("name").Str())
			if r, ok := want.Get("resources"); ok {
				cs.A[i].Set("resources", r)
			} else {
				cs.A[i].Delete("resources")
			}
		}
		obj.Set("spec", spec)
	}
	var changed []string
	for _, list := range []string{"initContainers", "containers"} {
		cs := spec.G(list)
		for i := range cs.A {
			name := cs.A[i].G("name").Str()
			want := containerNamed(v.to.Path("spec", list), name)
			if img := want.G("image"); img.K == jsonv.String && img.Str() != cs.A[i].G("image").Str() {
				changed = append(changed, name+" "+img.Str())
			}
		}
	}
	what := "images " + strings.Join(changed, ", ")
	if len(changed) == 0 {
		what = "labels and annotations"
	}
	if len(resized) > 0 {
		what += "; resources of " + strings.Join(resized, ", ")
	}
	s.event(eventNormal, reasonInPlaceUpdate, "Updating Pod "+p.Meta.Name+" of StatefulSet "+s.set.Meta.Name+
		" in place to revision "+update+": "+what)
	var predicted error
	if !s.podExistsAt(key(p.Meta.Namespace, p.Meta.Name)) {
		predicted = errNotFound(resPods, p.Meta.Name)
	}
	if len(resized) > 0 {
		resize := obj.Clone()
		err := s.issue(action{Verb: verbResize, Kind: kindPod, Namespace: p.Meta.Namespace, Name: p.Meta.Name, Object: &resize}, predicted)
		if err != nil {
			s.podEvent("resize", p.Meta.Name, err)
			return err
		}
	}
	meta := obj.G("metadata")
	labels := movedStrings(meta.G("labels"), v.from.Path("metadata", "labels"), v.to.Path("metadata", "labels"), labelRevision, update)
	for _, k := range []string{labelPodName, labelPodIndex} { // the pod's own: initIdentity overrides a template's
		if l, ok := meta.G("labels").Get(k); ok {
			labels.Set(k, l)
		} else {
			labels.Delete(k)
		}
	}
	meta.Set("labels", labels)
	meta.Set("annotations", movedStrings(meta.G("annotations"), v.from.Path("metadata", "annotations"),
		v.to.Path("metadata", "annotations"), annotationInPlaceUpdate, update))
	obj.Set("metadata", meta)
	for _, list := range []string{"initContainers", "containers"} {
		cs := spec.G(list)
		for i := range cs.A {
			want := containerNamed(v.to.Path("spec", list), cs.A[i].G("name").Str())
			if img := want.G("image"); img.K == jsonv.String {
				cs.A[i].Set("image", img)
			}
		}
	}
	obj.Set("spec", spec)
	err := s.issue(action{Verb: verbUpdate, Kind: kindPod, Namespace: p.Meta.Namespace, Name: p.Meta.Name, Object: &obj}, predicted)
	s.podEvent("update", p.Meta.Name, err)
	return err
}

// containerNamed is the container of list named name (null if none).
func containerNamed(list jsonv.Value, name string) jsonv.Value {
	for _, c := range list.A {
		if c.G("name").Str() == name {
			return c
		}
	}
	return jsonv.NullV()
}

// movedStrings is a pod's labels or annotations moved from template from's to template to's: what from
// set and the pod still has as from set it is dropped, to's are set, and key is set to value.
func movedStrings(pod, from, to jsonv.Value, key, value string) jsonv.Value {
	out := jsonv.EmptyObj()
	for _, m := range pod.O {
		if f, ok := from.Get(m.Key); ok && jsonv.Equal(f, m.Val) {
			if _, keep := to.Get(m.Key); !keep {
				continue
			}
		}
		out.O = append(out.O, m)
	}
	for _, m := range to.O {
		out.Set(m.Key, m.Val)
	}
	out.Set(key, jsonv.Str(value))
	return out
}

// inPlaceCondition keeps InPlaceOnly's condition: True, naming the highest-ordinal pod the rolling update
// has to move whose change cannot be made in place (with a Warning event when it first says so), removed
// when no such pod is left. A set whose policy is not InPlaceOnly has none.
func (s *syncer) inPlaceCondition(status *setStatus, replicas *replicaSlots, update *revision) {
	if !extendedBuild {
		return
	}
	blocked := ""
	if s.podUpdatePolicy() == policyInPlaceOnly && s.set.StrategyType == strategyRolling {
		updateMin := 0
		if s.set.HasRollingUpdate {
			updateMin = s.partitionSlot()
		}
		for i := replicas.len() - 1; i >= updateMin && blocked == ""; i-- {
			p := replicas.pods[i]
			if p == nil || !p.isCreated() || p.isTerminating() || p.revisionLabel() == update.Meta.Name {
				continue
			}
			if v := s.verdictFor(p.revisionLabel(), update, replicas.updateTemplate); !v.ok {
				blocked = "StatefulSet " + strconv.Quote(s.set.Meta.Name) + " holds Pod " + p.Meta.Name + " at revision " +
					p.revisionLabel() + ": " + v.why() + ", and " +
					annotationPodUpdatePolicy + " is " + policyInPlaceOnly + "."
			}
		}
	}
	if blocked == "" {
		removeConditions(status, conditionInPlaceUpdateBlocked, reasonNotInPlace)
		return
	}
	if c := getCondition(status, conditionInPlaceUpdateBlocked); c == nil || c.Status != "True" || c.Message != blocked {
		s.event(eventWarning, reasonInPlaceBlocked, blocked)
	}
	s.setCondition(status, conditionInPlaceUpdateBlocked, "True", reasonNotInPlace, blocked)
}

// inPlaceAvailability is pod p as the sync reads its availability: unchanged unless the extension updated
// it in place to the revision it is at (annotationInPlaceUpdate, inplaceready.Applies). Then it is read by
// inplaceready.Judge, the one reading the host's `kubectl ordinal status` uses too: not Ready while a
// container's status still reports another image than its spec (the kubelet has not restarted it yet),
// other CPU or memory than its spec, or a resize pending or in progress; and once Ready, Ready only since the
// last of its containers started, so minReadySeconds counts from the restart even when the kubelet's Ready
// condition never went False. Init containers that ran to completion are not restarted by an image change and
// are not waited for; sidecars (restartPolicy Always) are. Where the kubelet reports the pod generation its
// status reflects (status.observedGeneration), a status behind the pod's generation counts as not Ready: it
// says nothing of the update yet.
func inPlaceAvailability(p *pod) *pod {
	if !extendedBuild || !inplaceready.Applies(p.rev, p.inPlaceRev) || !p.isCreated() {
		return p
	}
	v := inplaceready.Judge(inPlacePod(*p.obj()))
	c := *p
	if v.Pending {
		c.Ready = false
	} else if c.Ready && v.LastStart.After(c.ReadySince) {
		c.ReadySince = v.LastStart
	}
	return &c
}

// inPlacePod reads what inplaceready.Judge reads of a pod.
func inPlacePod(o jsonv.Value) inplaceready.Pod {
	var ip inplaceready.Pod
	for _, c := range o.Path("spec", "containers").A {
		ip.Containers = append(ip.Containers, inPlaceContainer(c))
	}
	for _, c := range o.Path("spec", "initContainers").A {
		if c.G("restartPolicy").Str() == "Always" {
			ip.Containers = append(ip.Containers, inPlaceContainer(c))
		}
	}
	for _, list := range []string{"containerStatuses", "initContainerStatuses"} {
		for _, st := range o.Path("status", list).A {
			s := inplaceready.Status{Name: st.G("name").Str(), Image: st.G("image").Str(), ImageID: st.G("imageID").Str()}
			if t, err := parseTime(st.Path("state", "running", "startedAt").Str()); err == nil {
				s.StartedAt = t
			}
			if r, ok := st.Get("resources"); ok {
				rs := inPlaceResources(r)
				s.Resources = &rs
			}
			ip.Statuses = append(ip.Statuses, s)
		}
	}
	for _, c := range o.Path("status", "conditions").A {
		if t := c.G("type").Str(); (t == "PodResizePending" || t == "PodResizeInProgress") && c.G("status").Str() == "True" {
			ip.Resizing = true
		}
	}
	ip.Generation, ip.ObservedGeneration = wholeNumber(o.Path("metadata", "generation")), wholeNumber(o.Path("status", "observedGeneration"))
	return ip
}

// wholeNumber is v as an int64, 0 when it is not a JSON integer that fits (absent, or not a number: as 0, what
// the API server would not have written).
func wholeNumber(v jsonv.Value) int64 {
	if v.K != jsonv.Number {
		return 0
	}
	n, err := strconv.ParseInt(v.S, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func inPlaceContainer(c jsonv.Value) inplaceready.Container {
	return inplaceready.Container{Name: c.G("name").Str(), Image: c.G("image").Str(), Resources: inPlaceResources(c.G("resources"))}
}

func inPlaceResources(r jsonv.Value) inplaceready.Resources {
	return inplaceready.Resources{RequestCPU: r.Path("requests", "cpu").Str(), RequestMemory: r.Path("requests", "memory").Str(),
		LimitCPU: r.Path("limits", "cpu").Str(), LimitMemory: r.Path("limits", "memory").Str()}
}

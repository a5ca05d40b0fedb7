package replay

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/inplaceready"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The world a replay starts from: its initial objects (a scenario's manifests or a snapshot's objects),
// their uids and resourceVersions, and the kubelet's first view of them.
// initialUID gives objects that exist before the replay starts a name-derived uid, distinct from
// the counter uids of objects the replay creates.
func initialUID(kind, name string) string {
	h := fnv.New64a()
	h.Write([]byte(kind + "/" + name))
	s := h.Sum64()
	return fmt.Sprintf("%08x-%04x-4%03x-9%03x-%012x", uint32(s>>32)|1, (s>>16)&0xffff, s&0xfff, (s>>40)&0xfff, s&0xffffffffffff)
}

// initWorld builds the initial world: from a snapshot as it is, or from manifests as if they had
// been created just before the start (defaulted, existing pods Running and Ready unless they carry
// a status, claims Bound unless they carry a phase; uid, generation, resourceVersion and
// creationTimestamp made up only where the manifests leave them out).
func (e *engine) initWorld() error {
	if e.sc.snapshot != nil { // and the budgets the scenario it settled from had (Settled)
		for _, m := range e.sc.Manifests {
			if o, err := jsonobj.DecodeObj(m); err == nil {
				switch jsonobj.GetStr(o, "kind") {
				case kindPDB:
					e.pdbs = append(e.pdbs, o)
				case kindNode:
					e.nodes = append(e.nodes, o)
				}
			}
		}
		return e.loadSnapshot(e.sc.snapshot)
	}
	var ss Obj
	var others []Obj
	for _, m := range e.sc.Manifests {
		o, _ := jsonobj.DecodeObj(m)
		switch jsonobj.GetStr(o, "kind") {
		case world.KindSet:
			ss = o
		case kindPDB:
			if err := validatePDB(o); err != nil {
				return &InvalidWorldError{Err: err}
			}
			e.pdbs = append(e.pdbs, o)
		case kindNode:
			e.nodes = append(e.nodes, o)
		default:
			others = append(others, o)
		}
	}
	kube.DefaultStatefulSet(ss)
	if err := world.APIAnswer(kube.ValidateStatefulSet(ss, kube.GatesOf(e.sc.Features))); err != nil {
		return &InvalidWorldError{Err: err}
	}
	jsonobj.SetDefault(ss, "apiVersion", "apps/v1")
	jsonobj.SetDefault(ss, "kind", "StatefulSet")
	ns := jsonobj.GetStr(ss, "metadata.namespace")
	e.api = world.NewAPIServer(ns, e.clock)
	e.api.Gates = kube.GatesOf(e.sc.Features)
	// What the manifest says stands; only what it leaves out is made up.
	md := jsonobj.Ensure(ss, "metadata")
	jsonobj.SetDefault(md, "uid", initialUID(world.KindSet, jsonobj.GetStr(md, "name")))
	jsonobj.SetDefault(md, "resourceVersion", "1000")
	jsonobj.SetDefault(md, "generation", jsonobj.Num(1))
	jsonobj.SetDefault(md, "creationTimestamp", e.start.Format(time.RFC3339))
	e.api.Preload(world.KindSet, "", ss)
	now := e.start.Format(time.RFC3339)
	for i, o := range others {
		kind := jsonobj.GetStr(o, "kind")
		name := jsonobj.GetStr(o, "metadata.name")
		world.StripTypeMeta(o)
		omd := jsonobj.Ensure(o, "metadata")
		jsonobj.SetDefault(omd, "uid", initialUID(kind, name))
		jsonobj.SetDefault(omd, "resourceVersion", fmt.Sprint(1001+i))
		jsonobj.SetDefault(omd, "creationTimestamp", now)
		switch kind {
		case world.KindPod:
			hasStatus := o["status"] != nil
			kube.DefaultPod(o, ns)
			jsonobj.SetDefault(omd, "generation", jsonobj.Num(1))
			if !hasStatus || jsonobj.GetStr(o, "status.phase") == "" {
				world.SetRunning(o, e.start, true)
			}
		case world.KindClaim:
			phase := jsonobj.GetStr(o, "status.phase")
			kube.DefaultClaim(o, ns)
			if phase == "" { // a claim that existed before the start is Bound unless it says otherwise
				jsonobj.Set(o, "status.phase", "Bound")
			}
		}
		if e.api.Get(kind, name) != nil {
			return fmt.Errorf("manifests: duplicate %s %s", kind, name)
		}
		e.api.Preload(kind, name, o)
	}
	if e.cfg.Model != ModelTick { // as for a snapshot: no uid the manifests gave is handed out again
		e.api.ContinueUIDs()
	}
	return nil
}

func (e *engine) loadSnapshot(s Obj) error {
	ss := jsonobj.CloneObj(jsonobj.GetObj(s, "statefulSet"))
	// A set the API server could not hold (a name like Web_1, a bad spec) is no world to replay; checked
	// on a defaulted copy, as the API server validates what it stores, and the world is left as given.
	check := jsonobj.CloneObj(ss)
	kube.DefaultStatefulSet(check)
	if err := world.APIAnswer(kube.ValidateStatefulSet(check, kube.GatesOf(e.sc.Features))); err != nil {
		return &InvalidWorldError{Err: fmt.Errorf("the snapshot's StatefulSet: %w", err)}
	}
	ns := jsonobj.GetStr(ss, "metadata.namespace")
	if ns == "" {
		ns = "default"
		jsonobj.Ensure(ss, "metadata")["namespace"] = ns
	}
	e.api = world.NewAPIServer(ns, e.clock)
	e.api.Gates = kube.GatesOf(e.sc.Features)
	e.api.Preload(world.KindSet, "", ss)
	for key, kind := range map[string]string{"pods": world.KindPod, "revisions": world.KindRevision, "claims": world.KindClaim} {
		for _, v := range jsonobj.GetArr(s, key) {
			o, ok := v.(Obj)
			if !ok {
				continue
			}
			o = jsonobj.CloneObj(o)
			if jsonobj.GetStr(o, "metadata.namespace") == "" {
				jsonobj.Set(o, "metadata.namespace", ns)
			}
			e.api.Preload(kind, jsonobj.GetStr(o, "metadata.name"), o)
		}
	}
	// Continue the resourceVersion sequence above what the snapshot holds.
	e.api.ContinueResourceVersions()
	if e.cfg.Model != ModelTick {
		e.api.ContinueUIDs()
	}
	return nil
}

// seedKubelet gives pods that already exist their pending transitions: Pending pods start,
// terminating pods go away, pods updated in place whose containers do not run the update yet restart or
// resize (the tick model does this through its own rules).
func (e *engine) seedKubelet() {
	if e.cfg.Model == ModelTick {
		return
	}
	var revisions [][]byte // the revisions' data, encoded once, for the first pod mid in-place update
	for _, n := range e.api.Names(world.KindPod) {
		p := e.api.Get(world.KindPod, n)
		if jsonobj.Get(p, "metadata.deletionTimestamp") != nil {
			e.kube.PodDeleted(n)
		} else if jsonobj.GetStr(p, "status.phase") == "Pending" && !imagePullFailing(p) {
			e.kube.PodCreated(n)
		} else if restart, pending, v := inPlacePending(p); pending {
			e.kube.PodSpecChanged(n, restart)
			if revisions == nil {
				revisions = e.revisionData()
			}
			if kube.OtherTagWait(v, revisions) {
				e.api.Note("kubelet", world.ReasonImageByAnotherTag, world.KindPod, n, "pod %s: container %s reports image %s, no revision's image, for %s: "+
					"the replay restarts it; on the cluster the runtime may name %s by another of its tags, and the pod then waits for good "+
					"(pin the image by digest, or delete the pod)", n, v.Container, v.Has, v.Want, v.Want)
			}
		}
	}
}

// revisionData is the data of the world's revisions, as kube.OtherTagWait reads them.
func (e *engine) revisionData() [][]byte {
	var out [][]byte
	for _, n := range e.api.Names(world.KindRevision) {
		out = append(out, mustJSON(jsonobj.Get(e.api.Get(world.KindRevision, n), "data")))
	}
	return out
}

// imagePullFailing: a container of pod p waits for an image its kubelet failed to pull (kubelet's
// ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull). Such a pod of a live world stays
// Pending: started by the model, a preview of the edit that fixes a broken release had the broken pod come
// up, and its OrderedReady rollout complete at once, where the live controller waits on that pod for good.
func imagePullFailing(p Obj) bool {
	for _, key := range []string{"status.initContainerStatuses", "status.containerStatuses"} {
		for _, c := range jsonobj.GetArr(p, key) {
			switch jsonobj.GetStr(c, "state.waiting.reason") {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull":
				return true
			}
		}
	}
	return false
}

// inPlacePending: pod p was updated in place (its record names its revision: a world taken mid-rollout) and,
// by the module's own rule, does not run that update yet; restart: its containers are to restart (a new
// image), else only its status is behind (resources, a resize, its generation); v is the module's verdict.
func inPlacePending(p Obj) (restart, pending bool, v inplaceready.Verdict) {
	// only a pod whose record names its revision is decoded whole (every pod of a 1000-pod world was)
	record, _ := jsonobj.GetObj(p, "metadata.annotations")[abi.AnnotationInPlaceUpdate].(string)
	if !inplaceready.Applies(jsonobj.GetStr(p, "metadata.labels.controller-revision-hash"), record) {
		return false, false, v
	}
	var typed corev1.Pod
	if json.Unmarshal(mustJSON(p), &typed) != nil {
		return false, false, v
	}
	v, ok := kube.InPlace(&typed)
	if !ok || !v.Pending {
		return false, false, v
	}
	return v.Waiting == inplaceready.WaitImage || v.Waiting == inplaceready.WaitStatus, true, v
}

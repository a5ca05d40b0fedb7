// Package inplaceready is extension in-place-update's reading of a pod it updated in place: whether it runs
// its spec yet, and so whether it can count as Ready (docs/extensions.md; RATIONALE.md, "An in-place
// update is judged from the pod's own status"). It is written once for the module and the host: the module
// (guest/statefulset, over its own JSON) decides a pod's availability with it, and `kubectl ordinal status`
// (host/rollout, over client-go's types, through host/kube) says with it which pods are mid-update and what
// they wait for. Each reads its pod into a Pod and calls Judge; neither has a rule of its own, so the two
// cannot disagree about a pod. (Which writes of a plan are an in-place update is abi/inplace's question.)
//
// The module is built by TinyGo: this package uses nothing but strconv, strings, time, internal/quantity and
// internal/qos.
package inplaceready

import (
	"strconv"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/internal/qos"
	"github.com/ordinal-dev/ordinal/internal/quantity"
)

// Applies reports whether a pod is read by Judge: its in-place record (the annotation
// ordinal.dev/in-place-update, the revision its last in-place update moved it to) names the revision its
// controller-revision-hash label says it is at. A pod moved since by other means (recreated, relabelled) is
// read as upstream reads it.
func Applies(revision, record string) bool { return revision != "" && record == revision }

// Resources are a container's CPU and memory requests and limits, each a quantity as the object spells it
// ("" where none is given): what the QoS class is computed from too.
type Resources = qos.Resources

// Container is one container the pod's readiness waits for: each of its spec's containers and each sidecar
// (an init container with restartPolicy Always). Init containers that ran to completion are not restarted by
// an image change, and are not waited for.
type Container struct {
	Name, Image string
	Resources   Resources
}

// Status is a container's status as the kubelet reports it.
type Status struct {
	Name, Image string
	// ImageID is the image the runtime runs, by digest (repository@sha256:...), as the kubelet reports it.
	ImageID string
	// StartedAt is when its running state began (zero: not running, or not readable).
	StartedAt time.Time
	// Resources are what the status reports the container runs with; nil when it reports none (the kubelet
	// reports a default for what the spec does not ask for, which is not compared).
	Resources *Resources
}

// Pod is what Judge reads of a pod.
type Pod struct {
	Containers []Container
	Statuses   []Status // containerStatuses and initContainerStatuses, matched by name
	// Resizing: a PodResizePending or PodResizeInProgress condition of the pod is True.
	Resizing bool
	// Generation and ObservedGeneration are the pod's metadata.generation, which kube-apiserver raises with
	// each change of its spec, and its status.observedGeneration, the generation the kubelet's status
	// reflects (Pod generation, KEP-5067). While the kubelet is behind, the statuses say nothing of the update
	// yet: a container still running the old image may be reported by its image's ID, which no spec can be
	// compared with. 0 ObservedGeneration: a kubelet that does not report it (older, or simulated), and only
	// the statuses are read.
	Generation, ObservedGeneration int64
}

// What a pending pod waits for.
const (
	WaitStatus    = "status"    // the container has no status yet
	WaitImage     = "image"     // its status reports another image than its spec (the kubelet has not restarted it)
	WaitResources = "resources" // its status reports other CPU or memory than its spec
	WaitResize    = "resize"    // the pod's resize is pending or in progress
	// WaitGeneration: the kubelet's status reflects an earlier spec of the pod (ObservedGeneration, Has,
	// behind Generation, Want)
	WaitGeneration = "generation"
)

// Verdict is a pod's in-place update as its statuses tell it.
type Verdict struct {
	// Pending: the pod does not run its spec yet, and counts as not Ready. Container, Waiting, Resource, Has
	// and Want say why: the first container that does not (spec order, then sidecars), what differs (for
	// resources, which one: "limits.memory"), what its status reports ("" for none) and what its spec asks
	// ("" Container for a resize pending on the pod).
	Pending                      bool
	Container, Waiting, Resource string
	Has, Want                    string
	// LastStart is the latest start among the containers waited for: a pod that runs its spec is Ready only
	// since then, so minReadySeconds counts from its restart.
	LastStart time.Time
}

// Judge reads a pod the extension updated in place (Applies): not Ready while the kubelet's status reflects
// an earlier spec of the pod (where the kubelet reports which), a container's status still reports another
// image than its spec (the kubelet has not restarted it yet), other CPU or memory than its spec, or a resize
// is pending or in progress; once it runs its spec, Ready only since the last of its containers started.
func Judge(p Pod) Verdict {
	var v Verdict
	pending := func(container, waiting, resource, has, want string) {
		if !v.Pending {
			v.Pending, v.Container, v.Waiting, v.Resource, v.Has, v.Want = true, container, waiting, resource, has, want
		}
	}
	if p.ObservedGeneration > 0 && p.ObservedGeneration < p.Generation {
		pending("", WaitGeneration, "", strconv.FormatInt(p.ObservedGeneration, 10), strconv.FormatInt(p.Generation, 10))
	}
	for _, c := range p.Containers {
		st, ok := statusOf(p.Statuses, c.Name)
		if !ok {
			pending(c.Name, WaitStatus, "", "", c.Image)
			continue
		}
		if !SameImage(st.Image, c.Image) && !PinnedDigest(st.ImageID, c.Image) {
			pending(c.Name, WaitImage, "", st.Image, c.Image)
			continue
		}
		if st.StartedAt.After(v.LastStart) {
			v.LastStart = st.StartedAt
		}
		if st.Resources != nil {
			if resource, has, want, same := sameResources(*st.Resources, c.Resources); !same {
				pending(c.Name, WaitResources, resource, has, want)
			}
		}
	}
	if p.Resizing {
		pending("", WaitResize, "", "", "")
	}
	return v
}

func statusOf(list []Status, name string) (Status, bool) {
	for _, s := range list {
		if s.Name == name {
			return s, true
		}
	}
	return Status{}, false
}

// sameResources: a container's status runs the CPU and memory its spec asks for; else the first resource
// that differs ("requests.cpu"), as the status has it ("" for none) and as the spec wants it.
func sameResources(status, spec Resources) (resource, has, want string, same bool) {
	for _, r := range []struct {
		name, has, want, unit string
	}{
		{"requests.cpu", status.RequestCPU, spec.RequestCPU, "cpu"},
		{"requests.memory", status.RequestMemory, spec.RequestMemory, "memory"},
		{"limits.cpu", status.LimitCPU, spec.LimitCPU, "cpu"},
		{"limits.memory", status.LimitMemory, spec.LimitMemory, "memory"},
	} {
		if r.want == "" {
			continue // not asked for: the kubelet reports a default
		}
		if r.has == "" || !SameQuantity(r.unit, r.has, r.want) {
			return r.name, r.has, r.want, false
		}
	}
	return "", "", "", true
}

// SameQuantity compares two quantities of resource r (CPU in thousandths, others whole), as the module
// reads them (internal/quantity).
func SameQuantity(r, a, b string) bool {
	if a == b {
		return true
	}
	read := quantity.Value
	if r == "cpu" {
		read = quantity.MilliValue
	}
	x, ok1 := read(a)
	y, ok2 := read(b)
	return ok1 && ok2 && x == y
}

// SameImage compares a container status's image with its spec's as a container runtime reports it: a Docker
// Hub name may come back with its registry and library/ spelled out, an untagged one with :latest. A status
// naming the image by its ID (sha256:...) cannot be compared and is taken as the spec's.
func SameImage(status, spec string) bool {
	if status == spec || strings.HasPrefix(status, "sha256:") {
		return true
	}
	return NormalImage(status) == NormalImage(spec)
}

// PinnedDigest: spec pins its image by digest (name@sha256:...) and imageID, a status's image by digest, has
// that digest. A runtime reports an image by one of its tags when it has any (containerd: its first), so
// an image pinned by digest comes back as a tag only SameImage cannot match; its digest says it runs.
func PinnedDigest(imageID, spec string) bool {
	i, j := strings.LastIndexByte(spec, '@'), strings.LastIndexByte(imageID, '@')
	return i >= 0 && j >= 0 && len(spec) > i+1 && spec[i+1:] == imageID[j+1:]
}

// OtherTag: a status's image and its spec's name one repository by two tags (app:latest and app:2). A runtime
// reports an image by one of its tags (containerd: the first, issue kubernetes/kubernetes#51017), so a
// container restarted on the spec's image may be reported by another tag of it; but a container the kubelet
// has not restarted yet is reported by a tag of the old image too, and nothing in the pod tells the two apart:
// the status's imageID is a digest no tag can be compared with, and the in-place record keeps no digest from
// before the update. Judge keeps such a pod waiting (WaitImage), since counting it would count a container
// that may still restart; hosts say why with this (docs/in-place-updates.md, "An image reported by another
// tag").
func OtherTag(status, spec string) bool {
	a, b := NormalImage(status), NormalImage(spec)
	an, aok := taggedName(a)
	bn, bok := taggedName(b)
	return a != b && aok && bok && an == bn
}

// taggedName is the name of a normalized reference with a tag (not a digest).
func taggedName(ref string) (string, bool) {
	if strings.IndexByte(ref, '@') >= 0 {
		return "", false
	}
	i := strings.LastIndexByte(ref, ':')
	if i < strings.LastIndexByte(ref, '/') {
		return "", false
	}
	return ref[:i], true
}

// NormalImage spells an image reference out: registry (docker.io for none), library/ for a Docker Hub
// official image, and :latest for no tag or digest.
func NormalImage(ref string) string {
	name, suffix := ref, ""
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		name, suffix = ref[:i], ref[i:]
	} else if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		name, suffix = ref[:i], ref[i:]
	} else {
		suffix = ":latest"
	}
	first, _, found := strings.Cut(name, "/")
	if !found || !strings.ContainsAny(first, ".:") && first != "localhost" {
		name = "docker.io/" + name // no registry: Docker Hub's
	}
	if rest, ok := strings.CutPrefix(name, "index.docker.io/"); ok {
		name = "docker.io/" + rest
	}
	if rest, ok := strings.CutPrefix(name, "docker.io/"); ok && !strings.Contains(rest, "/") {
		name = "docker.io/library/" + rest
	}
	return name + suffix
}

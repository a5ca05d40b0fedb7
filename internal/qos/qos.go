// Package qos is a pod's QoS class as kube-apiserver computes it (pkg/apis/core/v1/helper/qos,
// ComputePodQOS, v1.37), written once for the module and the hosts: extension in-place-update
// (guest/statefulset) resizes a pod in place only when its class stays, and the replay's API server
// (host/replay/world) records a new pod's class and refuses a resize that changes it, as kube-apiserver
// does ("Pod QOS Class may not change as a result of resizing"). Two rules would disagree on some pod, and
// the module would then plan a resize the world accepts and the cluster refuses, or the other way round.
//
// The module is built by TinyGo: this package uses nothing but internal/quantity.
package qos

import (
	"math"

	"github.com/ordinal-dev/ordinal/internal/quantity"
)

// The classes.
const (
	BestEffort = "BestEffort"
	Burstable  = "Burstable"
	Guaranteed = "Guaranteed"
)

// Resources are CPU and memory requests and limits, each a quantity as the object spells it ("" where none
// is given).
type Resources struct {
	RequestCPU, RequestMemory, LimitCPU, LimitMemory string
}

// Pod is what the class is computed from: the pod-level resources (spec.resources; nil when the pod has
// none) and those of each of its containers and init containers.
type Pod struct {
	Level          *Resources
	Containers     []Resources
	InitContainers []Resources
}

// Class is the pod's QoS class (ComputePodQOS), of the pod as the API server stores it: a request left out
// where its limit is given is the limit (SetDefaults_Pod), so a pod template reads as the pod made from it.
// With pod-level resources, they alone decide (PodLevelResources, on by default since v1.34). Else the
// requests and the limits are summed over the containers and init containers, counting only positive
// quantities: BestEffort when both sums are empty; Guaranteed when every container limits both CPU and
// memory and the summed requests equal the summed limits, resource by resource; Burstable otherwise. A
// quantity that cannot be read counts as none (the API server would not have stored it).
func Class(p Pod) string {
	requests, limits := sums{}, sums{}
	guaranteed := true
	if p.Level != nil {
		lvl := p.levelDefaulted()
		requests.add(lvl.RequestCPU, lvl.RequestMemory)
		if !limits.add(lvl.LimitCPU, lvl.LimitMemory) {
			guaranteed = false
		}
	} else {
		for _, list := range [][]Resources{p.Containers, p.InitContainers} {
			for _, c := range list {
				c = c.defaulted()
				requests.add(c.RequestCPU, c.RequestMemory)
				if !limits.add(c.LimitCPU, c.LimitMemory) {
					guaranteed = false
				}
			}
		}
	}
	switch {
	case !requests.cpu.set && !requests.memory.set && !limits.cpu.set && !limits.memory.set:
		return BestEffort
	case guaranteed && requests == limits:
		return Guaranteed
	}
	return Burstable
}

// defaulted is a container's resources as SetDefaults_Pod stores them: each request left out is its limit.
func (r Resources) defaulted() Resources {
	if r.RequestCPU == "" {
		r.RequestCPU = r.LimitCPU
	}
	if r.RequestMemory == "" {
		r.RequestMemory = r.LimitMemory
	}
	return r
}

// levelDefaulted is the pod-level resources as the API server stores them (defaultPodRequests): a request
// left out is the containers' own, where one of them requests the resource (counted as their requests'
// sum, or an init container's larger one), else the limit. Without pod-level limits nothing is defaulted.
func (p Pod) levelDefaulted() Resources {
	r := *p.Level
	if r.LimitCPU == "" && r.LimitMemory == "" {
		return r
	}
	if r.RequestCPU == "" {
		r.RequestCPU = p.containersRequest(func(c Resources) string { return c.RequestCPU }, r.LimitCPU)
	}
	if r.RequestMemory == "" {
		r.RequestMemory = p.containersRequest(func(c Resources) string { return c.RequestMemory }, r.LimitMemory)
	}
	return r
}

// containersRequest is the containers' request of one resource (of), as a quantity in thousandths, or
// limit when none requests it.
func (p Pod) containersRequest(of func(Resources) string, limit string) string {
	var sum, initMax total
	for _, c := range p.Containers {
		sum.add(of(c.defaulted()))
	}
	for _, c := range p.InitContainers {
		var one total
		one.add(of(c.defaulted()))
		if one.set && (!initMax.set || one.milli > initMax.milli) {
			initMax = one
		}
	}
	switch {
	case !sum.set && !initMax.set:
		return limit
	case initMax.set && (!sum.set || initMax.milli > sum.milli):
		sum = initMax
	}
	return formatMilli(sum.milli)
}

// total is a sum of positive quantities in thousandths (saturating at the largest int64); set: one was added.
type total struct {
	milli int64
	set   bool
}

// add adds q when it is a positive quantity, and reports whether it was.
func (t *total) add(q string) bool {
	n, ok := quantity.MilliValue(q)
	if !ok || n <= 0 {
		return false
	}
	if t.milli > math.MaxInt64-n {
		t.milli = math.MaxInt64
	} else {
		t.milli += n
	}
	t.set = true
	return true
}

type sums struct{ cpu, memory total }

// add adds a CPU and a memory quantity, and reports whether both were positive.
func (s *sums) add(cpu, memory string) bool {
	c := s.cpu.add(cpu)
	m := s.memory.add(memory)
	return c && m
}

// formatMilli writes n thousandths as a quantity ("1500m").
func formatMilli(n int64) string {
	if n == 0 {
		return "0"
	}
	var b [24]byte
	i := len(b)
	b[i-1] = 'm'
	i--
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

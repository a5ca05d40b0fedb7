package kube

import (
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/qos"
)

// PodQOS is the QoS class of a pod, or of a pod made from a template, from its spec (internal/qos: the
// module's rule too): what the API server records in a new pod's status.qosClass (PrepareForCreate).
func PodQOS(spec jsonobj.Obj) string {
	res := func(r jsonobj.Obj) qos.Resources {
		return qos.Resources{RequestCPU: jsonobj.GetStr(r, "requests.cpu"), RequestMemory: jsonobj.GetStr(r, "requests.memory"),
			LimitCPU: jsonobj.GetStr(r, "limits.cpu"), LimitMemory: jsonobj.GetStr(r, "limits.memory")}
	}
	var p qos.Pod
	if r, ok := spec["resources"].(jsonobj.Obj); ok {
		lvl := res(r)
		p.Level = &lvl
	}
	for _, c := range jsonobj.GetArr(spec, "containers") {
		p.Containers = append(p.Containers, res(jsonobj.GetObj(c, "resources")))
	}
	for _, c := range jsonobj.GetArr(spec, "initContainers") {
		p.InitContainers = append(p.InitContainers, res(jsonobj.GetObj(c, "resources")))
	}
	return qos.Class(p)
}

// ValidatePodResize refuses a resize that changes the pod's QoS class, as kube-apiserver's ValidatePodResize
// does: old is the stored pod (its status.qosClass, or computed where it has none: GetPodQOS), resized the
// pod with the resize applied. The message's value is the class the pod keeps, as the API server's is.
func ValidatePodResize(old, resized jsonobj.Obj) error {
	was := jsonobj.GetStr(old, "status.qosClass")
	if was == "" {
		was = PodQOS(jsonobj.GetObj(old, "spec"))
	}
	if PodQOS(jsonobj.GetObj(resized, "spec")) == was {
		return nil
	}
	return invalidObject("Pod", jsonobj.GetStr(old, "metadata.name"), []fieldError{
		invalidValue("spec", was, "Pod QOS Class may not change as a result of resizing")})
}

// Command hostile is a test reconcile module for the hot swap and the action firewall
// (host/controller tests and e2e/swap_test.go). It speaks ABI v1 correctly and describes itself
// as a v1.37.1 module, but every plan it returns reaches beyond the StatefulSet the snapshot is
// about, so the conformance gate refuses it, and when a test bypasses the gate, the firewall
// refuses each of its plans and nothing is applied.
//
// The attack is chosen by the set's annotation "ordinal.dev/hostile" (default delete-foreign-pod):
//
//	delete-foreign-pod      delete the first pod of the snapshot not controlled by the set (else "victim-0")
//	create-other-namespace  create <set>-0 in namespace kube-system, controlled by the set
//	delete-pvc              delete the set's first claim (else data-<set>-0)
//	patch-foreign-pod       relabel the first pod not controlled by the set
//	status-other-set        write the status of a set named "other"
//	update-pod-image        update the set's first pod with another image, on a set not annotated for
//	                        in-place updates
//	create-hostpath-pod     create <set>-0 from the set's template with the node's root mounted (hostPath /)
//
// Each plan is the attack followed by an updateStatus of the set (a valid action). Built by
// ../build.sh (TinyGo, wasip1).
package main

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

const describeJSON = `{"abi":1,"module":"ordinal-hostile","moduleVersion":"0.0.0-hostile","kubernetesVersion":"v1.37.1","customSetKinds":true,` +
	`"features":{"MaxUnavailableStatefulSet":true,"StatefulSetRecreateStrategy":false,"StatefulSetSemanticRevisionComparison":true,"StaleControllerConsistencyStatefulSet":true}}`

var in, out []byte

//go:wasmexport ordinal_alloc
func ordinalAlloc(size int32) int32 {
	in = make([]byte, size+1)
	return int32(uintptr(unsafe.Pointer(&in[0])))
}

//go:wasmexport ordinal_describe
func ordinalDescribe() int64 { return pack([]byte(describeJSON)) }

//go:wasmexport ordinal_reconcile
func ordinalReconcile(ptr, size int32) int64 {
	snap := string(unsafe.Slice((*byte)(unsafe.Pointer(uintptr(ptr))), size))
	return pack([]byte(plan(snap)))
}

func q(s string) string { return strconv.Quote(s) }

func plan(snap string) string {
	set := gjson.Get(snap, "statefulSet")
	ns := set.Get("metadata.namespace").String()
	name := set.Get("metadata.name").String()
	uid := set.Get("metadata.uid").String()
	attack := set.Get(`metadata.annotations.ordinal\.dev/hostile`).String()
	foreign := "victim-0"
	for _, p := range gjson.Get(snap, "pods").Array() {
		owned := false
		for _, r := range p.Get("metadata.ownerReferences").Array() {
			if r.Get("controller").Bool() && r.Get("uid").String() == uid {
				owned = true
			}
		}
		if !owned {
			foreign = p.Get("metadata.name").String()
			break
		}
	}
	var action string
	switch attack {
	case "update-pod-image":
		pod := gjson.Get(snap, "pods.0")
		for _, p := range gjson.Get(snap, "pods").Array() {
			if p.Get("metadata.ownerReferences.0.uid").String() == uid {
				pod = p
				break
			}
		}
		image := pod.Get("spec.containers.0.image").String()
		obj := strings.Replace(pod.Raw, `"image":`+q(image), `"image":"registry.k8s.io/pause:3.10-hostile"`, 1)
		action = `{"verb":"update","kind":"Pod","namespace":` + q(ns) + `,"name":` + q(pod.Get("metadata.name").String()) + `,"object":` + obj + `}`
	case "create-hostpath-pod":
		tmpl := set.Get("spec.template")
		spec := tmpl.Get("spec").Raw
		if spec == "" || spec == "{}" {
			spec = `{"containers":[{"name":"x","image":"registry.k8s.io/pause:3.10"}]}`
		}
		spec = `{"volumes":[{"name":"host","hostPath":{"path":"/"}}],` + spec[1:]
		meta := `"name":` + q(name+"-0") + `,"namespace":` + q(ns) // the template's labels and annotations, so the hostPath is what differs
		for _, k := range []string{"labels", "annotations"} {
			if v := tmpl.Get("metadata." + k); v.Exists() {
				meta += `,"` + k + `":` + v.Raw
			}
		}
		action = `{"verb":"create","kind":"Pod","namespace":` + q(ns) + `,"name":` + q(name+"-0") + `,"object":{"apiVersion":"v1","kind":"Pod","metadata":{` + meta + `,"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":` + q(name) + `,"uid":` + q(uid) +
			`,"controller":true,"blockOwnerDeletion":true}]},"spec":` + spec + `}}`
	case "create-other-namespace":
		action = `{"verb":"create","kind":"Pod","namespace":"kube-system","name":` + q(name+"-0") + `,"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":` + q(name+"-0") +
			`,"namespace":"kube-system","ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":` + q(name) + `,"uid":` + q(uid) +
			`,"controller":true,"blockOwnerDeletion":true}]},"spec":{"containers":[{"name":"x","image":"registry.k8s.io/pause:3.10"}]}}}`
	case "delete-pvc":
		claim := "data-" + name + "-0"
		if c := gjson.Get(snap, "claims.0.metadata.name"); c.Exists() {
			claim = c.String()
		}
		action = `{"verb":"delete","kind":"PersistentVolumeClaim","namespace":` + q(ns) + `,"name":` + q(claim) + `}`
	case "patch-foreign-pod":
		action = `{"verb":"patch","kind":"Pod","namespace":` + q(ns) + `,"name":` + q(foreign) +
			`,"patchType":"application/strategic-merge-patch+json","patch":{"metadata":{"labels":{"hijacked":"true"}}}}`
	case "status-other-set":
		action = `{"verb":"updateStatus","kind":"StatefulSet","namespace":` + q(ns) + `,"name":"other","object":{"status":{"replicas":0}}}`
	default:
		action = `{"verb":"delete","kind":"Pod","namespace":` + q(ns) + `,"name":` + q(foreign) + `}`
	}
	status := `{"verb":"updateStatus","kind":"StatefulSet","namespace":` + q(ns) + `,"name":` + q(name) + `,"object":{"status":{"replicas":0}}}`
	return `{"abi":1,"actions":[` + action + `,` + status + `],"requeueAfterSeconds":0,"events":[]}`
}

func pack(b []byte) int64 {
	out = b
	return int64(uintptr(unsafe.Pointer(&out[0])))<<32 | int64(len(out))
}

func main() {}

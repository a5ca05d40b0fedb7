package kube

import (
	"encoding/json"
	"strings"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// API-server defaulting for the fields a StatefulSet, its pod template, its pods and its claims use.
//
// The revision name is a hash of the pod template as the API server stores it, so a manifest must
// be defaulted exactly like kube-apiserver does (SetDefaults_* in k8s.io/kubernetes/pkg/apis/{apps,
// core}/v1, conversion of deprecated aliases, quantities in canonical form) or the host computes
// revisions no real cluster would. defaults_apiserver_test.go holds it to kube-apiserver v1.37.2's own
// answers for a corpus of 245 manifests (testdata/apiserver-defaults, `make apiserver-defaults`).
//
// It is the host's one defaulting: the replay's in-memory API server stores what it creates and updates
// through it, and the controller defaults a CRD-kind set (ordinal.dev/v1, which gets no apps/v1
// defaulting from the API server) through it, so the set's revision names are those of the same manifest
// as an apps/v1 StatefulSet.

// DefaultStatefulSetJSON is DefaultStatefulSet for a set in JSON (a typed object marshalled, a CRD's
// stored form): decoded keeping numbers exact (jsonobj), defaulted, encoded as encoding/json does (sorted
// keys). Defaulting its answer again gives the same bytes.
func DefaultStatefulSetJSON(b []byte) ([]byte, error) {
	set, err := jsonobj.DecodeObj(b)
	if err != nil {
		return nil, err
	}
	DefaultStatefulSet(set)
	return json.Marshal(set)
}

// DefaultStatefulSet applies API-server defaulting to a StatefulSet in place.
func DefaultStatefulSet(set jsonobj.Obj) {
	md := jsonobj.Ensure(set, "metadata")
	if jsonobj.GetStr(md, "namespace") == "" {
		md["namespace"] = "default"
	}
	spec := jsonobj.Ensure(set, "spec")
	jsonobj.SetDefault(spec, "replicas", jsonobj.Num(1))
	jsonobj.SetDefault(spec, "serviceName", "")
	jsonobj.SetDefault(spec, "podManagementPolicy", "OrderedReady")
	jsonobj.SetDefault(spec, "revisionHistoryLimit", jsonobj.Num(10))
	// SetDefaults_StatefulSet: rollingUpdate is filled in only when the type itself was defaulted; a
	// RollingUpdate strategy without rollingUpdate keeps none (the controller then treats partition and
	// maxUnavailable as unset).
	us := jsonobj.Ensure(spec, "updateStrategy")
	if jsonobj.GetStr(us, "type") == "" {
		us["type"] = "RollingUpdate"
		if us["rollingUpdate"] == nil {
			us["rollingUpdate"] = jsonobj.Obj{}
		}
	}
	if ru, ok := us["rollingUpdate"].(jsonobj.Obj); ok && us["type"] == "RollingUpdate" {
		jsonobj.SetDefault(ru, "partition", jsonobj.Num(0))
		jsonobj.SetDefault(ru, "maxUnavailable", jsonobj.Num(1))
	}
	// start is a plain int32: an empty ordinals object is stored with start 0.
	if o, ok := spec["ordinals"].(jsonobj.Obj); ok {
		jsonobj.SetDefault(o, "start", jsonobj.Num(0))
	}
	rp := jsonobj.Ensure(spec, "persistentVolumeClaimRetentionPolicy")
	jsonobj.SetDefault(rp, "whenDeleted", "Retain")
	jsonobj.SetDefault(rp, "whenScaled", "Retain")
	tmpl := jsonobj.Ensure(spec, "template")
	defaultPodSpec(jsonobj.Ensure(tmpl, "spec"))
	for _, v := range jsonobj.GetArr(spec, "volumeClaimTemplates") {
		if c, ok := v.(jsonobj.Obj); ok {
			defaultClaimTemplate(c)
		}
	}
	st := jsonobj.Ensure(set, "status")
	jsonobj.SetDefault(st, "replicas", jsonobj.Num(0))
	jsonobj.SetDefault(st, "availableReplicas", jsonobj.Num(0))
}

// defaultClaimTemplate defaults one of a set's claim templates: whole PersistentVolumeClaims, stored
// with their type meta and a Pending status.
func defaultClaimTemplate(c jsonobj.Obj) {
	jsonobj.SetDefault(c, "apiVersion", "v1")
	jsonobj.SetDefault(c, "kind", "PersistentVolumeClaim")
	defaultClaimSpec(jsonobj.Ensure(c, "spec"))
	jsonobj.SetDefault(jsonobj.Ensure(c, "status"), "phase", "Pending")
}

// DefaultPod applies API-server defaulting to a pod in place (what pod creation does on top of the
// template's defaults).
func DefaultPod(pod jsonobj.Obj, namespace string) {
	md := jsonobj.Ensure(pod, "metadata")
	if jsonobj.GetStr(md, "namespace") == "" {
		md["namespace"] = namespace
	}
	spec := jsonobj.Ensure(pod, "spec")
	defaultPodSpec(spec)
	jsonobj.SetDefault(spec, "enableServiceLinks", true)
	hostNetwork := spec["hostNetwork"] == true
	for _, key := range []string{"initContainers", "containers"} {
		for _, c := range jsonobj.GetArr(spec, key) {
			co, ok := c.(jsonobj.Obj)
			if !ok {
				continue
			}
			// SetDefaults_Pod: requests default to limits.
			if lim := jsonobj.GetObj(co, "resources.limits"); len(lim) > 0 {
				req := jsonobj.Ensure(jsonobj.Ensure(co, "resources"), "requests")
				for k, v := range lim {
					jsonobj.SetDefault(req, k, v)
				}
			}
			if hostNetwork {
				for _, p := range jsonobj.GetArr(co, "ports") {
					if po, ok := p.(jsonobj.Obj); ok {
						jsonobj.SetDefault(po, "hostPort", po["containerPort"])
					}
				}
			}
		}
	}
	jsonobj.SetDefault(pod, "status", jsonobj.Obj{})
}

// DefaultClaim applies API-server defaulting to a PersistentVolumeClaim in place.
func DefaultClaim(claim jsonobj.Obj, namespace string) {
	md := jsonobj.Ensure(claim, "metadata")
	if jsonobj.GetStr(md, "namespace") == "" {
		md["namespace"] = namespace
	}
	defaultClaimSpec(jsonobj.Ensure(claim, "spec"))
	st := jsonobj.Ensure(claim, "status")
	jsonobj.SetDefault(st, "phase", "Pending")
}

func defaultClaimSpec(spec jsonobj.Obj) {
	jsonobj.SetDefault(spec, "volumeMode", "Filesystem")
	canonicalResources(jsonobj.GetObj(spec, "resources"))
	// apiGroup is a pointer without omitempty; dataSourceRef mirrors dataSource (AnyVolumeDataSource).
	if ds := jsonobj.GetObj(spec, "dataSource"); ds != nil {
		jsonobj.SetDefault(ds, "apiGroup", nil)
		if _, ok := spec["dataSourceRef"]; !ok {
			spec["dataSourceRef"] = jsonobj.CloneObj(ds)
		}
	}
	if ref := jsonobj.GetObj(spec, "dataSourceRef"); ref != nil {
		jsonobj.SetDefault(ref, "apiGroup", nil)
	}
}

func defaultPodSpec(spec jsonobj.Obj) {
	for _, key := range []string{"initContainers", "containers"} {
		for _, c := range jsonobj.GetArr(spec, key) {
			if co, ok := c.(jsonobj.Obj); ok {
				defaultContainer(co)
			}
		}
	}
	if _, ok := spec["containers"]; !ok {
		spec["containers"] = nil
	}
	// The API server stores typed objects: false booleans tagged omitempty do not survive.
	for _, k := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if spec[k] == false {
			delete(spec, k)
		}
	}
	jsonobj.SetDefault(spec, "restartPolicy", "Always")
	jsonobj.SetDefault(spec, "terminationGracePeriodSeconds", jsonobj.Num(30))
	jsonobj.SetDefault(spec, "dnsPolicy", "ClusterFirst")
	jsonobj.SetDefault(spec, "securityContext", jsonobj.Obj{})
	jsonobj.SetDefault(spec, "schedulerName", "default-scheduler")
	canonicalResources(jsonobj.GetObj(spec, "resources"))
	canonicalQuantities(jsonobj.GetObj(spec, "overhead"))
	// The deprecated serviceAccount field is an alias: conversion fills serviceAccountName from it when
	// that is empty, and writes serviceAccountName back into it.
	if jsonobj.GetStr(spec, "serviceAccountName") == "" && jsonobj.GetStr(spec, "serviceAccount") != "" {
		spec["serviceAccountName"] = spec["serviceAccount"]
	}
	if san := jsonobj.GetStr(spec, "serviceAccountName"); san != "" {
		spec["serviceAccount"] = san
	}
	for _, v := range jsonobj.GetArr(spec, "volumes") {
		if vo, ok := v.(jsonobj.Obj); ok {
			defaultVolume(vo)
		}
	}
}

func defaultVolume(v jsonobj.Obj) {
	const mode = 420 // 0644
	if s := jsonobj.GetObj(v, "configMap"); s != nil {
		jsonobj.SetDefault(s, "defaultMode", jsonobj.Num(mode))
	}
	if s := jsonobj.GetObj(v, "secret"); s != nil {
		jsonobj.SetDefault(s, "defaultMode", jsonobj.Num(mode))
	}
	if s := jsonobj.GetObj(v, "hostPath"); s != nil {
		jsonobj.SetDefault(s, "type", "")
	}
	if s := jsonobj.GetObj(v, "emptyDir"); s != nil {
		canonicalQuantity(s, "sizeLimit")
	}
	if s := jsonobj.GetObj(v, "iscsi"); s != nil {
		jsonobj.SetDefault(s, "iscsiInterface", "default")
	}
	if s := jsonobj.GetObj(v, "image"); s != nil {
		if _, ok := s["pullPolicy"]; !ok {
			s["pullPolicy"] = defaultPullPolicy(jsonobj.GetStr(s, "reference"))
		}
	}
	if _, ok := v["name"]; ok && !hasVolumeSource(v) {
		v["emptyDir"] = jsonobj.Obj{} // SetDefaults_Volume: a volume with no source is an emptyDir
	}
	if s := jsonobj.GetObj(v, "downwardAPI"); s != nil {
		jsonobj.SetDefault(s, "defaultMode", jsonobj.Num(mode))
		defaultDownwardItems(jsonobj.GetArr(s, "items"))
	}
	if s := jsonobj.GetObj(v, "projected"); s != nil {
		jsonobj.SetDefault(s, "defaultMode", jsonobj.Num(mode))
		for _, src := range jsonobj.GetArr(s, "sources") {
			if t := jsonobj.GetObj(src, "serviceAccountToken"); t != nil {
				jsonobj.SetDefault(t, "expirationSeconds", jsonobj.Num(3600))
			}
			if d := jsonobj.GetObj(src, "downwardAPI"); d != nil {
				defaultDownwardItems(jsonobj.GetArr(d, "items"))
			}
		}
	}
	if t := jsonobj.GetObj(v, "ephemeral.volumeClaimTemplate"); t != nil {
		jsonobj.SetDefault(t, "metadata", jsonobj.Obj{})
		defaultClaimSpec(jsonobj.Ensure(t, "spec"))
	}
}

func defaultDownwardItems(items []any) {
	for _, it := range items {
		if fr := jsonobj.GetObj(it, "fieldRef"); fr != nil {
			jsonobj.SetDefault(fr, "apiVersion", "v1")
		}
		if rf := jsonobj.GetObj(it, "resourceFieldRef"); rf != nil {
			jsonobj.SetDefault(rf, "divisor", "0")
			canonicalQuantity(rf, "divisor")
		}
	}
}

func defaultContainer(c jsonobj.Obj) {
	for _, k := range []string{"stdin", "stdinOnce", "tty"} {
		if c[k] == false {
			delete(c, k)
		}
	}
	for _, p := range jsonobj.GetArr(c, "ports") {
		if po, ok := p.(jsonobj.Obj); ok {
			jsonobj.SetDefault(po, "protocol", "TCP")
		}
	}
	for _, e := range jsonobj.GetArr(c, "env") {
		if fr := jsonobj.GetObj(e, "valueFrom.fieldRef"); fr != nil {
			jsonobj.SetDefault(fr, "apiVersion", "v1")
		}
		if rf := jsonobj.GetObj(e, "valueFrom.resourceFieldRef"); rf != nil {
			jsonobj.SetDefault(rf, "divisor", "0")
			canonicalQuantity(rf, "divisor")
		}
	}
	jsonobj.SetDefault(c, "resources", jsonobj.Obj{})
	canonicalResources(jsonobj.GetObj(c, "resources"))
	for _, key := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if p := jsonobj.GetObj(c, key); p != nil {
			jsonobj.SetDefault(p, "timeoutSeconds", jsonobj.Num(1))
			jsonobj.SetDefault(p, "periodSeconds", jsonobj.Num(10))
			jsonobj.SetDefault(p, "successThreshold", jsonobj.Num(1))
			jsonobj.SetDefault(p, "failureThreshold", jsonobj.Num(3))
			defaultHTTPGet(jsonobj.GetObj(p, "httpGet"))
			if g := jsonobj.GetObj(p, "grpc"); g != nil {
				jsonobj.SetDefault(g, "service", "")
			}
		}
	}
	for _, key := range []string{"postStart", "preStop"} {
		defaultHTTPGet(jsonobj.GetObj(c, "lifecycle."+key+".httpGet"))
	}
	jsonobj.SetDefault(c, "terminationMessagePath", "/dev/termination-log")
	jsonobj.SetDefault(c, "terminationMessagePolicy", "File")
	if _, ok := c["imagePullPolicy"]; !ok {
		c["imagePullPolicy"] = defaultPullPolicy(jsonobj.GetStr(c, "image"))
	}
}

func defaultHTTPGet(h jsonobj.Obj) {
	if h != nil {
		jsonobj.SetDefault(h, "path", "/")
		jsonobj.SetDefault(h, "scheme", "HTTP")
	}
}

// defaultPullPolicy: Always for ":latest" or an untagged image, IfNotPresent otherwise (digests
// included), as SetDefaults_Container does.
func defaultPullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	name := image
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	i := strings.LastIndex(name, ":")
	if i < 0 || name[i+1:] == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// hasVolumeSource reports whether a volume names a source: any field but the name that is not null.
func hasVolumeSource(v jsonobj.Obj) bool {
	for k, x := range v {
		if k != "name" && x != nil {
			return true
		}
	}
	return false
}

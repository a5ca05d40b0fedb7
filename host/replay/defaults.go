package replay

import "strings"

// API-server defaulting for the fields a StatefulSet, its pod template, its pods and its claims use.
//
// The revision name is a hash of the pod template as the API server stores it, so a manifest must
// be defaulted exactly like kube-apiserver does (SetDefaults_* in k8s.io/kubernetes/pkg/apis/{apps,
// core}/v1, conversion of deprecated aliases, quantities in canonical form) or the replay computes
// revisions no real cluster would. defaults_apiserver_test.go holds it to kube-apiserver v1.37.1's own
// answers for a corpus of 245 manifests (testdata/apiserver-defaults, `make apiserver-defaults`).

// DefaultStatefulSet applies API-server defaulting to a StatefulSet in place.
func DefaultStatefulSet(set Obj) {
	md := ensureObj(set, "metadata")
	if getStr(md, "namespace") == "" {
		md["namespace"] = "default"
	}
	spec := ensureObj(set, "spec")
	setDefault(spec, "replicas", num(1))
	setDefault(spec, "serviceName", "")
	setDefault(spec, "podManagementPolicy", "OrderedReady")
	setDefault(spec, "revisionHistoryLimit", num(10))
	// SetDefaults_StatefulSet: rollingUpdate is filled in only when the type itself was defaulted; a
	// RollingUpdate strategy without rollingUpdate keeps none (the controller then treats partition and
	// maxUnavailable as unset).
	us := ensureObj(spec, "updateStrategy")
	if getStr(us, "type") == "" {
		us["type"] = "RollingUpdate"
		if us["rollingUpdate"] == nil {
			us["rollingUpdate"] = Obj{}
		}
	}
	if ru, ok := us["rollingUpdate"].(Obj); ok && us["type"] == "RollingUpdate" {
		setDefault(ru, "partition", num(0))
		setDefault(ru, "maxUnavailable", num(1))
	}
	// start is a plain int32: an empty ordinals object is stored with start 0.
	if o, ok := spec["ordinals"].(Obj); ok {
		setDefault(o, "start", num(0))
	}
	rp := ensureObj(spec, "persistentVolumeClaimRetentionPolicy")
	setDefault(rp, "whenDeleted", "Retain")
	setDefault(rp, "whenScaled", "Retain")
	tmpl := ensureObj(spec, "template")
	defaultPodSpec(ensureObj(tmpl, "spec"))
	for _, v := range getArr(spec, "volumeClaimTemplates") {
		if c, ok := v.(Obj); ok {
			defaultClaimTemplate(c)
		}
	}
	st := ensureObj(set, "status")
	setDefault(st, "replicas", num(0))
	setDefault(st, "availableReplicas", num(0))
}

// defaultClaimTemplate defaults one of a set's claim templates: whole PersistentVolumeClaims, stored
// with their type meta and a Pending status.
func defaultClaimTemplate(c Obj) {
	setDefault(c, "apiVersion", "v1")
	setDefault(c, "kind", "PersistentVolumeClaim")
	defaultClaimSpec(ensureObj(c, "spec"))
	setDefault(ensureObj(c, "status"), "phase", "Pending")
}

// DefaultPod applies API-server defaulting to a pod in place (what pod creation does on top of the
// template's defaults).
func DefaultPod(pod Obj, namespace string) {
	md := ensureObj(pod, "metadata")
	if getStr(md, "namespace") == "" {
		md["namespace"] = namespace
	}
	spec := ensureObj(pod, "spec")
	defaultPodSpec(spec)
	setDefault(spec, "enableServiceLinks", true)
	hostNetwork := spec["hostNetwork"] == true
	for _, key := range []string{"initContainers", "containers"} {
		for _, c := range getArr(spec, key) {
			co, ok := c.(Obj)
			if !ok {
				continue
			}
			// SetDefaults_Pod: requests default to limits.
			if lim := getObj(co, "resources.limits"); len(lim) > 0 {
				req := ensureObj(ensureObj(co, "resources"), "requests")
				for k, v := range lim {
					setDefault(req, k, v)
				}
			}
			if hostNetwork {
				for _, p := range getArr(co, "ports") {
					if po, ok := p.(Obj); ok {
						setDefault(po, "hostPort", po["containerPort"])
					}
				}
			}
		}
	}
	setDefault(pod, "status", Obj{})
}

// DefaultClaim applies API-server defaulting to a PersistentVolumeClaim in place.
func DefaultClaim(claim Obj, namespace string) {
	md := ensureObj(claim, "metadata")
	if getStr(md, "namespace") == "" {
		md["namespace"] = namespace
	}
	defaultClaimSpec(ensureObj(claim, "spec"))
	st := ensureObj(claim, "status")
	setDefault(st, "phase", "Pending")
}

func defaultClaimSpec(spec Obj) {
	setDefault(spec, "volumeMode", "Filesystem")
	canonicalResources(getObj(spec, "resources"))
	// apiGroup is a pointer without omitempty; dataSourceRef mirrors dataSource (AnyVolumeDataSource).
	if ds := getObj(spec, "dataSource"); ds != nil {
		setDefault(ds, "apiGroup", nil)
		if _, ok := spec["dataSourceRef"]; !ok {
			spec["dataSourceRef"] = cloneObj(ds)
		}
	}
	if ref := getObj(spec, "dataSourceRef"); ref != nil {
		setDefault(ref, "apiGroup", nil)
	}
}

func defaultPodSpec(spec Obj) {
	for _, key := range []string{"initContainers", "containers"} {
		for _, c := range getArr(spec, key) {
			if co, ok := c.(Obj); ok {
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
	setDefault(spec, "restartPolicy", "Always")
	setDefault(spec, "terminationGracePeriodSeconds", num(30))
	setDefault(spec, "dnsPolicy", "ClusterFirst")
	setDefault(spec, "securityContext", Obj{})
	setDefault(spec, "schedulerName", "default-scheduler")
	canonicalResources(getObj(spec, "resources"))
	canonicalQuantities(getObj(spec, "overhead"))
	// The deprecated serviceAccount field is an alias: conversion fills serviceAccountName from it when
	// that is empty, and writes serviceAccountName back into it.
	if getStr(spec, "serviceAccountName") == "" && getStr(spec, "serviceAccount") != "" {
		spec["serviceAccountName"] = spec["serviceAccount"]
	}
	if san := getStr(spec, "serviceAccountName"); san != "" {
		spec["serviceAccount"] = san
	}
	for _, v := range getArr(spec, "volumes") {
		if vo, ok := v.(Obj); ok {
			defaultVolume(vo)
		}
	}
}

func defaultVolume(v Obj) {
	const mode = 420 // 0644
	if s := getObj(v, "configMap"); s != nil {
		setDefault(s, "defaultMode", num(mode))
	}
	if s := getObj(v, "secret"); s != nil {
		setDefault(s, "defaultMode", num(mode))
	}
	if s := getObj(v, "hostPath"); s != nil {
		setDefault(s, "type", "")
	}
	if s := getObj(v, "emptyDir"); s != nil {
		canonicalQuantity(s, "sizeLimit")
	}
	if s := getObj(v, "iscsi"); s != nil {
		setDefault(s, "iscsiInterface", "default")
	}
	if s := getObj(v, "image"); s != nil {
		if _, ok := s["pullPolicy"]; !ok {
			s["pullPolicy"] = defaultPullPolicy(getStr(s, "reference"))
		}
	}
	if _, ok := v["name"]; ok && !hasVolumeSource(v) {
		v["emptyDir"] = Obj{} // SetDefaults_Volume: a volume with no source is an emptyDir
	}
	if s := getObj(v, "downwardAPI"); s != nil {
		setDefault(s, "defaultMode", num(mode))
		defaultDownwardItems(getArr(s, "items"))
	}
	if s := getObj(v, "projected"); s != nil {
		setDefault(s, "defaultMode", num(mode))
		for _, src := range getArr(s, "sources") {
			if t := getObj(src, "serviceAccountToken"); t != nil {
				setDefault(t, "expirationSeconds", num(3600))
			}
			if d := getObj(src, "downwardAPI"); d != nil {
				defaultDownwardItems(getArr(d, "items"))
			}
		}
	}
	if t := getObj(v, "ephemeral.volumeClaimTemplate"); t != nil {
		setDefault(t, "metadata", Obj{})
		defaultClaimSpec(ensureObj(t, "spec"))
	}
}

func defaultDownwardItems(items []any) {
	for _, it := range items {
		if fr := getObj(it, "fieldRef"); fr != nil {
			setDefault(fr, "apiVersion", "v1")
		}
		if rf := getObj(it, "resourceFieldRef"); rf != nil {
			setDefault(rf, "divisor", "0")
			canonicalQuantity(rf, "divisor")
		}
	}
}

func defaultContainer(c Obj) {
	for _, k := range []string{"stdin", "stdinOnce", "tty"} {
		if c[k] == false {
			delete(c, k)
		}
	}
	for _, p := range getArr(c, "ports") {
		if po, ok := p.(Obj); ok {
			setDefault(po, "protocol", "TCP")
		}
	}
	for _, e := range getArr(c, "env") {
		if fr := getObj(e, "valueFrom.fieldRef"); fr != nil {
			setDefault(fr, "apiVersion", "v1")
		}
		if rf := getObj(e, "valueFrom.resourceFieldRef"); rf != nil {
			setDefault(rf, "divisor", "0")
			canonicalQuantity(rf, "divisor")
		}
	}
	setDefault(c, "resources", Obj{})
	canonicalResources(getObj(c, "resources"))
	for _, key := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if p := getObj(c, key); p != nil {
			setDefault(p, "timeoutSeconds", num(1))
			setDefault(p, "periodSeconds", num(10))
			setDefault(p, "successThreshold", num(1))
			setDefault(p, "failureThreshold", num(3))
			defaultHTTPGet(getObj(p, "httpGet"))
			if g := getObj(p, "grpc"); g != nil {
				setDefault(g, "service", "")
			}
		}
	}
	for _, key := range []string{"postStart", "preStop"} {
		defaultHTTPGet(getObj(c, "lifecycle."+key+".httpGet"))
	}
	setDefault(c, "terminationMessagePath", "/dev/termination-log")
	setDefault(c, "terminationMessagePolicy", "File")
	if _, ok := c["imagePullPolicy"]; !ok {
		c["imagePullPolicy"] = defaultPullPolicy(getStr(c, "image"))
	}
}

func defaultHTTPGet(h Obj) {
	if h != nil {
		setDefault(h, "path", "/")
		setDefault(h, "scheme", "HTTP")
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
func hasVolumeSource(v Obj) bool {
	for k, x := range v {
		if k != "name" && x != nil {
			return true
		}
	}
	return false
}

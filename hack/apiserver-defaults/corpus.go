package main

import (
	"fmt"
)

type obj = map[string]any

// testCase is one manifest of the corpus.
type testCase struct {
	name string
	kind string // StatefulSet, Pod or PersistentVolumeClaim
	obj  obj
}

// Each dimension lists the spellings a manifest can use for one area of the API; case i takes variant
// (i*step + offset) mod len of every dimension, with steps coprime to the lengths, so every variant appears
// and neighbouring cases combine them differently.
var (
	updateStrategies = []any{
		nil,
		obj{"type": "RollingUpdate"},
		obj{"type": "RollingUpdate", "rollingUpdate": obj{}},
		obj{"rollingUpdate": obj{"partition": 2}},
		obj{"type": "RollingUpdate", "rollingUpdate": obj{"maxUnavailable": "50%"}},
		obj{"type": "RollingUpdate", "rollingUpdate": obj{"maxUnavailable": 3, "partition": 1}},
		obj{"type": "OnDelete"},
		obj{},
	}
	podManagementPolicies = []any{nil, "Parallel", "OrderedReady"}
	retentionPolicies     = []any{nil, obj{}, obj{"whenDeleted": "Delete"}, obj{"whenScaled": "Delete"}, obj{"whenDeleted": "Delete", "whenScaled": "Retain"}}
	ordinalsVariants      = []any{nil, obj{}, obj{"start": 5}, obj{"start": 0}}
	replicasVariants      = []any{nil, 0, 3}
	historyLimits         = []any{nil, 2, 0}
	minReadySeconds       = []any{nil, 10}

	cpuSpellings     = []any{"0.5", "500m", "1", 1, "1.0", "100m", "0.1", "2000m", 0.25, "1500m", "1.5", "0"}
	memorySpellings  = []any{"1024Mi", "1Gi", "1e9", "1G", "128974848", "129M", "123Mi", "1.5Gi", "0.5Gi", "1000Ki", "2048", 1073741824, "1E3", "64k"}
	storageSpellings = []any{"1Gi", "1024Mi", "1G", "10Gi", "0.5Gi", "500M", "1e9", "1048576Ki", 5368709120, "2Ti", "100Mi", "1.5G"}

	probeVariants = []func(i int) obj{
		func(int) obj { return nil },
		func(int) obj { return obj{"httpGet": obj{"port": 8080}} },
		func(int) obj { return obj{"httpGet": obj{"path": "/healthz", "port": "http", "scheme": "HTTPS"}} },
		func(int) obj {
			return obj{"httpGet": obj{"port": 80, "httpHeaders": []any{obj{"name": "X-A", "value": "b"}}}, "periodSeconds": 5}
		},
		func(int) obj { return obj{"tcpSocket": obj{"port": 5432}} },
		func(int) obj { return obj{"grpc": obj{"port": 9090}} },
		func(int) obj { return obj{"grpc": obj{"port": 9090, "service": "health"}, "failureThreshold": 1} },
		func(int) obj { return obj{"exec": obj{"command": []any{"true"}}} },
		func(int) obj {
			return obj{"exec": obj{"command": []any{"sh", "-c", "ok"}}, "initialDelaySeconds": 3, "timeoutSeconds": 2, "successThreshold": 1}
		},
	}
	volumeVariants = []func(i int) obj{
		func(int) obj { return obj{"name": "nosource"} },
		func(int) obj { return obj{"name": "scratch", "emptyDir": obj{}} },
		func(int) obj { return obj{"name": "mem", "emptyDir": obj{"medium": "Memory", "sizeLimit": "64Mi"}} },
		func(int) obj { return obj{"name": "cfg", "configMap": obj{"name": "app-config"}} },
		func(int) obj {
			return obj{"name": "cfg-items", "configMap": obj{"name": "app-config", "items": []any{obj{"key": "a", "path": "a.conf"}}, "defaultMode": 0o400}}
		},
		func(int) obj { return obj{"name": "sec", "secret": obj{"secretName": "app-secret"}} },
		func(int) obj {
			return obj{"name": "sec-opt", "secret": obj{"secretName": "app-secret", "optional": true}}
		},
		func(int) obj {
			return obj{"name": "proj", "projected": obj{"sources": []any{
				obj{"configMap": obj{"name": "app-config"}},
				obj{"serviceAccountToken": obj{"path": "token"}},
				obj{"downwardAPI": obj{"items": []any{obj{"path": "labels", "fieldRef": obj{"fieldPath": "metadata.labels"}}}}},
			}}}
		},
		func(int) obj {
			return obj{"name": "down", "downwardAPI": obj{"items": []any{
				obj{"path": "name", "fieldRef": obj{"fieldPath": "metadata.name"}},
				obj{"path": "cpu", "resourceFieldRef": obj{"containerName": "app", "resource": "limits.cpu"}},
			}}}
		},
		func(int) obj { return obj{"name": "host", "hostPath": obj{"path": "/var/log"}} },
		func(int) obj {
			return obj{"name": "host-dir", "hostPath": obj{"path": "/data", "type": "DirectoryOrCreate"}}
		},
		func(int) obj { return obj{"name": "claim", "persistentVolumeClaim": obj{"claimName": "shared"}} },
		func(int) obj {
			return obj{"name": "eph", "ephemeral": obj{"volumeClaimTemplate": obj{"spec": obj{
				"accessModes": []any{"ReadWriteOnce"}, "resources": obj{"requests": obj{"storage": "1Gi"}}}}}}
		},
		func(int) obj {
			return obj{"name": "csi", "csi": obj{"driver": "csi.example.com", "volumeAttributes": obj{"a": "b"}}}
		},
		func(int) obj { return obj{"name": "nfs", "nfs": obj{"server": "nfs.example.com", "path": "/exports"}} },
		func(int) obj {
			return obj{"name": "iscsi", "iscsi": obj{"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0}}
		},
		func(int) obj { return obj{"name": "img", "image": obj{"reference": "example.com/data:v1"}} },
	}
	serviceAccounts = []obj{nil, {"serviceAccount": "builder"}, {"serviceAccountName": "runner"}, {"serviceAccount": "builder", "serviceAccountName": "builder"}}
	images          = []any{"nginx:1.27", "nginx", "nginx:latest", "registry.example.com:5000/app", "registry.example.com:5000/app:v2", "busybox@sha256:" + sha, "docker.io/library/nginx:1.27@sha256:" + sha}
	pullPolicies    = []any{nil, nil, "Always", "Never", "IfNotPresent"}
	portVariants    = []any{nil, []any{obj{"containerPort": 80}}, []any{obj{"containerPort": 80, "name": "http"}, obj{"containerPort": 53, "protocol": "UDP"}}, []any{obj{"containerPort": 8080, "hostPort": 8080}}}
	envVariants     = []any{nil, []any{obj{"name": "A", "value": "b"}}, []any{obj{"name": "POD", "valueFrom": obj{"fieldRef": obj{"fieldPath": "metadata.name"}}}}, []any{obj{"name": "MEM", "valueFrom": obj{"resourceFieldRef": obj{"resource": "limits.memory"}}}}}
	initVariants    = []func(i int) []any{
		func(int) []any { return nil },
		func(int) []any { return []any{obj{"name": "init", "image": "busybox:1.36", "command": []any{"true"}}} },
		func(int) []any {
			return []any{obj{"name": "sidecar", "image": "envoy:1.30", "restartPolicy": "Always", "readinessProbe": obj{"tcpSocket": obj{"port": 9901}}}}
		},
	}
	podSpecExtras = []obj{
		nil,
		{"hostNetwork": true},
		{"restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 10},
		{"securityContext": obj{"runAsUser": 1000}, "schedulerName": "default-scheduler"},
		{"enableServiceLinks": false, "priority": nil},
		{"tolerations": []any{obj{"key": "k", "operator": "Exists"}}},
		{"affinity": obj{"podAntiAffinity": obj{"preferredDuringSchedulingIgnoredDuringExecution": []any{obj{"weight": 1, "podAffinityTerm": obj{"topologyKey": "kubernetes.io/hostname", "labelSelector": obj{"matchLabels": obj{"app": "web"}}}}}}}},
		{"topologySpreadConstraints": []any{obj{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": obj{"matchLabels": obj{"app": "web"}}}}},
	}
	claimTemplateVariants = []func(i int) []any{
		func(int) []any { return nil },
		func(i int) []any {
			return []any{obj{"metadata": obj{"name": "data"}, "spec": obj{"accessModes": []any{"ReadWriteOnce"}, "resources": obj{"requests": obj{"storage": pick(storageSpellings, i, 5)}}}}}
		},
		func(i int) []any {
			return []any{obj{"metadata": obj{"name": "data", "labels": obj{"tier": "db"}}, "spec": obj{"accessModes": []any{"ReadWriteOnce"},
				"storageClassName": "fast", "volumeMode": "Block", "resources": obj{"requests": obj{"storage": pick(storageSpellings, i, 7)}}}}}
		},
		func(i int) []any {
			return []any{
				obj{"metadata": obj{"name": "data"}, "spec": obj{"accessModes": []any{"ReadWriteOnce"}, "resources": obj{"requests": obj{"storage": pick(storageSpellings, i, 3)}}}},
				obj{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": obj{"name": "logs"}, "spec": obj{"accessModes": []any{"ReadWriteMany"}, "storageClassName": "",
					"resources": obj{"requests": obj{"storage": "1Gi"}, "limits": obj{"storage": "2Gi"}}}},
			}
		},
	}
)

const sha = "7b3ccabffc97de872a30dfd234fd972a66d247c8cfc69b0550f276481852627c"

func pick[T any](vs []T, i, step int) T { return vs[(i*step+i/len(vs))%len(vs)] }

// container builds the main container of case i.
func container(i int) obj {
	c := obj{"name": "app", "image": pick(images, i, 3)}
	if pp := pick(pullPolicies, i, 2); pp != nil {
		c["imagePullPolicy"] = pp
	}
	if p := pick(portVariants, i, 3); p != nil {
		c["ports"] = p
	}
	if e := pick(envVariants, i, 5); e != nil {
		c["env"] = e
	}
	for j, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if p := probeVariants[(i*(j+2)+j)%len(probeVariants)](i); p != nil {
			c[probe] = p
		}
	}
	switch i % 4 {
	case 0:
		c["resources"] = obj{"requests": obj{"cpu": pick(cpuSpellings, i, 5), "memory": pick(memorySpellings, i, 3)}}
	case 1:
		c["resources"] = obj{"limits": obj{"cpu": pick(cpuSpellings, i, 7), "memory": pick(memorySpellings, i, 5)}}
	case 2:
		c["resources"] = obj{"requests": obj{"cpu": pick(cpuSpellings, i, 11)}, "limits": obj{"cpu": pick(cpuSpellings, i, 11), "memory": pick(memorySpellings, i, 9)}}
	}
	if i%5 == 0 {
		c["terminationMessagePolicy"] = "FallbackToLogsOnError"
	}
	if i%6 == 0 {
		c["volumeMounts"] = []any{obj{"name": "extra", "mountPath": "/extra"}}
	}
	return c
}

// podSpec builds the pod spec of case i.
func podSpec(i int) obj {
	spec := obj{"containers": []any{container(i)}}
	for k, v := range pick(serviceAccounts, i, 3) {
		spec[k] = v
	}
	if ic := initVariants[(i*2+i/3)%len(initVariants)](i); ic != nil {
		spec["initContainers"] = ic
	}
	for k, v := range pick(podSpecExtras, i, 3) {
		if v != nil {
			spec[k] = v
		}
	}
	vol := volumeVariants[(i*5+i/len(volumeVariants))%len(volumeVariants)](i)
	vol["name"] = "extra"
	spec["volumes"] = []any{vol}
	if spec["hostNetwork"] == true {
		// With hostNetwork the API server requires hostPort == containerPort; leave it to defaulting.
		if ports, ok := spec["containers"].([]any)[0].(obj)["ports"].([]any); ok {
			for _, p := range ports {
				delete(p.(obj), "hostPort")
			}
		}
	}
	return spec
}

func statefulSet(i int) obj {
	name := fmt.Sprintf("sts-%03d", i)
	labels := obj{"app": name}
	spec := obj{
		"selector": obj{"matchLabels": labels},
		"template": obj{"metadata": obj{"labels": obj{"app": name}}, "spec": podSpec(i)},
	}
	if i%3 != 0 {
		spec["serviceName"] = name
	}
	set := func(key string, v any) {
		if v != nil {
			spec[key] = v
		}
	}
	set("updateStrategy", pick(updateStrategies, i, 3))
	set("podManagementPolicy", pick(podManagementPolicies, i, 2))
	set("persistentVolumeClaimRetentionPolicy", pick(retentionPolicies, i, 2))
	set("ordinals", pick(ordinalsVariants, i, 3))
	set("replicas", pick(replicasVariants, i, 2))
	set("revisionHistoryLimit", pick(historyLimits, i, 2))
	set("minReadySeconds", pick(minReadySeconds, i, 1))
	if ct := claimTemplateVariants[(i*3+i/4)%len(claimTemplateVariants)](i); ct != nil {
		spec["volumeClaimTemplates"] = ct
	}
	return obj{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": obj{"name": name}, "spec": spec}
}

func pod(i int) obj {
	name := fmt.Sprintf("pod-%03d", i)
	spec := podSpec(i)
	if i%2 == 0 {
		spec["hostname"] = name
		spec["subdomain"] = "web"
	}
	return obj{"apiVersion": "v1", "kind": "Pod", "metadata": obj{"name": name, "labels": obj{"app": "web"}}, "spec": spec}
}

var (
	accessModeVariants = []any{[]any{"ReadWriteOnce"}, []any{"ReadWriteMany"}, []any{"ReadWriteOncePod"}, []any{"ReadOnlyMany", "ReadWriteOnce"}}
	volumeModes        = []any{nil, "Filesystem", "Block"}
	storageClasses     = []any{nil, "", "standard"}
)

func claim(i int) obj {
	spec := obj{"accessModes": pick(accessModeVariants, i, 3), "resources": obj{"requests": obj{"storage": pick(storageSpellings, i, 5)}}}
	if vm := pick(volumeModes, i, 2); vm != nil {
		spec["volumeMode"] = vm
	}
	if sc := pick(storageClasses, i, 1); sc != nil {
		spec["storageClassName"] = sc
	}
	if i%4 == 1 {
		spec["resources"].(obj)["limits"] = obj{"storage": pick(storageSpellings, i, 7)}
	}
	if i%5 == 2 {
		spec["selector"] = obj{"matchLabels": obj{"tier": "db"}}
	}
	return obj{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": obj{"name": fmt.Sprintf("pvc-%03d", i), "labels": obj{"app": "web"}}, "spec": spec}
}

// corpus is every generated case: StatefulSets (their templates are what revision hashes see), pods and
// claims (what the replay creates and the controller reads).
func corpus() []testCase {
	var out []testCase
	for i := 0; i < 170; i++ {
		out = append(out, testCase{fmt.Sprintf("sts-%03d", i), "StatefulSet", statefulSet(i)})
	}
	for i := 0; i < 40; i++ {
		out = append(out, testCase{fmt.Sprintf("pod-%03d", i), "Pod", pod(i)})
	}
	for i := 0; i < 30; i++ {
		out = append(out, testCase{fmt.Sprintf("pvc-%03d", i), "PersistentVolumeClaim", claim(i)})
	}
	return out
}

package wasm_test

import (
	"fmt"
	"strings"
)

// rollingUpdateSnapshot builds a snapshot of a settled RollingUpdate StatefulSet
// "web" with n Running, Ready pods at revision web-7b9c6d5f4 (image 0.27) whose
// template has just changed to image 0.28, so one reconcile does real work:
// it creates the new ControllerRevision, deletes the highest-ordinal pod to
// start the rollout, and updates the status. Pods look like what the API
// server returns (about 2 KB each).
func rollingUpdateSnapshot(n int) []byte {
	const (
		uid    = "6f1c2f0e-8a55-4d5e-9b3c-0d1e2a3b4c5d"
		oldRev = "web-7b9c6d5f4"
	)
	container := func(image string) string {
		return `{"name":"nginx","image":"registry.k8s.io/nginx-slim:` + image + `","ports":[{"name":"web","containerPort":80,"protocol":"TCP"}],` +
			`"resources":{},"volumeMounts":[{"name":"data","mountPath":"/usr/share/nginx/html"}],` +
			`"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}`
	}
	podSpecTail := `"volumes":[{"name":"data","emptyDir":{}}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",` +
		`"securityContext":{},"schedulerName":"default-scheduler"`
	template := func(image string) string {
		return `{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[` + container(image) + `],` + podSpecTail + `}}`
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":{"kind":"StatefulSet","apiVersion":"apps/v1",`+
		`"metadata":{"name":"web","namespace":"default","uid":%q,"resourceVersion":"90210","generation":2,"creationTimestamp":"2026-04-01T00:00:00Z","labels":{"app":"web"}},`+
		`"spec":{"replicas":%d,"selector":{"matchLabels":{"app":"web"}},"template":%s,"serviceName":"web","podManagementPolicy":"OrderedReady",`+
		`"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0,"maxUnavailable":1}},"revisionHistoryLimit":10,`+
		`"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"}},`+
		`"status":{"observedGeneration":1,"replicas":%d,"readyReplicas":%d,"currentReplicas":%d,"updatedReplicas":%d,`+
		`"currentRevision":%q,"updateRevision":%q,"collisionCount":0,"availableReplicas":%d}},`,
		uid, n, template("0.28"), n, n, n, n, oldRev, oldRev, n)

	fmt.Fprintf(&b, `"revisions":[{"kind":"ControllerRevision","apiVersion":"apps/v1","metadata":{"name":%q,"namespace":"default",`+
		`"uid":"rev-1","resourceVersion":"100","creationTimestamp":"2026-04-01T00:00:00Z","labels":{"app":"web","controller.kubernetes.io/hash":"7b9c6d5f4"},`+
		`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":%q,"controller":true,"blockOwnerDeletion":true}]},`+
		`"data":{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[%s],%s}}}},"revision":1}],`,
		oldRev, uid, container("0.27"), podSpecTail)

	b.WriteString(`"pods":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		name := fmt.Sprintf("web-%d", i)
		fmt.Fprintf(&b, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":%q,"generateName":"web-","namespace":"default",`+
			`"uid":"pod-%08d-0000-4000-8000-000000000000","resourceVersion":"%d","creationTimestamp":"2026-04-01T00:%02d:%02dZ",`+
			`"labels":{"app":"web","apps.kubernetes.io/pod-index":"%d","controller-revision-hash":%q,"statefulset.kubernetes.io/pod-name":%q},`+
			`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":%q,"controller":true,"blockOwnerDeletion":true}]},`+
			`"spec":{"containers":[%s],%s,"nodeName":"node-%d","hostname":%q,"subdomain":"web","serviceAccountName":"default",`+
			`"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},`+
			`{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},`+
			`"status":{"phase":"Running","conditions":[`+
			`{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"},`+
			`{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"},`+
			`{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"},`+
			`{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"},`+
			`{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"}],`+
			`"hostIP":"10.0.0.%d","podIP":"10.244.%d.%d","podIPs":[{"ip":"10.244.%d.%d"}],"startTime":"2026-04-01T01:00:00Z",`+
			`"containerStatuses":[{"name":"nginx","state":{"running":{"startedAt":"2026-04-01T01:00:01Z"}},"lastState":{},"ready":true,"restartCount":0,`+
			`"image":"registry.k8s.io/nginx-slim:0.27","imageID":"registry.k8s.io/nginx-slim@sha256:0000000000000000000000000000000000000000000000000000000000000000",`+
			`"containerID":"containerd://%064d","started":true}],"qosClass":"BestEffort"}}`,
			name, i, 1000+i, (i/60)%60, i%60, i, oldRev, name, uid, container("0.27"), podSpecTail,
			i%16, name, i%250, i/250, i%250, i/250, i%250, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

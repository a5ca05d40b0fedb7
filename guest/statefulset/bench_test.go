package statefulset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// benchSnapshot is a settled set of n Ready pods (one claim template each, claims bound) whose
// template just changed: one sync creates a revision, deletes the top pod and writes status.
func benchSnapshot(n int) []byte {
	base := genSnapshotSettled(n)
	return base
}

func genSnapshotSettled(n int) []byte {
	const uid = "9d3b1a52-3c1e-4f8e-9a57-5b0c2f6d7e11"
	tmpl := func(image string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			"spec": map[string]any{
				"containers": []any{map[string]any{"name": "nginx", "image": image, "resources": map[string]any{},
					"ports":                  []any{map[string]any{"name": "web", "containerPort": 80, "protocol": "TCP"}},
					"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}},
				"restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
				"securityContext": map[string]any{}, "schedulerName": "default-scheduler",
			},
		}
	}
	oldData, _ := revisionPatch(toValue(tmpl("nginx:1.25")))
	oldName := revisionName("web", hashRevision(oldData, 0))
	var data any
	json.Unmarshal(oldData, &data)
	owner := []any{map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": uid, "controller": true, "blockOwnerDeletion": true}}
	var pods, claims []any
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("web-%d", i)
		spec := tmpl("nginx:1.25")["spec"].(map[string]any)
		spec["hostname"], spec["subdomain"] = name, "web"
		spec["volumes"] = []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "data-" + name}}}
		pods = append(pods, map[string]any{
			"metadata": map[string]any{"name": name, "generateName": "web-", "namespace": "default", "uid": fmt.Sprintf("pod-%d", i),
				"resourceVersion": "100", "creationTimestamp": "2026-11-22T09:00:00Z", "ownerReferences": owner,
				"labels": map[string]any{"app": "web", "apps.kubernetes.io/pod-index": fmt.Sprint(i), "controller-revision-hash": oldName, "statefulset.kubernetes.io/pod-name": name}},
			"spec": spec,
			"status": map[string]any{"phase": "Running", "startTime": "2026-11-22T09:00:05Z", "conditions": []any{
				map[string]any{"type": "Initialized", "status": "True", "lastProbeTime": nil, "lastTransitionTime": "2026-11-22T09:00:05Z"},
				map[string]any{"type": "Ready", "status": "True", "lastProbeTime": nil, "lastTransitionTime": "2026-11-22T09:00:05Z"},
				map[string]any{"type": "ContainersReady", "status": "True", "lastProbeTime": nil, "lastTransitionTime": "2026-11-22T09:00:05Z"},
				map[string]any{"type": "PodScheduled", "status": "True", "lastProbeTime": nil, "lastTransitionTime": "2026-11-22T09:00:05Z"}}},
		})
		claims = append(claims, map[string]any{
			"metadata": map[string]any{"name": "data-" + name, "namespace": "default", "uid": fmt.Sprintf("pvc-%d", i), "resourceVersion": "100", "labels": map[string]any{"app": "web"}},
			"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}, "volumeMode": "Filesystem"},
			"status":   map[string]any{"phase": "Bound"},
		})
	}
	snap := map[string]any{
		"abi": 1, "now": "2026-11-22T10:00:00Z",
		"statefulSet": map[string]any{
			"metadata": map[string]any{"name": "web", "namespace": "default", "uid": uid, "generation": 2},
			"spec": map[string]any{"replicas": n, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}, "template": tmpl("nginx:1.26"),
				"serviceName": "web", "podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10,
				"updateStrategy":                       map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": 0, "maxUnavailable": 1}},
				"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"},
				"volumeClaimTemplates": []any{map[string]any{"metadata": map[string]any{"name": "data"},
					"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}, "volumeMode": "Filesystem"}}}},
			"status": map[string]any{"observedGeneration": 1, "replicas": n, "readyReplicas": n, "currentReplicas": n, "updatedReplicas": n, "availableReplicas": n,
				"currentRevision": oldName, "updateRevision": oldName, "collisionCount": 0},
		},
		"pods": pods, "claims": claims,
		"revisions": []any{map[string]any{"metadata": map[string]any{"name": oldName, "namespace": "default", "uid": "rev-1", "resourceVersion": "100", "ownerReferences": owner,
			"labels": map[string]any{"app": "web", "controller.kubernetes.io/hash": oldName[4:]}}, "data": data, "revision": 1}},
	}
	b, _ := json.Marshal(snap)
	return b
}

func BenchmarkReconcile(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 5000} {
		in := benchSnapshot(n)
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Reconcile(in)
			}
		})
	}
}

// The benchmark snapshot produces the expected plan shape.
func TestBenchSnapshotPlan(t *testing.T) {
	var p struct {
		Actions []struct{ Verb, Kind, Name string }
		Error   any
	}
	if err := json.Unmarshal(Reconcile(benchSnapshot(100)), &p); err != nil {
		t.Fatal(err)
	}
	if p.Error != nil || len(p.Actions) != 3 || p.Actions[1].Verb != "delete" || p.Actions[1].Name != "web-99" {
		t.Errorf("plan: %+v", p)
	}
}

// BenchmarkReconcileCached is the same snapshots through an instance's cache: sent whole each time (what a
// host without sessions pays for the cache), and by reference after the first (a session's steady state).
func BenchmarkReconcileCached(b *testing.B) {
	for _, n := range []int{100, 1000} {
		in := benchSnapshot(n)
		b.Run(fmt.Sprintf("whole/pods=%d", n), func(b *testing.B) {
			var c ObjectCache
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ReconcileCached(&c, in)
			}
		})
		var s map[string]any
		if err := json.Unmarshal(in, &s); err != nil {
			b.Fatal(err)
		}
		for _, list := range []string{"pods", "revisions", "claims"} {
			objs, _ := s[list].([]any)
			refs := make([]any, len(objs))
			for i, o := range objs {
				md := o.(map[string]any)["metadata"].(map[string]any)
				refs[i] = map[string]any{"unchanged": map[string]any{"uid": md["uid"], "resourceVersion": md["resourceVersion"]}}
			}
			s[list] = refs
		}
		byRef, _ := json.Marshal(s)
		// a delta: one pod changed (its status, under a new resourceVersion)
		var whole map[string]any
		if err := json.Unmarshal(in, &whole); err != nil {
			b.Fatal(err)
		}
		benchDelta(b, fmt.Sprintf("delta/pods=%d", n), in, onePodChanged(whole, n))
		// a settled set (template unchanged), one pod's status changed: the held sync of a rollout waiting
		settled, settledDelta := settledSnapshot(b, n)
		benchDelta(b, fmt.Sprintf("delta-settled/pods=%d", n), settled, settledDelta)
		b.Run(fmt.Sprintf("references/pods=%d", n), func(b *testing.B) {
			var c ObjectCache
			ReconcileCached(&c, in)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if out := ReconcileCached(&c, byRef); len(out) == 0 || bytes.Contains(out, []byte(`"error":{`)) {
					b.Fatalf("no plan by reference: %.300s", out)
				}
			}
		})
	}
}

// benchDelta measures delta after a whole snapshot in (the instance's steady state in a session).
func benchDelta(b *testing.B, name string, in, delta []byte) {
	b.Run(name, func(b *testing.B) {
		var c ObjectCache
		ReconcileCached(&c, in)
		b.SetBytes(int64(len(delta)))
		b.ReportAllocs()
		b.ResetTimer()
		cpu := processCPU()
		for i := 0; i < b.N; i++ {
			if out := ReconcileCached(&c, delta); len(out) == 0 || bytes.Contains(out, []byte(`"error":{`)) {
				b.Fatalf("no plan by delta: %.300s", out)
			}
		}
		if cpu > 0 { // the process's CPU time: on a loaded machine, wall time counts the waits for a core
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		}
	})
}

// onePodChanged is the delta snapshot after whole (a decoded snapshot of n pods) in which pod n/2 got a new
// resourceVersion; it changes that pod in whole.
func onePodChanged(whole map[string]any, n int) []byte {
	pod := whole["pods"].([]any)[n/2].(map[string]any)
	pod["metadata"].(map[string]any)["resourceVersion"] = "999999"
	delta := map[string]any{}
	for k, v := range whole {
		delta[k] = v
	}
	delta["pods"], delta["revisions"], delta["claims"] = []any{pod}, []any{}, []any{}
	delta["delta"] = map[string]any{"removed": map[string]any{}, "counts": map[string]any{"pods": n,
		"revisions": len(whole["revisions"].([]any)), "claims": len(whole["claims"].([]any))}}
	d, _ := json.Marshal(delta)
	return d
}

// settledSnapshot is a settled set of n pods (its template the pods'), whole, and the delta of one pod changed.
func settledSnapshot(b *testing.B, n int) (whole, delta []byte) {
	var s map[string]any
	if err := json.Unmarshal(genSnapshotSettled(n), &s); err != nil {
		b.Fatal(err)
	}
	tmpl := s["statefulSet"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)
	tmpl["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "nginx:1.25"
	whole, _ = json.Marshal(s)
	return whole, onePodChanged(s, n)
}

package statefulset

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// genSnapshot builds a random but plausible ABI v1 snapshot (API-server-shaped objects) from a
// seed: a set with random policies, pods in every state, revisions (real ones for the template
// variants, some stale or orphaned, some colliding), claims with random owners.
func genSnapshot(seed int64) []byte {
	r := rand.New(rand.NewSource(seed))
	const setUID = "9d3b1a52-3c1e-4f8e-9a57-5b0c2f6d7e11"
	setName := "web"
	if r.Intn(8) == 0 {
		setName = "db"
	}
	ns := "default"
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ts := func(d int) string { return now.Add(time.Duration(d) * time.Second).Format(time.RFC3339) }
	pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	uidN := 0
	uid := func() string { uidN++; return fmt.Sprintf("00000000-0000-4000-8000-%012d", uidN) }

	images := []string{"nginx:1.25", "nginx:1.26", "nginx:1.27", "nginx:1.28", "nginx:1.29", "nginx:latest"}
	template := func(img int) map[string]any {
		t := map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			"spec": map[string]any{
				"containers": []any{map[string]any{
					"name": "nginx", "image": images[img], "resources": map[string]any{},
					"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
				}},
				"restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
				"securityContext": map[string]any{}, "schedulerName": "default-scheduler",
			},
		}
		if img == 2 {
			t["metadata"].(map[string]any)["annotations"] = map[string]any{"note": "<&>"}
		}
		return t
	}
	replicas := r.Intn(7)
	start := 0
	if r.Intn(4) == 0 {
		start = r.Intn(4)
	}
	policy := pick("OrderedReady", "Parallel")
	strategy := map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": 0, "maxUnavailable": 1}}
	switch r.Intn(8) {
	case 0:
		strategy = map[string]any{"type": "OnDelete"}
	case 1:
		strategy = map[string]any{"type": "Recreate"}
	case 2:
		strategy = map[string]any{"type": "RollingUpdate"}
	case 3, 4:
		ru := map[string]any{"partition": r.Intn(5)}
		switch r.Intn(3) {
		case 0:
			ru["maxUnavailable"] = 1 + r.Intn(3)
		case 1:
			ru["maxUnavailable"] = pick("40%", "50%", "10%", "100%", "0%", "abc")
		}
		strategy = map[string]any{"type": "RollingUpdate", "rollingUpdate": ru}
	}
	minReady := 0
	if r.Intn(4) == 0 {
		minReady = pick2(r, 5, 10, 30)
	}
	whenDeleted, whenScaled := pick("Retain", "Delete"), pick("Retain", "Delete")
	nvct := r.Intn(3)
	var vcts []any
	vctNames := []string{"data", "logs"}
	for i := 0; i < nvct; i++ {
		vcts = append(vcts, map[string]any{
			"metadata": map[string]any{"name": vctNames[i]},
			"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}},
				"volumeMode": "Filesystem"},
			"status": map[string]any{"phase": "Pending"},
		})
	}
	nImg := 3
	if r.Intn(4) == 0 {
		nImg = 6
	}
	curImg := r.Intn(nImg)
	setTemplate := template(curImg)
	if r.Intn(12) == 0 {
		setTemplate["metadata"].(map[string]any)["labels"] = map[string]any{"app": "web", "tier": "x"}
	}
	if r.Intn(10) == 0 {
		setTemplate["metadata"].(map[string]any)["creationTimestamp"] = nil
	}
	selector := map[string]any{"matchLabels": map[string]any{"app": "web"}}
	switch r.Intn(12) {
	case 0:
		selector = map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "In", "values": []any{"web", "x"}}}}
	case 1:
		selector = map[string]any{"matchLabels": map[string]any{"app": "web"}, "matchExpressions": []any{map[string]any{"key": "tier", "operator": "DoesNotExist"}}}
	case 2:
		selector = map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "Bogus"}}}
	}
	spec := map[string]any{
		"replicas":                             replicas,
		"selector":                             selector,
		"template":                             setTemplate,
		"serviceName":                          setName,
		"podManagementPolicy":                  policy,
		"updateStrategy":                       strategy,
		"revisionHistoryLimit":                 pick2(r, 10, 10, 2, 0, 1),
		"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": whenDeleted, "whenScaled": whenScaled},
	}
	if minReady > 0 {
		spec["minReadySeconds"] = minReady
	}
	if start > 0 || r.Intn(6) == 0 {
		spec["ordinals"] = map[string]any{"start": start}
	}
	if nvct > 0 {
		spec["volumeClaimTemplates"] = vcts
	}
	ownerRef := func(kind, name, u string) map[string]any {
		api := "apps/v1"
		if kind == "Pod" {
			api = "v1"
		}
		return map[string]any{"apiVersion": api, "kind": kind, "name": name, "uid": u, "controller": true, "blockOwnerDeletion": true}
	}

	// revisions: one per template variant, with real data and names.
	type revInfo struct {
		name string
		img  int
	}
	var revs []any
	var revInfos []revInfo
	nrev := r.Intn(4)
	if nImg == 6 {
		nrev = r.Intn(8)
	}
	used := map[int]bool{}
	for i := 0; i < nrev; i++ {
		img := r.Intn(nImg)
		if used[img] {
			continue
		}
		used[img] = true
		tv := toValue(template(img))
		var data []byte
		switch r.Intn(8) {
		case 0: // 1.33-era serialisation
			m := tv.G("metadata")
			m.Set("creationTimestamp", jsonv.NullV())
			tv.Set("metadata", m)
			data, _ = jsonv.Canonical(jsonv.Obj(jsonv.M("spec", jsonv.Obj(jsonv.M("template", withPatch(tv))))))
		case 1: // a revision recorded before a field was defaulted
			c := tv.Path("spec", "containers").A[0]
			c.Delete("imagePullPolicy")
			c.Delete("terminationMessagePolicy")
			sp := tv.G("spec")
			sp.Set("containers", jsonv.Arr(c))
			sp.Delete("schedulerName")
			tv.Set("spec", sp)
			data, _ = jsonv.Canonical(jsonv.Obj(jsonv.M("spec", jsonv.Obj(jsonv.M("template", withPatch(tv))))))
		default:
			data, _ = revisionPatch(tv)
		}
		cc := int32(0)
		if r.Intn(8) == 0 {
			cc = 1
		}
		hash := hashRevision(data, cc)
		name := revisionName(setName, hash)
		var dataAny any
		_ = json.Unmarshal(data, &dataAny)
		meta := map[string]any{
			"name": name, "namespace": ns, "uid": uid(), "resourceVersion": "100001", "creationTimestamp": ts(-100 + i),
			"labels": map[string]any{"app": "web", "controller.kubernetes.io/hash": hash},
		}
		switch r.Intn(8) {
		case 0: // orphan
		case 1:
			meta["ownerReferences"] = []any{ownerRef("StatefulSet", "other", "11111111-1111-4111-8111-111111111111")}
		default:
			meta["ownerReferences"] = []any{ownerRef("StatefulSet", setName, setUID)}
		}
		if r.Intn(10) == 0 {
			meta["labels"] = map[string]any{"app": "other"}
		}
		revs = append(revs, map[string]any{"metadata": meta, "data": dataAny, "revision": 1 + i + r.Intn(2)})
		revInfos = append(revInfos, revInfo{name, img})
	}
	if r.Intn(10) == 0 && !used[curImg] {
		// a colliding revision: the name the current template would get, other data
		tv := toValue(template(curImg))
		data, _ := revisionPatch(tv)
		hash := hashRevision(data, 0)
		other, _ := revisionPatch(toValue(template((curImg + 1) % 3)))
		var dataAny any
		_ = json.Unmarshal(other, &dataAny)
		revs = append(revs, map[string]any{"metadata": map[string]any{
			"name": revisionName(setName, hash), "namespace": ns, "uid": uid(), "creationTimestamp": ts(-50),
			"labels": map[string]any{"app": "web"}, "ownerReferences": []any{ownerRef("StatefulSet", setName, setUID)},
		}, "data": dataAny, "revision": 7})
	}

	status := map[string]any{"replicas": r.Intn(replicas + 2), "availableReplicas": r.Intn(replicas + 1), "observedGeneration": 1}
	if len(revInfos) > 0 && r.Intn(4) != 0 {
		ri := revInfos[r.Intn(len(revInfos))]
		status["currentRevision"] = ri.name
		status["updateRevision"] = revInfos[r.Intn(len(revInfos))].name
		status["currentReplicas"] = r.Intn(replicas + 1)
		status["updatedReplicas"] = r.Intn(replicas + 1)
		status["readyReplicas"] = r.Intn(replicas + 1)
	}
	if r.Intn(5) == 0 {
		status["collisionCount"] = r.Intn(2)
	}
	if r.Intn(6) == 0 {
		status = map[string]any{"replicas": 0, "availableReplicas": 0}
	}
	if r.Intn(8) == 0 {
		status["conditions"] = []any{map[string]any{"type": "Progressing", "status": "True", "lastTransitionTime": ts(-30),
			"reason": "RecreateInProgress", "message": "Deleting old revision pods"}}
	}
	setMeta := map[string]any{"name": setName, "namespace": ns, "uid": setUID, "resourceVersion": "1000", "generation": 1 + r.Intn(2),
		"creationTimestamp": ts(-1000), "labels": map[string]any{"app": "web"}}
	if r.Intn(6) == 0 {
		setMeta["annotations"] = map[string]any{"team": "a"}
	}
	if r.Intn(15) == 0 {
		setMeta["deletionTimestamp"] = ts(-5)
	}
	set := map[string]any{"kind": "StatefulSet", "apiVersion": "apps/v1", "metadata": setMeta, "spec": spec, "status": status}

	// pods
	var pods []any
	podOrds := map[int]bool{}
	npods := r.Intn(replicas + 4)
	for i := 0; i < npods; i++ {
		ord := start + r.Intn(replicas+3) - 1
		if ord < 0 {
			ord = 0
		}
		if podOrds[ord] {
			continue
		}
		podOrds[ord] = true
		name := podName(setName, int64(ord))
		switch r.Intn(25) {
		case 0:
			if !podOrds[-100] {
				podOrds[-100] = true
				name = setName + "-x" // unparsable ordinal
			}
		case 1:
			if !podOrds[-200-ord] {
				podOrds[-200-ord] = true
				name = setName + "-0" + fmt.Sprint(ord) // leading zero
			}
		}
		img := curImg
		revName := ""
		if len(revInfos) > 0 {
			ri := revInfos[r.Intn(len(revInfos))]
			img, revName = ri.img, ri.name
			if r.Intn(15) == 0 {
				revName = setName + "-gone" // a revision that no longer exists
			}
		}
		labels := map[string]any{"app": "web", "statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": fmt.Sprint(ord)}
		if revName != "" {
			labels["controller-revision-hash"] = revName
		}
		if r.Intn(12) == 0 {
			delete(labels, "statefulset.kubernetes.io/pod-name")
		}
		if r.Intn(20) == 0 {
			labels["app"] = "other"
		}
		pns := ns
		if r.Intn(30) == 0 {
			pns = "other"
		}
		meta := map[string]any{"name": name, "generateName": setName + "-", "namespace": pns, "uid": uid(), "resourceVersion": "100008",
			"creationTimestamp": ts(-200), "labels": labels}
		switch r.Intn(12) {
		case 0: // orphan
		case 1:
			meta["ownerReferences"] = []any{ownerRef("StatefulSet", "other", "11111111-1111-4111-8111-111111111111")}
		default:
			meta["ownerReferences"] = []any{ownerRef("StatefulSet", setName, setUID)}
		}
		if r.Intn(10) == 0 {
			meta["deletionTimestamp"] = ts(-1)
			meta["deletionGracePeriodSeconds"] = 30
		}
		pspec := template(img)["spec"].(map[string]any)
		pspec["hostname"] = name
		pspec["subdomain"] = setName
		pspec["enableServiceLinks"] = true
		var vols []any
		for v := 0; v < nvct; v++ {
			if r.Intn(10) == 0 {
				continue
			}
			switch r.Intn(20) {
			case 0:
				vols = append(vols, map[string]any{"name": vctNames[v], "emptyDir": map[string]any{}})
			case 1:
				vols = append(vols, map[string]any{"name": vctNames[v], "persistentVolumeClaim": map[string]any{"claimName": "wrong"}})
			default:
				vols = append(vols, map[string]any{"name": vctNames[v], "persistentVolumeClaim": map[string]any{"claimName": claimName(vctNames[v], setName, int64(ord))}})
			}
			if r.Intn(10) == 0 {
				vols = append(vols, map[string]any{"name": "scratch", "emptyDir": map[string]any{}})
			}
		}
		if len(vols) > 0 {
			pspec["volumes"] = vols
		}
		phase := pick("Running", "Running", "Running", "Pending", "Failed", "Succeeded", "Running")
		ready := (phase == "Running" && r.Intn(5) != 0) || (phase == "Pending" && r.Intn(6) == 0)
		readyStr := "False"
		if ready {
			readyStr = "True"
		}
		conds := []any{
			map[string]any{"type": "PodScheduled", "status": "True", "lastProbeTime": nil, "lastTransitionTime": ts(-100)},
			map[string]any{"type": "Ready", "status": readyStr, "lastProbeTime": nil, "lastTransitionTime": ts(-pick2(r, 1, 5, 9, 10, 11, 100, -3))},
		}
		pstatus := map[string]any{"phase": phase, "conditions": conds, "startTime": ts(-100)}
		if r.Intn(30) == 0 {
			pstatus = map[string]any{}
		}
		pods = append(pods, map[string]any{"metadata": meta, "spec": pspec, "status": pstatus})
	}

	// claims
	var claims []any
	for ord := start - 1; ord < start+replicas+2; ord++ {
		for v := 0; v < nvct; v++ {
			if ord < 0 || r.Intn(3) == 0 {
				continue
			}
			name := claimName(vctNames[v], setName, int64(ord))
			meta := map[string]any{"name": name, "namespace": ns, "uid": uid(), "resourceVersion": "100020", "creationTimestamp": ts(-300),
				"labels": map[string]any{"app": "web"}}
			var refs []any
			switch r.Intn(7) {
			case 0:
				refs = append(refs, ownerRef("StatefulSet", setName, setUID))
			case 1:
				refs = append(refs, ownerRef("Pod", podName(setName, int64(ord)), "00000000-0000-4000-8000-999999999999"))
			case 2:
				refs = append(refs, ownerRef("StatefulSet", "other", "11111111-1111-4111-8111-111111111111"))
			case 3:
				ref := ownerRef("StatefulSet", setName, setUID)
				delete(ref, "controller")
				refs = append(refs, ref)
			}
			if len(refs) > 0 {
				meta["ownerReferences"] = refs
			}
			if r.Intn(12) == 0 {
				meta["deletionTimestamp"] = ts(-3)
				meta["finalizers"] = []any{"kubernetes.io/pvc-protection"}
			}
			claims = append(claims, map[string]any{"metadata": meta,
				"spec":   map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}, "volumeMode": "Filesystem"},
				"status": map[string]any{"phase": "Bound"}})
		}
	}
	nowStr := now.Format(time.RFC3339)
	if r.Intn(8) == 0 {
		nowStr = now.Add(time.Duration(r.Intn(1000)) * time.Millisecond).Format(time.RFC3339Nano)
	}
	snap := map[string]any{"abi": 1, "now": nowStr, "statefulSet": set, "pods": nonNil(pods), "revisions": nonNil(revs), "claims": nonNil(claims)}
	if r.Intn(3) == 0 {
		f := map[string]any{}
		for _, g := range gateDefaults {
			if r.Intn(2) == 0 {
				f[g.name] = r.Intn(2) == 0
			}
		}
		snap["features"] = f
	}
	// shuffle pods (informer order is undefined)
	r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	var b []byte
	var err error
	if r.Intn(4) == 0 {
		b, err = json.MarshalIndent(snap, "", "  ")
	} else {
		b, err = json.Marshal(snap)
	}
	if err != nil {
		panic(err)
	}
	return b
}

func nonNil(a []any) []any {
	if a == nil {
		return []any{}
	}
	return a
}

func pick2(r *rand.Rand, xs ...int) int { return xs[r.Intn(len(xs))] }

func toValue(x any) jsonv.Value {
	b, err := json.Marshal(x)
	if err != nil {
		panic(err)
	}
	v, err := jsonv.Parse(b)
	if err != nil {
		panic(err)
	}
	return v
}

func withPatch(t jsonv.Value) jsonv.Value {
	t = t.Clone()
	t.Set("$patch", jsonv.Str("replace"))
	return t
}

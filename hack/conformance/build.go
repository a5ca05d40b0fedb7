package main

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// t0 is the start of every scenario's clock.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func parseTS(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		fatalf("bad timestamp %q", s)
	}
	return t
}

// uidFor derives a distinct, deterministic UID from a key.
func uidFor(key string) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	s := h.Sum64()
	h2 := fnv.New32a()
	h2.Write([]byte("uid/" + key))
	return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", h2.Sum32(), (s>>48)&0xffff, (s>>36)&0xfff, (s>>24)&0xfff, s&0xffffffffffff)
}

const policyOrdered, policyParallel = "OrderedReady", "Parallel"

func polShort(p string) string {
	if p == policyParallel {
		return "parallel"
	}
	return "ordered"
}

// Opts describe a StatefulSet scenario base.
type Opts struct {
	Key          string // distinguishes UIDs between scenarios
	Replicas     int
	Policy       string
	Strategy     M // nil: API default (RollingUpdate)
	MinReady     int
	VCT          int    // number of volumeClaimTemplates (0..2)
	Retention    string // "RR","RD","DR","DD" = whenDeleted,whenScaled (R=Retain, D=Delete); "" = unset
	Start        int    // spec.ordinals.start; 0 = unset
	HistoryLimit int    // 0 = unset (API default 10); use -1 for an explicit 0
	NeverReady   bool
	Image        string
	Features     M
	CollisionCnt int
}

func retentionName(r string) string {
	w := func(c byte) string {
		if c == 'D' {
			return "delete"
		}
		return "retain"
	}
	return w(r[0]) + "-" + w(r[1])
}

func retentionPolicy(r string) M {
	w := func(c byte) string {
		if c == 'D' {
			return "Delete"
		}
		return "Retain"
	}
	return M{"whenDeleted": w(r[0]), "whenScaled": w(r[1])}
}

var claimNames = []string{"data", "logs"}

// newSnap builds a fresh (not yet defaulted) snapshot: a new set, no pods.
func newSnap(o Opts) M {
	if o.Image == "" {
		o.Image = "registry.k8s.io/nginx-slim:0.27"
	}
	if o.Policy == "" {
		o.Policy = policyOrdered
	}
	container := M{
		"name":  "nginx",
		"image": o.Image,
		"ports": []any{M{"name": "web", "containerPort": num(80)}},
	}
	var vcts []any
	var mounts []any
	for i := 0; i < o.VCT; i++ {
		n := claimNames[i]
		mounts = append(mounts, M{"name": n, "mountPath": "/var/lib/" + n})
		vcts = append(vcts, M{
			"metadata": M{"name": n},
			"spec": M{
				"accessModes": []any{"ReadWriteOnce"},
				"resources":   M{"requests": M{"storage": "1Gi"}},
			},
		})
	}
	if len(mounts) > 0 {
		container["volumeMounts"] = mounts
	}
	tmplMeta := M{"labels": M{"app": "web"}}
	if o.NeverReady {
		tmplMeta["annotations"] = M{"oracle.test/never-ready": "true"}
	}
	spec := M{
		"replicas":            num(o.Replicas),
		"selector":            M{"matchLabels": M{"app": "web"}},
		"serviceName":         "web",
		"podManagementPolicy": o.Policy,
		"template": M{
			"metadata": tmplMeta,
			"spec":     M{"containers": []any{container}},
		},
	}
	if o.Strategy != nil {
		spec["updateStrategy"] = clone(o.Strategy)
	}
	if o.MinReady > 0 {
		spec["minReadySeconds"] = num(o.MinReady)
	}
	if len(vcts) > 0 {
		spec["volumeClaimTemplates"] = vcts
	}
	if o.Retention != "" {
		spec["persistentVolumeClaimRetentionPolicy"] = retentionPolicy(o.Retention)
	}
	if o.Start > 0 {
		spec["ordinals"] = M{"start": num(o.Start)}
	}
	if o.HistoryLimit > 0 {
		spec["revisionHistoryLimit"] = num(o.HistoryLimit)
	} else if o.HistoryLimit < 0 {
		spec["revisionHistoryLimit"] = num(0)
	}
	status := M{"replicas": num(0), "availableReplicas": num(0)}
	if o.CollisionCnt > 0 {
		status["collisionCount"] = num(o.CollisionCnt)
	}
	s := M{
		"now": ts(t0),
		"statefulSet": M{
			"apiVersion": "apps/v1",
			"kind":       "StatefulSet",
			"metadata": M{
				"name":              "web",
				"namespace":         "default",
				"uid":               uidFor("set/" + o.Key),
				"resourceVersion":   "1000",
				"generation":        num(1),
				"creationTimestamp": ts(t0.Add(-5 * time.Second)),
				"labels":            M{"app": "web"},
			},
			"spec":   spec,
			"status": status,
		},
		"pods":      []any{},
		"revisions": []any{},
		"claims":    []any{},
	}
	if len(o.Features) > 0 {
		s["features"] = clone(o.Features)
	}
	return s
}

// ---- snapshot accessors and mutations ----

func setOf(s M) M      { return jsonobj.AsObj(s["statefulSet"]) }
func podsOf(s M) []any { return jsonobj.AsArr(s["pods"]) }

func pod(s M, name string) M {
	for _, p := range podsOf(s) {
		if jsonobj.GetStr(p, "metadata.name") == name {
			return jsonobj.AsObj(p)
		}
	}
	fatalf("no pod %s", name)
	return nil
}

func claim(s M, name string) M {
	for _, c := range jsonobj.AsArr(s["claims"]) {
		if jsonobj.GetStr(c, "metadata.name") == name {
			return jsonobj.AsObj(c)
		}
	}
	fatalf("no claim %s", name)
	return nil
}

func removePod(s M, name string) {
	pod(s, name)
	var out []any
	for _, p := range podsOf(s) {
		if jsonobj.GetStr(p, "metadata.name") != name {
			out = append(out, p)
		}
	}
	if out == nil {
		out = []any{}
	}
	s["pods"] = out
}

func removeClaim(s M, name string) {
	claim(s, name)
	var out []any
	for _, c := range jsonobj.AsArr(s["claims"]) {
		if jsonobj.GetStr(c, "metadata.name") != name {
			out = append(out, c)
		}
	}
	if out == nil {
		out = []any{}
	}
	s["claims"] = out
}

func addPod(s M, p M) { s["pods"] = append(podsOf(s), p) }

func bumpGen(s M) {
	set(setOf(s), "metadata.generation", num(getInt(setOf(s), "metadata.generation")+1))
}

// bump changes the pod template image (a new revision) and bumps the generation.
func bump(s M, image string) M {
	c := jsonobj.AsObj(jsonobj.AsArr(jsonobj.Get(setOf(s), "spec.template.spec.containers"))[0])
	c["image"] = image
	bumpGen(s)
	return s
}

func image(s M) string {
	return jsonobj.GetStr(jsonobj.AsArr(jsonobj.Get(setOf(s), "spec.template.spec.containers"))[0], "image")
}

func scaleTo(s M, n int) M {
	set(setOf(s), "spec.replicas", num(n))
	bumpGen(s)
	return s
}

func setSpec(s M, path string, v any) M {
	set(setOf(s), "spec."+path, v)
	bumpGen(s)
	return s
}

func setNow(s M, t time.Time) M { s["now"] = ts(t); return s }

func nowOf(s M) time.Time { return parseTS(jsonobj.GetStr(s, "now")) }

// later moves the snapshot clock forward (a user change some time after the world settled).
func later(s M, d time.Duration) M { return setNow(s, nowOf(s).Add(d)) }

func setFeatures(s M, f M) M {
	if len(f) == 0 {
		delete(s, "features")
	} else {
		s["features"] = clone(f)
	}
	return s
}

func setConds(p M, ready bool, at string) {
	st := "False"
	if ready {
		st = "True"
	}
	for _, c := range jsonobj.AsArr(jsonobj.Get(p, "status.conditions")) {
		co := jsonobj.AsObj(c)
		if t := co["type"]; t == "Ready" || t == "ContainersReady" {
			co["status"] = st
			co["lastTransitionTime"] = at
		}
	}
}

func markFailed(s M, name string) {
	p := pod(s, name)
	set(p, "status.phase", "Failed")
	setConds(p, false, ts(nowOf(s).Add(-3*time.Second)))
}

func markSucceeded(s M, name string) {
	p := pod(s, name)
	set(p, "status.phase", "Succeeded")
	setConds(p, false, ts(nowOf(s).Add(-3*time.Second)))
}

func markTerminating(s M, name string) {
	p := pod(s, name)
	set(p, "metadata.deletionTimestamp", ts(nowOf(s).Add(-2*time.Second)))
	set(p, "metadata.deletionGracePeriodSeconds", num(30))
}

func markNotReady(s M, name string) {
	p := pod(s, name)
	set(p, "status.phase", "Running")
	setConds(p, false, ts(nowOf(s).Add(-4*time.Second)))
}

func markPending(s M, name string) {
	p := pod(s, name)
	p["status"] = M{
		"phase": "Pending",
		"conditions": []any{M{
			"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
			"lastTransitionTime": ts(nowOf(s).Add(-4 * time.Second)),
		}},
	}
}

// readySince sets the Ready/ContainersReady transition time of a pod to now-age.
func readySince(s M, name string, age time.Duration) {
	p := pod(s, name)
	set(p, "status.phase", "Running")
	setConds(p, true, ts(nowOf(s).Add(-age)))
}

func podNames(s M) []string {
	var out []string
	for _, p := range podsOf(s) {
		out = append(out, jsonobj.GetStr(p, "metadata.name"))
	}
	return out
}

// renamePod clones pod `from` as a new pod `to` with a fresh uid and matching identity labels.
func clonePodAs(s M, from, to string) M {
	p := clone(pod(s, from))
	md := jsonobj.AsObj(p["metadata"])
	md["name"] = to
	md["uid"] = uidFor("pod/" + jsonobj.GetStr(setOf(s), "metadata.uid") + "/" + to)
	labels := jsonobj.AsObj(md["labels"])
	if _, ok := labels["statefulset.kubernetes.io/pod-name"]; ok {
		labels["statefulset.kubernetes.io/pod-name"] = to
	}
	if _, ok := labels["apps.kubernetes.io/pod-index"]; ok {
		if i := strings.LastIndex(to, "-"); i >= 0 {
			labels["apps.kubernetes.io/pod-index"] = to[i+1:]
		}
	}
	set(p, "spec.hostname", to)
	// claim volumes point at the new ordinal's claims
	for _, v := range jsonobj.AsArr(jsonobj.Get(p, "spec.volumes")) {
		if cn := jsonobj.GetStr(v, "persistentVolumeClaim.claimName"); cn != "" {
			set(jsonobj.AsObj(v), "persistentVolumeClaim.claimName", strings.TrimSuffix(cn, from)+to)
		}
	}
	return p
}

func revisionsOf(s M) []any { return jsonobj.AsArr(s["revisions"]) }

// latestRevision returns the revision with the highest .revision.
func latestRevision(s M) M {
	var best M
	for _, r := range revisionsOf(s) {
		if best == nil || getInt(r, "revision") > getInt(best, "revision") {
			best = jsonobj.AsObj(r)
		}
	}
	return best
}

func revisionByName(s M, name string) M {
	for _, r := range revisionsOf(s) {
		if jsonobj.GetStr(r, "metadata.name") == name {
			return jsonobj.AsObj(r)
		}
	}
	fatalf("no revision %s", name)
	return nil
}

// controllerRevisionHash reproduces history.HashControllerRevision for a revision whose data is
// raw JSON: FNV-32 (not 32a) over the raw bytes plus the decimal collision count, then the
// decimal digits mapped onto Kubernetes' safe alphabet.
func controllerRevisionHash(raw []byte, probe *int) string {
	h := fnv.New32()
	h.Write(raw)
	if probe != nil {
		h.Write([]byte(strconv.Itoa(*probe)))
	}
	const alphanums = "bcdfghjklmnpqrstvwxz2456789"
	d := strconv.FormatUint(uint64(h.Sum32()), 10)
	out := make([]byte, len(d))
	for i := 0; i < len(d); i++ {
		out[i] = alphanums[int(d[i])%len(alphanums)]
	}
	return string(out)
}

// renameRevision renames a revision everywhere it is referenced in a snapshot.
func renameRevision(s M, oldName, newName, newHash string) {
	r := revisionByName(s, oldName)
	set(r, "metadata.name", newName)
	jsonobj.AsObj(jsonobj.Get(r, "metadata.labels"))["controller.kubernetes.io/hash"] = newHash
	for _, p := range podsOf(s) {
		l := jsonobj.AsObj(jsonobj.Get(p, "metadata.labels"))
		if l["controller-revision-hash"] == oldName {
			l["controller-revision-hash"] = newName
		}
	}
	st := jsonobj.AsObj(jsonobj.Get(setOf(s), "status"))
	for _, k := range []string{"currentRevision", "updateRevision"} {
		if st[k] == oldName {
			st[k] = newName
		}
	}
}

package statefulset

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/inplaceready"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// The names hosts read (abi) are the module's.
func TestInPlaceNamesAreABIs(t *testing.T) {
	if annotationPodUpdatePolicy != abi.AnnotationPodUpdatePolicy || annotationInPlaceUpdate != abi.AnnotationInPlaceUpdate ||
		verbResize != abi.VerbResize || conditionInPlaceUpdateBlocked != abi.ConditionInPlaceUpdateBlocked ||
		policyInPlaceIfPossible != abi.PodUpdateInPlaceIfPossible || policyInPlaceOnly != abi.PodUpdateInPlaceOnly ||
		policyReCreate != abi.PodUpdateReCreate || reasonInPlaceUpdate != abi.EventInPlaceUpdate ||
		reasonRecreateNeeded != abi.EventRecreatingPod || reasonInPlaceBlocked != abi.EventInPlaceBlocked {
		t.Error("in-place-update's names differ from abi's")
	}
}

// inPlaceCase is the conformance case of a 5-pod OrderedReady rolling update (an image bump, web-4 first)
// with pod-update-policy, its template changed by edit (nil: the image bump only).
func inPlaceCase(t *testing.T, policy string, edit func(container map[string]any)) []byte {
	t.Helper()
	in := readCase(t, "rolling-update", "ordered-p0-mu-unset")
	if edit != nil {
		var v map[string]any
		_ = json.Unmarshal(in, &v)
		c := v["statefulSet"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		edit(c)
		in, _ = json.Marshal(v)
	}
	if policy != "" {
		in = annotate(t, in, annotationPodUpdatePolicy, policy)
	}
	return in
}

// inPlaceExtended reports whether the extended module's assertions apply; in the faithful build it checks
// that the module ignores the policy (the plan is the plan without it).
func inPlaceExtended(t *testing.T, in []byte) bool {
	t.Helper()
	if extendedBuild {
		return true
	}
	strip := func(b []byte) []byte { return withoutKey(t, b, annotationPodUpdatePolicy) }
	if d := diffJSON(strip(Reconcile(strip(in))), strip(Reconcile(in))); d != "" {
		t.Errorf("the faithful module's plan changed with pod-update-policy:\n%s", d)
	}
	return false
}

type inPlacePlan struct {
	Actions []struct {
		Verb, Kind, Name string
		Object           map[string]any
	}
	Events []struct{ Type, Reason, Message string }
	Error  *struct{ Code, Message string }
}

func decodeInPlacePlan(t *testing.T, b []byte) inPlacePlan {
	t.Helper()
	var p inPlacePlan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Error != nil {
		t.Fatalf("plan error %s: %s", p.Error.Code, p.Error.Message)
	}
	return p
}

func (p inPlacePlan) podWrites() []string {
	var out []string
	for _, a := range p.Actions {
		if a.Kind == kindPod {
			out = append(out, a.Verb+" "+a.Name)
		}
	}
	return out
}

func (p inPlacePlan) event(reason string) string {
	for _, e := range p.Events {
		if e.Reason == reason {
			return e.Type + " " + e.Message
		}
	}
	return ""
}

func (p inPlacePlan) status() map[string]any {
	for _, a := range p.Actions {
		if a.Verb == verbUpdateStatus {
			return a.Object["status"].(map[string]any)
		}
	}
	return nil
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// An image bump with InPlaceIfPossible: web-4 is updated, not deleted: the same object (uid,
// resourceVersion, node) with the new image, the update revision's label and the in-place record; the
// pass stops there as it does after upstream's delete. ReCreate (and no annotation) delete it.
func TestInPlaceUpdateOfAnImage(t *testing.T) {
	for _, policy := range []string{policyInPlaceIfPossible, policyInPlaceOnly} {
		in := inPlaceCase(t, policy, nil)
		if !inPlaceExtended(t, in) {
			continue
		}
		p := decodeInPlacePlan(t, Reconcile(in))
		if w := p.podWrites(); len(w) != 1 || w[0] != "update web-4" {
			t.Fatalf("%s: pod writes %v, want web-4 updated in place", policy, w)
		}
		var obj map[string]any
		for _, a := range p.Actions {
			if a.Kind == kindPod {
				obj = a.Object
			}
		}
		update := p.status()["updateRevision"].(string)
		if got := dig(obj, "spec", "containers").([]any)[0].(map[string]any)["image"]; got != "registry.k8s.io/nginx-slim:0.28" {
			t.Errorf("%s: image %v", policy, got)
		}
		if dig(obj, "metadata", "labels", labelRevision) != update || dig(obj, "metadata", "annotations", annotationInPlaceUpdate) != update {
			t.Errorf("%s: metadata %v, want revision label and record %s", policy, obj["metadata"], update)
		}
		if dig(obj, "metadata", "uid") != "00000000-0000-4000-8000-000000000006" || dig(obj, "metadata", "resourceVersion") == nil ||
			dig(obj, "metadata", "labels", "statefulset.kubernetes.io/pod-name") != "web-4" || dig(obj, "spec", "hostname") != "web-4" {
			t.Errorf("%s: the update is not of the live pod: %v", policy, obj["metadata"])
		}
		if e := p.event(reasonInPlaceUpdate); !strings.Contains(e, "web-4") || !strings.Contains(e, "nginx registry.k8s.io/nginx-slim:0.28") {
			t.Errorf("%s: in-place event %q", policy, e)
		}
	}
	in := inPlaceCase(t, policyReCreate, nil)
	if w := decodeInPlacePlan(t, Reconcile(in)).podWrites(); len(w) != 1 || w[0] != "delete web-4" {
		t.Errorf("ReCreate: pod writes %v, want web-4 deleted (upstream)", w)
	}
}

// A change beyond images (env): InPlaceIfPossible recreates, saying why; InPlaceOnly holds the pod, with a
// Warning and the condition naming the pod and the field, and drops the condition once the change is gone.
func TestInPlaceUpdateOfWhatAPodCannotChange(t *testing.T) {
	env := func(c map[string]any) { c["env"] = []any{map[string]any{"name": "MODE", "value": "fast"}} }
	in := inPlaceCase(t, policyInPlaceIfPossible, env)
	if !inPlaceExtended(t, in) {
		return
	}
	p := decodeInPlacePlan(t, Reconcile(in))
	if w := p.podWrites(); len(w) != 1 || w[0] != "delete web-4" {
		t.Errorf("InPlaceIfPossible with env: pod writes %v, want web-4 recreated", w)
	}
	if e := p.event(reasonRecreateNeeded); !strings.Contains(e, "spec.containers[0].env") {
		t.Errorf("recreate event %q, want the field", e)
	}
	// asked for events' actions, the event reports the pod's delete: hosts read which pod, not the words
	var v map[string]any
	_ = json.Unmarshal(in, &v)
	v["eventActions"] = true
	withActions, _ := json.Marshal(v)
	var ap struct {
		Actions []struct{ Verb, Kind, Name string }
		Events  []struct {
			Reason string
			Action *int
		}
	}
	if err := json.Unmarshal(Reconcile(withActions), &ap); err != nil {
		t.Fatal(err)
	}
	for _, e := range ap.Events {
		if e.Reason != reasonRecreateNeeded {
			continue
		}
		if e.Action == nil || *e.Action >= len(ap.Actions) || ap.Actions[*e.Action].Verb != verbDelete || ap.Actions[*e.Action].Name != "web-4" {
			t.Errorf("the %s event's action %v of %+v: want the delete of web-4", reasonRecreateNeeded, e.Action, ap.Actions)
		}
	}

	only := inPlaceCase(t, policyInPlaceOnly, env)
	p = decodeInPlacePlan(t, Reconcile(only))
	if w := p.podWrites(); len(w) != 0 {
		t.Errorf("InPlaceOnly with env: pod writes %v, want none", w)
	}
	c := conditionOf(t, p.status(), conditionInPlaceUpdateBlocked)
	if c == nil || c.Status != "True" || !strings.Contains(c.Message, "web-4") || !strings.Contains(c.Message, "spec.containers[0].env") {
		t.Fatalf("condition %+v", c)
	}
	if e := p.event(reasonInPlaceBlocked); !strings.HasPrefix(e, "Warning ") {
		t.Errorf("events %+v, want a Warning %s", p.Events, reasonInPlaceBlocked)
	}
	// the next sync with that status: no second Warning; back to an image-only template: the condition goes
	again := decodeInPlacePlan(t, Reconcile(nextSync(t, only, p.status(), time.Second)))
	if again.event(reasonInPlaceBlocked) != "" {
		t.Errorf("the Warning repeats: %+v", again.Events)
	}
	v = nil
	_ = json.Unmarshal(nextSync(t, inPlaceCase(t, policyInPlaceOnly, nil), p.status(), time.Second), &v)
	fixed, _ := json.Marshal(v)
	fp := decodeInPlacePlan(t, Reconcile(fixed))
	if c := conditionOf(t, fp.status(), conditionInPlaceUpdateBlocked); c != nil {
		t.Errorf("condition %+v stays once the change can be made in place", c)
	}
	if w := fp.podWrites(); len(w) != 1 || w[0] != "update web-4" {
		t.Errorf("pod writes %v, want web-4 updated in place", w)
	}
}

// A resources change: the pod update (revision label, record) then a resize carrying the new resources and
// no resourceVersion. A change of QoS class, or of a resource resize cannot change, recreates.
func TestInPlaceResize(t *testing.T) {
	res := func(cpu string) func(map[string]any) {
		return func(c map[string]any) {
			c["image"] = "registry.k8s.io/nginx-slim:0.27" // resources only
			c["resources"] = map[string]any{"requests": map[string]any{"cpu": cpu, "memory": "64Mi"}}
		}
	}
	// the old revision asks for nothing: first give it resources, so the change is a resize
	in := inPlaceCase(t, policyInPlaceIfPossible, res("250m"))
	if !inPlaceExtended(t, in) {
		return
	}
	var v map[string]any
	_ = json.Unmarshal(in, &v)
	rev := v["revisions"].([]any)[0].(map[string]any)
	c := dig(rev, "data", "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	c["resources"] = map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}}
	for _, pd := range v["pods"].([]any) {
		dig(pd, "spec", "containers").([]any)[0].(map[string]any)["resources"] = c["resources"]
	}
	in, _ = json.Marshal(v)
	p := decodeInPlacePlan(t, Reconcile(in))
	if w := p.podWrites(); len(w) != 2 || w[0] != "resize web-4" || w[1] != "update web-4" {
		t.Fatalf("pod writes %v, want web-4 resized then updated", w)
	}
	var resize, update map[string]any
	for _, a := range p.Actions {
		switch {
		case a.Verb == verbResize:
			resize = a.Object
		case a.Verb == verbUpdate && a.Kind == kindPod:
			update = a.Object
		}
	}
	for what, o := range map[string]map[string]any{"resize": resize, "update": update} {
		if got := dig(dig(o, "spec", "containers").([]any)[0], "resources", "requests", "cpu"); got != "250m" {
			t.Errorf("%s asks for cpu %v", what, got)
		}
		if dig(o, "metadata", "resourceVersion") == nil {
			t.Errorf("the %s carries no resourceVersion: both are guarded by the snapshot's", what)
		}
	}
	if dig(resize, "metadata", "labels", labelRevision) == dig(update, "metadata", "labels", labelRevision) {
		t.Error("the resize moves the revision label: only the update does, after it")
	}
	if e := p.event(reasonInPlaceUpdate); !strings.Contains(e, "resources of nginx") {
		t.Errorf("event %q", e)
	}

	for name, to := range map[string]map[string]any{
		"QoS class": {"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}, "limits": map[string]any{"cpu": "100m", "memory": "64Mi"}},
		"ephemeral": {"requests": map[string]any{"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi"}},
	} {
		ok, field, _ := inPlaceDiff(templateWith(c["resources"]), templateWith(to))
		if ok || !strings.Contains(field, "resources") {
			t.Errorf("%s: in place %v (%s), want a recreate naming resources", name, ok, field)
		}
	}
}

func templateWith(resources any) jsonv.Value {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "spec": map[string]any{"containers": []any{
		map[string]any{"name": "app", "image": "a:1", "resources": resources}}}})
	v, _ := jsonv.Parse(b)
	return v
}

// A pod the extension updated counts as not Ready until its containers report the new image, and as Ready
// only since its containers restarted: OrderedReady moves to web-3 only then, and minReadySeconds counts
// from the restart.
func TestInPlaceAvailability(t *testing.T) {
	in := inPlaceCase(t, policyInPlaceIfPossible, nil)
	if !inPlaceExtended(t, in) {
		return
	}
	first := decodeInPlacePlan(t, Reconcile(in))
	var updated map[string]any
	for _, a := range first.Actions {
		if a.Kind == kindPod {
			updated = a.Object
		}
	}
	var v map[string]any
	_ = json.Unmarshal(nextSync(t, in, first.status(), 2*time.Second), &v)
	v["revisions"] = append(v["revisions"].([]any), revisionFrom(t, first))
	pods := v["pods"].([]any)
	status := pods[4].(map[string]any)["status"]
	updated["status"] = status // the kubelet has not restarted it: old image, Ready since long ago
	pods[4] = updated
	stale, _ := json.Marshal(v)
	p := decodeInPlacePlan(t, Reconcile(stale))
	if w := p.podWrites(); len(w) != 0 {
		t.Errorf("web-4 not restarted yet: pod writes %v, want none (OrderedReady waits)", w)
	}
	if st := p.status(); st["readyReplicas"] != float64(4) || st["updatedReplicas"] != float64(1) {
		t.Errorf("status %v: want web-4 updated, not ready", st)
	}

	// a kubelet's status of the old container changes nothing
	cs := map[string]any{"name": "nginx", "image": "registry.k8s.io/nginx-slim:0.27", "ready": true,
		"state": map[string]any{"running": map[string]any{"startedAt": "2026-11-22T10:00:05Z"}}}
	status.(map[string]any)["containerStatuses"] = []any{cs}
	old, _ := json.Marshal(v)
	if w := decodeInPlacePlan(t, Reconcile(old)).podWrites(); len(w) != 0 {
		t.Errorf("web-4 reports the old image: pod writes %v, want none", w)
	}
	// restarted with the new image (kwok's way: image and startedAt, Ready True since before)
	cs["image"] = "registry.k8s.io/nginx-slim:0.28"
	cs["state"] = map[string]any{"running": map[string]any{"startedAt": "2026-11-22T10:01:31Z"}}
	restarted, _ := json.Marshal(v)
	if w := decodeInPlacePlan(t, Reconcile(restarted)).podWrites(); len(w) != 1 || w[0] != "update web-3" {
		t.Errorf("web-4 restarted and Ready: pod writes %v, want web-3 updated in place", w)
	}
	// with minReadySeconds 10, the restart 1 s ago: not available yet, a sync asked for when it will be
	v["statefulSet"].(map[string]any)["spec"].(map[string]any)["minReadySeconds"] = 10
	minReady, _ := json.Marshal(v)
	mp := decodeInPlacePlan(t, Reconcile(minReady))
	if w := mp.podWrites(); len(w) != 0 {
		t.Errorf("minReadySeconds from the restart: pod writes %v, want none", w)
	}
	var raw struct {
		Requeue float64 `json:"requeueAfterSeconds"`
	}
	_ = json.Unmarshal(Reconcile(minReady), &raw)
	if raw.Requeue <= 0 || raw.Requeue > 10 {
		t.Errorf("requeue %v, want within minReadySeconds of the restart", raw.Requeue)
	}

	// the old container, reported by its image's ID (which no spec compares with, so taken as the spec's), by a
	// kubelet whose status is of the pod's generation before the update: not restarted yet, nothing more
	delete(v["statefulSet"].(map[string]any)["spec"].(map[string]any), "minReadySeconds")
	cs["image"] = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	cs["state"] = map[string]any{"running": map[string]any{"startedAt": "2026-11-22T10:00:05Z"}}
	updated["metadata"].(map[string]any)["generation"] = 2
	status.(map[string]any)["observedGeneration"] = 1
	behind, _ := json.Marshal(v)
	if w := decodeInPlacePlan(t, Reconcile(behind)).podWrites(); len(w) != 0 {
		t.Errorf("web-4's status of the generation before the update: pod writes %v, want none", w)
	}
	// the kubelet's status of the update's generation: restarted, the next pod's turn
	status.(map[string]any)["observedGeneration"] = 2
	cs["state"] = map[string]any{"running": map[string]any{"startedAt": "2026-11-22T10:01:31Z"}}
	caught, _ := json.Marshal(v)
	if w := decodeInPlacePlan(t, Reconcile(caught)).podWrites(); len(w) != 1 || w[0] != "update web-3" {
		t.Errorf("web-4's status of the update's generation: pod writes %v, want web-3 updated in place", w)
	}
}

// revisionFrom is the revision the plan creates.
func revisionFrom(t *testing.T, p inPlacePlan) map[string]any {
	t.Helper()
	for _, a := range p.Actions {
		if a.Verb == verbCreate && a.Kind == kindRevision {
			return a.Object
		}
	}
	t.Fatal("the plan creates no revision")
	return nil
}

// A container whose spec pins its image by digest runs it when its status's imageID has that digest, though a
// runtime reports the image by one of its tags when it has any (containerd: the first): the module reads the
// imageID, or a pod updated in place to a pinned image never counted as Ready again.
func TestInPlacePodPinnedByDigest(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	for imageID, pending := range map[string]bool{"docker.io/library/nginx@" + digest: false, "docker.io/library/nginx@sha256:" + strings.Repeat("b", 64): true} {
		pod, err := jsonv.Parse([]byte(`{"spec":{"containers":[{"name":"app","image":"nginx@` + digest + `"}]},"status":{"containerStatuses":[` +
			`{"name":"app","image":"docker.io/library/nginx:1.27","imageID":"` + imageID + `","state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		if v := inplaceready.Judge(inPlacePod(pod)); v.Pending != pending {
			t.Errorf("imageID %s: %+v, want pending %v", imageID, v, pending)
		}
	}
}

// The QoS class counts only positive CPU and memory (v1/qos.GetPodQOS): a template asking for cpu "0" is
// BestEffort, and a resize that asks for 100m makes it Burstable, which kube-apiserver refuses; the module
// recreates the pod instead of sending a resize that fails every sync.
func TestInPlaceQoSCountsPositiveQuantitiesOnly(t *testing.T) {
	for _, c := range []struct {
		name     string
		from, to map[string]any
		inPlace  bool
	}{
		{"zero requests to some", map[string]any{"requests": map[string]any{"cpu": "0", "memory": "0"}},
			map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "0"}}, false},
		{"zero limit: not Guaranteed", map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}, "limits": map[string]any{"cpu": "100m", "memory": "0"}},
			map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}, "limits": map[string]any{"cpu": "100m", "memory": "64Mi"}}, false},
		{"Burstable stays Burstable", map[string]any{"requests": map[string]any{"cpu": "0", "memory": "64Mi"}},
			map[string]any{"requests": map[string]any{"cpu": "0", "memory": "128Mi"}}, true},
	} {
		ok, field, _ := inPlaceDiff(templateWith(c.from), templateWith(c.to))
		if ok != c.inPlace || !ok && !strings.Contains(field, "QoS") {
			t.Errorf("%s: in place %v (%s), want %v", c.name, ok, field, c.inPlace)
		}
	}
}

// With pod-level resources (spec.resources) they alone decide the QoS class (v1/qos.ComputePodQOS, and the
// replay's API server, through internal/qos), so a container resize under a Guaranteed pod-level budget
// keeps the class and is done in place; the module's own per-container rule called it a change to
// Guaranteed and recreated the pod.
func TestInPlaceQoSOfPodLevelResources(t *testing.T) {
	tmpl := func(req string) jsonv.Value {
		res := func(r, l string) map[string]any {
			return map[string]any{"requests": map[string]any{"cpu": r, "memory": "1Gi"}, "limits": map[string]any{"cpu": l, "memory": "1Gi"}}
		}
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "spec": map[string]any{
			"resources": res("4", "4"),
			"containers": []any{map[string]any{"name": "a", "image": "a:1", "resources": res("1", "1")},
				map[string]any{"name": "b", "image": "b:1", "resources": res(req, "2")}}}})
		v, _ := jsonv.Parse(b)
		return v
	}
	if ok, field, resize := inPlaceDiff(tmpl("1"), tmpl("2")); !ok || !resize {
		t.Errorf("in place %v (%s), resize %v: want a resize in place", ok, field, resize)
	}
}

// A template that sets the identity labels (pod-name, pod-index) does not give them to a pod updated in place:
// upstream's initIdentity overrides them on every pod it creates, and the pod keeps its own (the firewall
// refused the plan that moved them: the module failed every sync of such a set).
func TestInPlaceKeepsThePodsIdentityLabels(t *testing.T) {
	in := inPlaceCase(t, policyInPlaceIfPossible, nil)
	var v map[string]any
	_ = json.Unmarshal(in, &v)
	labels := v["statefulSet"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
	labels[labelPodName], labels[labelPodIndex] = "zzz", "99"
	in, _ = json.Marshal(v)
	if !inPlaceExtended(t, in) {
		return
	}
	p := decodeInPlacePlan(t, Reconcile(in))
	updated := 0
	for _, a := range p.Actions {
		if a.Kind != kindPod || a.Verb != verbUpdate {
			continue
		}
		updated++
		l := a.Object["metadata"].(map[string]any)["labels"].(map[string]any)
		if l[labelPodName] != a.Name || l[labelPodIndex] != strings.TrimPrefix(a.Name, "web-") {
			t.Errorf("%s updated in place with identity labels %v, %v", a.Name, l[labelPodName], l[labelPodIndex])
		}
	}
	if updated == 0 {
		t.Fatalf("no pod updated in place: %v", p.podWrites())
	}
}

// A pod whose revision is not in the set's history (its ControllerRevision deleted) cannot be judged, and the
// event and the condition say so in a sentence: they read "its revision R is not in the set's history changes,
// which a pod cannot change in place", a field's template around a reason.
func TestInPlaceUnknownRevisionIsSaidPlainly(t *testing.T) {
	for _, policy := range []string{policyInPlaceIfPossible, policyInPlaceOnly} {
		in := inPlaceCase(t, policy, func(c map[string]any) { c["image"] = "registry.k8s.io/nginx-slim:0.29" })
		var v map[string]any
		_ = json.Unmarshal(in, &v)
		v["revisions"] = []any{} // the pods' revision is gone
		in, _ = json.Marshal(v)
		if !inPlaceExtended(t, in) {
			return
		}
		p := decodeInPlacePlan(t, Reconcile(in))
		reason := reasonRecreateNeeded
		if policy == policyInPlaceOnly {
			reason = reasonInPlaceBlocked
		}
		e := p.event(reason)
		if !strings.Contains(e, "is not in the set's history") || strings.Contains(e, "history changes") {
			t.Errorf("%s: event %q", policy, e)
		}
	}
}

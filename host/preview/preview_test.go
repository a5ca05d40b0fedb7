package preview

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/kube"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// embeddedModule is the embedded module, loaded for the test.
func embeddedModule(t *testing.T) *wasm.Module {
	t.Helper()
	m, err := wasm.Load(context.Background(), embedded.Module(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// createdSet is a 3-pod set web as the API server answers a dry-run create of it: defaulted (host/kube's
// defaulting, kube-apiserver's).
func createdSet(t *testing.T) *appsv1.StatefulSet {
	t.Helper()
	labels := map[string]string{"app": "web"}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: "web", Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1"}}}}}}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = kube.DefaultStatefulSetJSON(b); err != nil {
		t.Fatal(err)
	}
	set = &appsv1.StatefulSet{}
	if err := json.Unmarshal(b, set); err != nil {
		t.Fatal(err)
	}
	return set
}

// A preview of a create on the embedded module: the set is replayed from nothing to Ready, one pod at a
// time under OrderedReady, and the summary says so in one line.
func TestPreviewOfACreate(t *testing.T) {
	ctx := context.Background()
	m := embeddedModule(t)
	set := createdSet(t)
	res, err := Preview(ctx, Input{New: set, Module: m, Now: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Preview
	if p.Outcome.Result != "complete" || !strings.Contains(res.Text, "+0s      create Pod web-0 (revision A)\n  +5s      create Pod web-1") {
		t.Fatalf("outcome %s, text:\n%s\nwant web-0, then web-1 once web-0 is Ready", p.Outcome.Result, res.Text)
	}
	// no revision before, the first after: revision 1, A, named once
	if head := "preview: StatefulSet web, revision (none) -> A\nrevisions: A=" + p.To.Name + " (1)\n"; !strings.HasPrefix(res.Text, head) {
		t.Errorf("a create's preview does not start %q:\n%s", head, res.Text)
	}
	want := "create StatefulSet web: 3 pods web-0..web-2, one at a time, each after the previous is Running and Ready (OrderedReady)"
	if res.Summary.Change != "create" || len(res.Summary.Lines) != 1 || !strings.HasPrefix(res.Summary.Lines[0], want) {
		t.Fatalf("summary %+v, want one line starting %q", res.Summary, want)
	}
	if !strings.Contains(p.Pace.String(), "(the defaults)") || !strings.Contains(res.Text, "pace: a pod Running 2s after it is created") {
		t.Fatalf("a create's pace %q: want the defaults, said in the text", p.Pace)
	}
	// in JSON the pace is numbers and whence, no sentence
	pj, err := json.Marshal(p.Pace)
	if want := `{"startSeconds":2,"readySeconds":3,"terminationSeconds":5,"restartSeconds":2,"from":"defaults"}`; err != nil || string(pj) != want {
		t.Errorf("a create's pace in JSON %s (%v), want %s", pj, err, want)
	}
	if res.Pods != 0 || res.Text == "" {
		t.Fatalf("a create's snapshot held %d pods; text %q", res.Pods, res.Text)
	}
}

// kubectl ordinal migrate deletes a set with orphan propagation and creates it again (of the other kind):
// the webhook previewed that create as "create StatefulSet web: 5 pods web-0..web-4, one at a time", where
// the controller adopts the 5 pods and creates none. The summary says what the replay did: adopted pods,
// and only the missing ones created.
func TestPreviewOfACreateOverExistingPods(t *testing.T) {
	ctx := context.Background()
	m := embeddedModule(t)
	set := createdSet(t)
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	fresh, err := Preview(ctx, Input{New: set, Module: m, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	rev := fresh.Preview.To.Name
	orphan := func(name string) *corev1.Pod { // Running and Ready at the revision the set will have, no owner
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + types.UID(name),
			CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
			Labels:            map[string]string{"app": "web", appsv1.ControllerRevisionHashLabelKey: rev, appsv1.StatefulSetPodNameLabel: name}},
			Spec: *set.Spec.Template.Spec.DeepCopy(),
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}}}
	}
	for _, c := range []struct {
		pods []*corev1.Pod
		want string
	}{
		{[]*corev1.Pod{orphan("web-0"), orphan("web-1"), orphan("web-2")},
			"create StatefulSet web: adopts 3 pods that exist already (web-0..web-2), creates none, revision " + rev},
		{[]*corev1.Pod{orphan("web-0"), orphan("web-1")},
			"create StatefulSet web: adopts 2 pods that exist already (web-0, web-1), creates 1 pod (web-2), one at a time"},
	} {
		res, err := Preview(ctx, Input{New: set, Objects: snapshot.Objects{Pods: c.pods}, Module: m, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.Change != "create" || len(res.Summary.Lines) == 0 || !strings.HasPrefix(res.Summary.Lines[0], c.want) {
			t.Errorf("summary %q, want it to start %q; preview:\n%s", res.Summary.Lines, c.want, res.Text)
		}
	}
}

// The delays model takes its pace from the set's own pods: the median creation -> running -> Ready of
// those that say it; pods that do not (not Ready, not started, terminating) do not count, and without any
// the defaults stay. The preview says which pace it used.
func TestPaceIsLearnedFromTheSetsPods(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	pod := func(name string, start, ready time.Duration, readyStatus corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0)},
			Status: corev1.PodStatus{
				ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(start))}}}},
				Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: readyStatus, LastTransitionTime: metav1.NewTime(t0.Add(start + ready))}}}}
	}
	gone := pod("web-3", time.Second, time.Second, corev1.ConditionTrue)
	gone.DeletionTimestamp = &metav1.Time{Time: t0}
	pods := []*corev1.Pod{
		pod("web-0", 4*time.Second, 20*time.Second, corev1.ConditionTrue),
		pod("web-1", 6*time.Second, 30*time.Second, corev1.ConditionTrue),
		pod("web-2", 8*time.Second, 40*time.Second, corev1.ConditionTrue),
		pod("web-4", time.Second, time.Second, corev1.ConditionFalse), // not Ready: says nothing
		gone,
	}
	var kc replay.KubeletConfig
	learnPace(&kc, pods, nil)
	if kc.StartDelay == nil || time.Duration(*kc.StartDelay) != 6*time.Second || time.Duration(*kc.ReadyDelay) != 30*time.Second {
		t.Fatalf("learned %+v: want the means, start 6s and Ready 30s", kc)
	}
	p := kc.Pace()
	if p.From != replay.PaceLearned || p.Learned == nil || *p.Learned != (replay.LearnedPace{StartPods: 3, ReadyPods: 3}) ||
		*p.StartSeconds != 6 || *p.ReadySeconds != 30 || *p.TerminationSeconds != 5 || *p.RestartSeconds != 6 {
		t.Fatalf("pace %+v (learned %+v): want start 6 s and Ready 30 s learned from 3 pods, the model's termination, the restart the start", p, p.Learned)
	}
	if s := p.String(); !strings.Contains(s, "Running 6s after it is created, Ready 30s after that") || !strings.Contains(s, "learned from 3 of the set's pods") ||
		!strings.Contains(s, "the termination delay is the model's") {
		t.Fatalf("pace %q", s)
	}
	var none replay.KubeletConfig
	learnPace(&none, pods[3:], nil)
	if p := none.Pace(); none.StartDelay != nil || p.From != replay.PaceDefaults || p.Learned != nil || !strings.Contains(p.String(), "(the defaults)") {
		t.Fatalf("no pod says its pace: %+v, %+v, %q", none, p, p)
	}
	chosen := replay.KubeletConfig{Model: replay.ModelTick}
	learnPace(&chosen, pods, nil)
	if chosen.StartDelay != nil {
		t.Fatalf("the tick model learned a pace: %+v", chosen)
	}
}

// How long an in-place update keeps a pod's containers down is learned from the set's pods updated in place
// (the record naming their revision): the gap from a restarted container's end to its successor running,
// the longest of a pod's. Their restart does not count as their first start (creation -> running), only
// their time to Ready; a pod restarted without the record (a crash) gives no restart delay.
func TestRestartPaceIsLearnedFromPodsUpdatedInPlace(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	pod := func(name, record string, ends, restarts []time.Duration, ready time.Duration) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0),
			Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: "web-b"}, Annotations: map[string]string{}}}
		if record != "" {
			p.Annotations["ordinal.dev/in-place-update"] = record
		}
		last := t0
		for i := range ends {
			start := t0.Add(restarts[i])
			if start.After(last) {
				last = start
			}
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(start)}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(ends[i]))}}})
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(last.Add(ready))}}
		return p
	}
	h := time.Hour
	pods := []*corev1.Pod{
		pod("web-0", "web-b", []time.Duration{h, h}, []time.Duration{h + 4*time.Second, h + 10*time.Second}, 2*time.Second), // down 10 s (its slower container)
		pod("web-1", "web-b", []time.Duration{h}, []time.Duration{h + 6*time.Second}, 4*time.Second),
		pod("web-2", "web-a", []time.Duration{h}, []time.Duration{h + 50*time.Second}, 6*time.Second), // its record names another revision
		pod("web-3", "", []time.Duration{h}, []time.Duration{h + 90*time.Second}, 8*time.Second),      // a crash, not an update
	}
	got := restartPace(pods)
	slices.Sort(got)
	if want := []time.Duration{6 * time.Second, 10 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("restart gaps %v, want %v (web-1, web-0)", got, want)
	}
	var kc replay.KubeletConfig
	learnPace(&kc, pods, nil)
	if kc.RestartDelay == nil || kc.RestartDelay.D() != 8*time.Second {
		t.Fatalf("learned restart %v, want 8s (the mean of 6 and 10 s)", kc.RestartDelay)
	}
	if kc.StartDelay != nil || kc.ReadyDelay == nil || kc.ReadyDelay.D() != 7*time.Second {
		t.Fatalf("learned start %v, Ready %v: want the model's start (every pod restarted) and Ready 7s (running from the first container up: 4, 6, 8, 8 s)", kc.StartDelay, kc.ReadyDelay)
	}
	if p := kc.Pace(); *p.Learned != (replay.LearnedPace{ReadyPods: 4, InPlaceUpdates: 2}) || *p.RestartSeconds != 8 || *p.StartSeconds != 2 {
		t.Fatalf("pace %+v (learned %+v): want the restart 8 s from 2 pods updated in place, Ready from 4, the model's start", p, p.Learned)
	}
	if p := kc.Pace().String(); !strings.Contains(p, "running again 8s after an in-place update") || !strings.Contains(p, "2 pods updated in place") ||
		!strings.Contains(p, "the start delay is the model's") {
		t.Fatalf("pace %q", p)
	}
}

// How long the set's pods take to go is learned from its events: a pod the controller deleted and created
// again was gone from the delete to its successor's creation. A gap longer than the pod's grace period is
// not a replacement; other events, and deletes after the live pod's creation, say nothing.
func TestTerminationPaceIsLearnedFromTheSetsEvents(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	pod := func(name string, created time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(created))}}
	}
	event := func(reason, msg string, at time.Duration) corev1.Event {
		return corev1.Event{Reason: reason, Message: msg, LastTimestamp: metav1.NewTime(t0.Add(at))}
	}
	pods := []*corev1.Pod{pod("web-0", 10*time.Second), pod("web-1", 2*time.Second), pod("web-2", 4*time.Second),
		pod("web-3", 200*time.Second), pod("web-4", 0)}
	events := []corev1.Event{
		event("SuccessfulDelete", "Delete Pod web-0 in StatefulSet web successful", -50*time.Second), // an older delete of web-0
		event("SuccessfulDelete", "delete Pod web-0 in StatefulSet web successful", 6*time.Second),
		event("SuccessfulDelete", "Delete Pod web-1 in StatefulSet web successful", 0),
		event("SuccessfulDelete", "(combined from similar events): Delete Pod web-2 in StatefulSet web successful", time.Second),
		event("SuccessfulDelete", "Delete Pod web-3 in StatefulSet web successful", 0),           // 200 s later: a scale up
		event("SuccessfulDelete", "delete Pod web-4 in StatefulSet web successful", time.Second), // after web-4's creation
		event("SuccessfulCreate", "Create Pod web-4 in StatefulSet web successful", -time.Second),
		event("FailedDelete", "Delete Pod web-4 in StatefulSet web failed error: x", -2*time.Second),
	}
	got := terminationPace(pods, events)
	slices.Sort(got)
	if want := []time.Duration{2 * time.Second, 3 * time.Second, 4 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("termination gaps %v, want %v (web-2, web-1, web-0)", got, want)
	}
	var kc replay.KubeletConfig
	learnPace(&kc, pods, events)
	if kc.TerminationDelay == nil || time.Duration(*kc.TerminationDelay) != 3*time.Second || kc.StartDelay != nil {
		t.Fatalf("learned %+v: want termination 3s (the mean of 2, 3 and 4 s) and the model's start and Ready", kc)
	}
	if p := kc.Pace(); *p.Learned != (replay.LearnedPace{Replacements: 3}) || *p.TerminationSeconds != 3 {
		t.Fatalf("pace %+v (learned %+v): want termination 3 s from 3 replacements", p, p.Learned)
	}
	if p := kc.Pace().String(); !strings.Contains(p, "gone 3s after it is deleted") || !strings.Contains(p, "3 replacements in the set's events") ||
		!strings.Contains(p, "the start and Ready delays are the model's") {
		t.Fatalf("pace %q", p)
	}
}

// The typical delay is the mean of the middle half: whole-second readings of a 1.2 s delay average near it,
// and a pod that hung once does not move it.
func TestTypicalIsTheInterquartileMean(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{[]time.Duration{s}, s},
		{[]time.Duration{2 * s, s}, 1500 * time.Millisecond},
		{[]time.Duration{s, 2 * s, s, 2 * s, s, s}, 1250 * time.Millisecond}, // the middle four of six: 1, 1, 1, 2 s
		{[]time.Duration{s, 60 * s, s, 2 * s}, 1500 * time.Millisecond},
	} {
		if got := typical(c.in); got != c.want {
			t.Errorf("typical(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// holdRevisions is a policy that holds every ControllerRevision create: no revision is ever made.
type holdRevisions struct{}

func (holdRevisions) Name() string      { return "hold-revisions" }
func (holdRevisions) Wants(string) bool { return false }
func (holdRevisions) Evaluate(_ context.Context, in []byte) ([]byte, error) {
	var i abi.PolicyInput
	if err := json.Unmarshal(in, &i); err != nil {
		return nil, err
	}
	holds := []string{}
	for n := i.From; n < len(i.Plan.Actions); n++ {
		if a := i.Plan.Actions[n]; a.Kind == abi.KindControllerRevision && a.Verb == abi.VerbCreate && a.Error == "" {
			holds = append(holds, fmt.Sprintf(`{"action":%d,"reason":"Frozen","message":"no new revisions"}`, n))
		}
	}
	return []byte(`{"abi":1,"holds":[` + strings.Join(holds, ",") + `]}`), nil
}

// A template change whose revision create a policy holds names the revision the create would make and
// says it is held: the set's status names none (it was never synced, its first revision held too), and
// the summary once read "template change to revision : no pod is replaced now".
func TestPreviewOfAHeldRevisionNamesIt(t *testing.T) {
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	labels := map[string]string{"app": "web"}
	old := defaulted(t, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-web",
		Annotations: map[string]string{abi.AnnotationPolicies: "hold-revisions"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), ServiceName: "web", Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1"}}}}}})
	cur := old.DeepCopy()
	cur.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	res, err := Preview(ctx, Input{Old: old, New: cur, Module: m, Now: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC),
		NamedPolicy: func(context.Context, string) (policy.Module, error) { return holdRevisions{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Preview
	if p.To.Name == "" || p.ToHeld == nil || p.ToHeld.Policy != "hold-revisions" {
		t.Fatalf("to %+v held %+v: want the revision the held create names", p.To, p.ToHeld)
	}
	want := "template change to revision " + p.To.Name + " (not created: policy hold-revisions holds its create (Frozen)): no pod is replaced now"
	if !slices.Contains(res.Summary.Lines, want) {
		t.Fatalf("summary %q, want the line %q", res.Summary.Lines, want)
	}
	if !strings.Contains(res.Text, "create ControllerRevision "+p.To.Name) || strings.Contains(res.Text, "revision :") {
		t.Fatalf("text:\n%s", res.Text)
	}
}

// defaulted is set as the API server stores it (host/kube's defaulting, kube-apiserver's).
func defaulted(t *testing.T, set *appsv1.StatefulSet) *appsv1.StatefulSet {
	t.Helper()
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = kube.DefaultStatefulSetJSON(b); err != nil {
		t.Fatal(err)
	}
	out := &appsv1.StatefulSet{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The summary of an in-place rollout says whether the pods' containers restart: an image bump restarts them,
// a CPU change the kubelet makes live (resizePolicy NotRequired, the default) does not, and one under
// RestartContainer does. It once said "their containers restart" of every in-place rollout, a resize
// included, which the pods then rode out Ready.
func TestInPlaceSummarySaysWhetherContainersRestart(t *testing.T) {
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.ExtendedModule(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	named := func(context.Context, string) (hostplan.Reconciler, error) { return m, nil }
	cpu := func(c *corev1.Container) { c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("150m") }
	for _, c := range []struct {
		name, resizePolicy string
		edit               func(*corev1.Container)
		midRollout         bool
		want               string
	}{
		{"image", "", func(c *corev1.Container) { c.Image = "nginx:2" }, false, " in place (the pods are kept, their containers restart) "},
		{"cpu", "", cpu, false, " in place (the pods are kept, no container restarts) "},
		{"cpu, RestartContainer", "resizePolicy: [{resourceName: cpu, restartPolicy: RestartContainer}]", cpu, false,
			" in place (the pods are kept, their containers restart) "},
		{"memory, cpu RestartContainer", "resizePolicy: [{resourceName: cpu, restartPolicy: RestartContainer}]",
			func(c *corev1.Container) { c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("256Mi") }, false,
			" in place (the pods are kept, no container restarts) "},
		// mid-rollout to nginx:2, then cpu too: the live template differs from the edit by cpu alone, the pods by the image
		{"cpu after an image change", "", func(c *corev1.Container) { c.Image = "nginx:2" }, true, " in place (the pods are kept, their containers restart) "},
	} {
		old, objs := inPlaceWorld(t, m, c.resizePolicy)
		cur := old.DeepCopy()
		c.edit(&cur.Spec.Template.Spec.Containers[0])
		if c.midRollout {
			// the live template is already the edit's; the pods, at the current revision, run another image
			old.Spec.Template = *cur.Spec.Template.DeepCopy()
			old.Status.UpdateRevision = "web-other"
			cpu(&cur.Spec.Template.Spec.Containers[0])
		}
		res, err := Preview(ctx, Input{Old: old, New: cur, Module: m, NamedModule: named, Now: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC),
			Objects: objs})
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Join(res.Summary.Lines, "\n"); !strings.Contains(lines, "rolling update of 2 pods to revision ") || !strings.Contains(lines, c.want) {
			t.Errorf("%s: summary\n%s\nwant %q", c.name, lines, c.want)
		}
	}
}

// inPlaceWorld is a settled 2-pod InPlaceIfPossible set on the extended module m, whose container has the
// resizePolicy given (YAML, or none).
func inPlaceWorld(t *testing.T, m *wasm.Module, resizePolicy string) (*appsv1.StatefulSet, snapshot.Objects) {
	t.Helper()
	named := func(context.Context, string) (hostplan.Reconciler, error) { return m, nil }
	sc, err := replay.ParseScenario([]byte(`name: in-place-summary
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: web
      namespace: default
      annotations: {ordinal.dev/module: extended, ordinal.dev/pod-update-policy: InPlaceIfPossible}
    spec:
      replicas: 2
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
            - name: app
              image: nginx:1
              resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 200m, memory: 128Mi}}
              ` + resizePolicy + `
`))
	if err != nil {
		t.Fatal(err)
	}
	return finalWorld(t, sc, m, named)
}

// finalWorld replays sc on m and gives the set and its objects as the replay ends.
func finalWorld(t *testing.T, sc *replay.Scenario, m *wasm.Module, named func(context.Context, string) (hostplan.Reconciler, error)) (*appsv1.StatefulSet, snapshot.Objects) {
	t.Helper()
	tl, err := replay.Run(context.Background(), sc, replay.Options{Module: m, NamedModule: named})
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		StatefulSet *appsv1.StatefulSet          `json:"statefulSet"`
		Pods        []*corev1.Pod                `json:"pods"`
		Revisions   []*appsv1.ControllerRevision `json:"revisions"`
	}
	if err := json.Unmarshal(tl.Final, &snap); err != nil {
		t.Fatal(err)
	}
	return snap.StatefulSet, snapshot.Objects{Pods: snap.Pods, Revisions: snap.Revisions}
}

// A set that asks for Ordinal's behaviour (here InPlaceIfPossible) while another controller keeps its status
// (kube-controller-manager, for an apps/v1 set never handed to Ordinal) is previewed as Ordinal would roll it
// out, and the summary says that controller ignores the annotations: on the local cluster the preview said
// "in place (the pods are kept)" and kube-controller-manager recreated every pod. Ordinal's own status
// writes, and a set without ordinal.dev/ annotations, say nothing.
func TestPreviewSaysAnotherControllerIgnoresTheAnnotations(t *testing.T) {
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.ExtendedModule(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	named := func(context.Context, string) (hostplan.Reconciler, error) { return m, nil }
	at := metav1.NewTime(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	status := func(manager string, t metav1.Time) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &t,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:replicas":{},"f:updateRevision":{}}}`)}}
	}
	const want = `"kube-controller-manager" last wrote this set's status, not Ordinal: if it runs the set, it ignores the ordinal.dev/ annotations`
	for _, c := range []struct {
		name     string
		managers []metav1.ManagedFieldsEntry
		plain    bool // no ordinal.dev/ annotation
		says     bool
	}{
		{"kube-controller-manager", []metav1.ManagedFieldsEntry{status("kube-controller-manager", at)}, false, true},
		{"kube-controller-manager after Ordinal", []metav1.ManagedFieldsEntry{status("ordinal", at), status("kube-controller-manager", metav1.NewTime(at.Add(time.Minute)))}, false, true},
		{"Ordinal after kube-controller-manager", []metav1.ManagedFieldsEntry{status("kube-controller-manager", at), status("ordinal", metav1.NewTime(at.Add(time.Minute)))}, false, false},
		{"migrated", []metav1.ManagedFieldsEntry{status("kubectl-ordinal-migrate", at)}, false, false},
		{"no ordinal.dev/ annotation", []metav1.ManagedFieldsEntry{status("kube-controller-manager", at)}, true, false},
	} {
		old, objs := inPlaceWorld(t, m, "")
		old.ManagedFields = c.managers
		if c.plain {
			old.Annotations = nil
		}
		cur := old.DeepCopy()
		cur.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		res, err := Preview(ctx, Input{Old: old, New: cur, Module: m, NamedModule: named, Now: at.Add(time.Hour), Objects: objs})
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Join(res.Summary.Lines, "\n"); strings.Contains(lines, want) != c.says ||
			(c.says && !strings.Contains(lines, "kubectl ordinal migrate statefulset/web --to ordinal")) {
			t.Errorf("%s: summary\n%s\nwant the line %q: %v", c.name, lines, want, c.says)
		}
	}
}

// The way out of an InPlaceOnly hold by the annotation alone (InPlaceIfPossible, the template unchanged)
// recreates the held pods, and the summary's headline says so. It said "no pod is created, deleted or
// replaced" above the line listing the pods recreated.
func TestPreviewOfLeavingAnInPlaceOnlyHold(t *testing.T) {
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.ExtendedModule(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	named := func(context.Context, string) (hostplan.Reconciler, error) { return m, nil }
	sc, err := replay.ParseScenario([]byte(`name: in-place-only-held
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: web
      namespace: default
      annotations: {ordinal.dev/module: extended, ordinal.dev/pod-update-policy: InPlaceOnly}
    spec:
      replicas: 2
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: app, image: "nginx:1"}]}
events:
  - settled: true
    after: 10s
    set: {"spec.template.spec.containers[0].env": [{name: MODE, value: fast}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	old, objs := finalWorld(t, sc, m, named)
	cur := old.DeepCopy()
	cur.Annotations[abi.AnnotationPodUpdatePolicy] = abi.PodUpdateInPlaceIfPossible
	res, err := Preview(ctx, Input{Old: old, New: cur, Module: m, NamedModule: named, Now: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC),
		Objects: objs})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(res.Summary.Lines, "\n")
	if !strings.HasPrefix(lines, "rolling update of 2 pods to revision ") || !strings.Contains(lines, ", each recreated (not in place)") ||
		strings.Contains(lines, "no pod is created, deleted or replaced") {
		t.Errorf("summary:\n%s", lines)
	}
}

// A preview of an edit to an apps/v1 set kubectl ordinal pause holds (its partition 2147483647) said
// "partition 2147483647 holds web-0..web-1", "outcome: partitioned", as if the user had staged a canary: not
// that the pause holds the edit, nor that kubectl ordinal resume rolls it out. Both now say so.
func TestPreviewOfAnEditToAPausedSetNamesThePause(t *testing.T) {
	ctx := context.Background()
	m := embeddedModule(t)
	sc, err := replay.ParseScenario([]byte(`name: paused
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default}
    spec:
      replicas: 2
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: app, image: "nginx:1"}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	old, objs := finalWorld(t, sc, m, nil)
	old.Annotations = map[string]string{"ordinal.dev/paused-partition": "0"} // as kubectl ordinal pause leaves it
	old.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2147483647)}
	cur := old.DeepCopy()
	cur.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	res, err := Preview(ctx, Input{Old: old, New: cur, Module: m, Now: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), Objects: objs})
	if err != nil {
		t.Fatal(err)
	}
	const line = "kubectl ordinal pause holds web-0, web-1 at "
	if lines := strings.Join(res.Summary.Lines, "\n"); !strings.Contains(lines, line) || !strings.Contains(lines, "kubectl ordinal resume statefulset/web rolls this edit out") {
		t.Errorf("summary\n%s\nwant %q and the resume", lines, line)
	}
	if o := res.Preview.Outcome; o.Result != "partitioned" || !strings.Contains(o.Summary, "kubectl ordinal pause holds back web-0 (A), web-1 (A)") ||
		!strings.Contains(o.Summary, "kubectl ordinal resume lets the rollout go on") {
		t.Errorf("outcome %+v, want the pause named", o)
	}
}

package kwokstagetest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	"sigs.k8s.io/kwok/pkg/utils/gotpl"
	"sigs.k8s.io/kwok/pkg/utils/lifecycle"
	"sigs.k8s.io/yaml"
)

// podStageFiles are the files scripts/cluster-up.sh gives kwok by default (KWOK_POD_DELETE=kubelet).
var podStageFiles = []string{"../kwok-base.yaml", "../pod-never-ready.yaml", "../pod-paced.yaml", "../pod-image-pull.yaml", "../pod-in-place.yaml"}

// podStages parses the Pod Stages of files, as kwok loads them.
func podStages(t *testing.T, files ...string) lifecycle.Lifecycle {
	t.Helper()
	var stages []*internalversion.Stage
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if meta.Kind != "Stage" {
				continue
			}
			var s v1alpha1.Stage
			if err := yaml.UnmarshalStrict(doc, &s); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if s.Spec.ResourceRef.Kind != "Pod" {
				continue
			}
			in, err := internalversion.ConvertToInternalStage(&s)
			if err != nil {
				t.Fatalf("%s: stage %s: %v", f, s.Name, err)
			}
			stages = append(stages, in)
		}
	}
	lc, err := lifecycle.NewLifecycle(stages)
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

// matching names the stages kwok could play for p.
func matching(t *testing.T, lc lifecycle.Lifecycle, p *corev1.Pod) []string {
	t.Helper()
	ss, err := lc.ListAllPossible(context.Background(), &lifecycle.Event{Labels: p.Labels, Annotations: p.Annotations, Data: p})
	if err != nil {
		t.Fatalf("matching stages for pod %s: %v", p.Name, err)
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.Name())
	}
	return names
}

var renderer = gotpl.NewRenderer(gotpl.FuncMap{
	"NodeIPsWith": func(string) []string { return []string{"10.255.0.1"} },
	"PodIPsWith":  func(string, bool, string, string, string) ([]string, error) { return []string{"10.244.0.7"}, nil },
})

// play plays the one stage p selects, which must be want, and returns the pod as kwok's patches leave it.
func play(t *testing.T, lc lifecycle.Lifecycle, p *corev1.Pod, want string) *corev1.Pod {
	t.Helper()
	if got := matching(t, lc, p); !slices.Equal(got, []string{want}) {
		t.Fatalf("pod %s selects stages %v, want [%s]", p.Name, got, want)
	}
	ss, _ := lc.ListAllPossible(context.Background(), &lifecycle.Event{Labels: p.Labels, Annotations: p.Annotations, Data: p})
	cur, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ss[0].DoSteps(0, p.Finalizers, p, renderer,
		func(*internalversion.StageEvent) error { return nil },
		func() error { t.Fatalf("stage %s deletes the pod", want); return nil },
		func(patch *lifecycle.Patch) error {
			if patch.Type != types.StrategicMergePatchType {
				t.Fatalf("stage %s: patch type %s", want, patch.Type)
			}
			cur, err = strategicpatch.StrategicMergePatch(cur, patch.Data, corev1.Pod{})
			return err
		},
		func(*lifecycle.Apply) error { t.Fatalf("stage %s applies another object", want); return nil })
	if err != nil {
		t.Fatalf("stage %s: %v", want, err)
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(cur, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// pod is a pod bound to a node, Pending with no status yet (as the scheduler leaves it), with one container per
// image (c0, c1, ...).
func pod(name string, images ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid")},
		Spec:   corev1.PodSpec{NodeName: "kwok-node-0"},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	for i, im := range images {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c" + string(rune('0'+i)), Image: im})
	}
	return p
}

func annotate(p *corev1.Pod, kv ...string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

func withHostPort(p *corev1.Pod, port int32) *corev1.Pod {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port})
	return p
}

func condition(p *corev1.Pod, ty corev1.PodConditionType) corev1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == ty {
			return c
		}
	}
	return corev1.PodCondition{}
}

const admitted = "localk8s.ordinal.dev/admitted"

// The rule for images that cannot be pulled: the .invalid TLD's registries and Docker Hub's library/broken-image.
func TestUnpullableImages(t *testing.T) {
	lc := podStages(t, podStageFiles...)
	for _, c := range []struct {
		image      string
		unpullable bool
	}{
		{"broken-image", true}, // upstream's e2e tests
		{"broken-image:latest", true},
		{"broken-image:1.0", true},
		{"broken-image@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true},
		{"library/broken-image", true},
		{"docker.io/library/broken-image", true},
		{"docker.io/broken-image:2", true},
		{"index.docker.io/library/broken-image:v1", true},
		{"registry.invalid/app:v2", true},
		{"mirror.invalid:5000/team/app", true},
		{"REGISTRY.INVALID/app", false}, // not a valid reference (upper case); not ours to judge
		{"busybox", false},
		{"registry.k8s.io/e2e-test-images/agnhost:2.53", false},
		{"broken-image-2", false},
		{"someone/broken-image", false},
		{"docker.io/someone/broken-image", false},
		{"quay.io/broken-image", false},
		{"invalid/app", false}, // Docker Hub user "invalid"
		{"registry.invalid.example.com/app", false},
		{"example.com/x/registry.invalid/app", false},
	} {
		want := "pod-ready"
		if c.unpullable {
			want = "pod-image-pull-error"
		}
		if got := matching(t, lc, pod("p", c.image)); !slices.Equal(got, []string{want}) {
			t.Errorf("image %q: stages %v, want [%s]", c.image, got, want)
		}
		// the same in an init container
		p := pod("p", "busybox")
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: c.image}}
		if got := matching(t, lc, p); !slices.Equal(got, []string{want}) {
			t.Errorf("init container image %q: stages %v, want [%s]", c.image, got, want)
		}
	}
}

// A pod whose image cannot be pulled: Pending, ErrImagePull, then ImagePullBackOff, never Ready; the other
// stages (pod-ready, pod-never-ready, pod-start) leave it alone, and nothing plays again once it backs off.
func TestImagePullBackOff(t *testing.T) {
	lc := podStages(t, podStageFiles...)
	for _, p := range []*corev1.Pod{
		pod("plain", "broken-image", "busybox"),
		annotate(pod("never-ready", "broken-image", "busybox"), "e2e.ordinal.dev/never-ready", "true"),
		annotate(pod("paced", "broken-image", "busybox"), "e2e.ordinal.dev/start-delay", "1s"),
		annotate(pod("delayed", "broken-image", "busybox"), "e2e.ordinal.dev/ready-delay", "1s"),
	} {
		t.Run(p.Name, func(t *testing.T) {
			p = play(t, lc, p, "pod-image-pull-error")
			check := func(reason, msgPrefix string) {
				t.Helper()
				if p.Status.Phase != corev1.PodPending {
					t.Errorf("phase %s, want Pending", p.Status.Phase)
				}
				for _, ty := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
					if c := condition(p, ty); c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [c0]" {
						t.Errorf("%s: %+v", ty, c)
					}
				}
				if c := condition(p, corev1.PodInitialized); c.Status != corev1.ConditionTrue {
					t.Errorf("Initialized: %+v", c)
				}
				if len(p.Status.ContainerStatuses) != 2 {
					t.Fatalf("container statuses %+v", p.Status.ContainerStatuses)
				}
				bad, good := p.Status.ContainerStatuses[0], p.Status.ContainerStatuses[1]
				if w := bad.State.Waiting; w == nil || w.Reason != reason || !strings.HasPrefix(w.Message, msgPrefix) || bad.Ready || bad.State.Running != nil {
					t.Errorf("container c0 (broken-image): %+v, want waiting %s", bad, reason)
				}
				if good.State.Running == nil || !good.Ready || good.Image != "busybox" {
					t.Errorf("container c1 (busybox): %+v, want running", good)
				}
				if p.Status.PodIP != "10.244.0.7" || p.Status.HostIP != "10.255.0.1" || len(p.Status.PodIPs) != 1 {
					t.Errorf("pod IPs %q %v, host IP %q", p.Status.PodIP, p.Status.PodIPs, p.Status.HostIP)
				}
			}
			check("ErrImagePull", `failed to pull image "broken-image"`)
			p = play(t, lc, p, "pod-image-pull-backoff")
			check("ImagePullBackOff", `Back-off pulling image "broken-image": ErrImagePull: failed to pull image "broken-image"`)
			// stable: a status resync (an annotation update) plays nothing again
			annotate(p, "localk8s.ordinal.dev/status-resync", "now")
			if got := matching(t, lc, p); len(got) != 0 {
				t.Errorf("after ImagePullBackOff, stages %v match", got)
			}
		})
	}
}

// An init container whose image cannot be pulled holds the pod at initialization.
func TestImagePullInitContainer(t *testing.T) {
	lc := podStages(t, podStageFiles...)
	p := pod("init", "busybox")
	p.Spec.InitContainers = []corev1.Container{{Name: "first", Image: "busybox"}, {Name: "fetch", Image: "registry.invalid/fetch"}, {Name: "last", Image: "busybox"}}
	p = play(t, lc, p, "pod-image-pull-error")
	if c := condition(p, corev1.PodInitialized); c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotInitialized" || c.Message != "containers with incomplete status: [fetch]" {
		t.Errorf("Initialized: %+v", c)
	}
	want := map[string]string{"first": "terminated", "fetch": "ErrImagePull", "last": "PodInitializing"}
	for _, s := range p.Status.InitContainerStatuses {
		got := "?"
		switch {
		case s.State.Terminated != nil:
			got = "terminated"
		case s.State.Waiting != nil:
			got = s.State.Waiting.Reason
		}
		if got != want[s.Name] {
			t.Errorf("init container %s: %s, want %s", s.Name, got, want[s.Name])
		}
	}
	if len(p.Status.InitContainerStatuses) != 3 {
		t.Errorf("init container statuses %+v", p.Status.InitContainerStatuses)
	}
	if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Waiting == nil || cs[0].State.Waiting.Reason != "PodInitializing" {
		t.Errorf("container statuses %+v, want c0 waiting PodInitializing", cs)
	}
	p = play(t, lc, p, "pod-image-pull-backoff")
	for _, s := range p.Status.InitContainerStatuses {
		if s.Name == "fetch" && (s.State.Waiting == nil || s.State.Waiting.Reason != "ImagePullBackOff") {
			t.Errorf("init container fetch after back-off: %+v", s.State)
		}
		if s.Name == "first" && s.State.Terminated == nil {
			t.Errorf("init container first lost its state: %+v", s.State)
		}
	}
}

// Pods asking for host ports start only once hack/podreaper admitted them (annotation), with any stage.
func TestHostPortAdmissionGate(t *testing.T) {
	lc := podStages(t, podStageFiles...)
	initOnly := pod("init-port", "busybox")
	initOnly.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 1, HostPort: 1}}}}
	for _, c := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{withHostPort(pod("port", "busybox"), 21017), "pod-ready"},
		{initOnly, "pod-ready"},
		{withHostPort(annotate(pod("never-ready", "busybox"), "e2e.ordinal.dev/never-ready", "true"), 21017), "pod-never-ready"},
		{withHostPort(annotate(pod("paced", "busybox"), "e2e.ordinal.dev/start-delay", "1s"), 21017), "pod-start"},
		{withHostPort(pod("broken", "broken-image"), 21017), "pod-image-pull-error"},
	} {
		if got := matching(t, lc, c.pod); len(got) != 0 {
			t.Errorf("pod %s, not admitted: stages %v, want none", c.pod.Name, got)
		}
		p := annotate(c.pod.DeepCopy(), admitted, "true")
		if got := matching(t, lc, p); !slices.Equal(got, []string{c.want}) {
			t.Errorf("pod %s, admitted: stages %v, want [%s]", c.pod.Name, got, c.want)
		}
	}
	// a container port without a host port needs no admission
	p := pod("no-host-port", "busybox")
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
	if got := matching(t, lc, p); !slices.Equal(got, []string{"pod-ready"}) {
		t.Errorf("container port only: stages %v, want [pod-ready]", got)
	}
	// rejected by podreaper (phase Failed): nothing starts it
	r := withHostPort(pod("rejected", "busybox"), 21017)
	r.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "NodePorts"}
	if got := matching(t, lc, r); len(got) != 0 {
		t.Errorf("rejected pod: stages %v, want none", got)
	}
}

// The pods the existing stages were made for still go their way.
func TestExistingStagesUnchanged(t *testing.T) {
	lc := podStages(t, podStageFiles...)
	ready := play(t, lc, pod("ready", "busybox"), "pod-ready")
	if ready.Status.Phase != corev1.PodRunning || condition(ready, corev1.PodReady).Status != corev1.ConditionTrue {
		t.Errorf("pod-ready: %s, Ready %+v", ready.Status.Phase, condition(ready, corev1.PodReady))
	}
	if got := matching(t, lc, ready); len(got) != 0 {
		t.Errorf("a Ready pod selects %v", got)
	}
	nr := play(t, lc, annotate(pod("never", "busybox"), "e2e.ordinal.dev/never-ready", "true"), "pod-never-ready")
	if nr.Status.Phase != corev1.PodRunning || condition(nr, corev1.PodReady).Status != corev1.ConditionFalse {
		t.Errorf("pod-never-ready: %s, Ready %+v", nr.Status.Phase, condition(nr, corev1.PodReady))
	}
	if got := matching(t, lc, nr); len(got) != 0 {
		t.Errorf("a never-ready pod selects %v once Running", got)
	}
	paced := play(t, lc, annotate(pod("paced", "busybox"), "e2e.ordinal.dev/start-delay", "1s"), "pod-start")
	paced = play(t, lc, paced, "pod-paced-ready")
	if condition(paced, corev1.PodReady).Status != corev1.ConditionTrue {
		t.Errorf("paced pod not Ready: %+v", paced.Status)
	}
	// a deleted pod: no stage (hack/podreaper stops and removes it)
	d := pod("deleted", "busybox")
	now := metav1.Now()
	d.DeletionTimestamp = &now
	if got := matching(t, lc, d); len(got) != 0 {
		t.Errorf("a deleted pod selects %v", got)
	}
	// an unscheduled pod is not kwok's at all (kwok plays only pods on its nodes): nothing to check here
}

// A running pod whose image changes in place (Ordinal's in-place-update): restarted with the new image (its
// status says so, restartCount up, not Ready), then Ready again; with a resize, the statuses report the new
// resources; nothing plays once the pod runs its spec.
func TestInPlaceRestartAndResize(t *testing.T) {
	lc := podStages(t, podStageFiles...)
	p := play(t, lc, annotate(pod("web-0", "app:1"), "ordinal.dev/in-place-update", "web-abc"), "pod-ready")
	if got := matching(t, lc, p); len(got) != 0 {
		t.Fatalf("a Ready pod running its spec selects %v", got)
	}
	p.Spec.Containers[0].Image = "app:2"
	restarted := play(t, lc, p, "pod-in-place-restart")
	cs := restarted.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].Image != "app:2" || cs[0].RestartCount != 1 || cs[0].Ready || cs[0].State.Running == nil {
		t.Fatalf("after the restart: %+v", cs)
	}
	if condition(restarted, corev1.PodReady).Status != corev1.ConditionFalse {
		t.Errorf("Ready %+v during the restart", condition(restarted, corev1.PodReady))
	}
	ready := play(t, lc, restarted, "pod-in-place-ready")
	if condition(ready, corev1.PodReady).Status != corev1.ConditionTrue || !ready.Status.ContainerStatuses[0].Ready ||
		ready.Status.ContainerStatuses[0].Image != "app:2" || ready.Status.ContainerStatuses[0].RestartCount != 1 {
		t.Errorf("after pod-in-place-ready: %+v", ready.Status)
	}
	if got := matching(t, lc, ready); len(got) != 0 {
		t.Errorf("a pod running its new spec selects %v", got)
	}
	// a second in-place change restarts it again
	ready.Spec.Containers[0].Image = "app:3"
	if again := play(t, lc, ready, "pod-in-place-restart"); again.Status.ContainerStatuses[0].RestartCount != 2 {
		t.Errorf("second restart: %+v", again.Status.ContainerStatuses)
	}

	// a resize: the statuses take the spec's resources
	ready.Spec.Containers[0].Image = "app:2"
	ready.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("250m")}}
	resized := play(t, lc, ready, "pod-resize-status")
	st := resized.Status.ContainerStatuses[0]
	if st.Resources == nil || st.Resources.Requests.Cpu().String() != "250m" || st.AllocatedResources.Cpu().String() != "250m" ||
		st.Image != "app:2" || !st.Ready || st.RestartCount != 1 {
		t.Errorf("after the resize: %+v", st)
	}
	if got := matching(t, lc, resized); len(got) != 0 {
		t.Errorf("a resized pod selects %v", got)
	}

	// a resize of a pod as pod-ready left it (its statuses report no resources, which kube-apiserver takes for
	// a node that cannot resize)
	fresh := pod("web-2", "app:1")
	fresh.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}
	fresh = play(t, lc, fresh, "pod-ready")
	fresh = play(t, lc, fresh, "pod-resize-status")
	if st := fresh.Status.ContainerStatuses[0]; st.Resources == nil || st.Resources.Requests.Cpu().String() != "10m" || !st.Ready {
		t.Errorf("a running pod's statuses after pod-resize-status: %+v", st)
	}

	// an image that cannot be pulled: left running the old one
	broken := play(t, lc, pod("web-1", "app:1"), "pod-ready")
	broken.Spec.Containers[0].Image = "registry.invalid/app:2"
	if got := matching(t, lc, broken); len(got) != 0 {
		t.Errorf("an in-place change to an unpullable image selects %v", got)
	}
}

// A pod with a readiness probe starts not Ready, as a kubelet starts it, whatever else it is annotated with:
// hack/podreaper runs the probe and sets its readiness. One without a probe is Ready at once (pod-ready).
func TestReadinessProbedPodsStartNotReady(t *testing.T) {
	lc := podStages(t, podStageFiles...)
	probed := func(name string) *corev1.Pod {
		p := pod(name, "busybox", "busybox")
		p.Spec.Containers[1].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/data/statefulset-continue"}}}}
		return p
	}
	for _, p := range []*corev1.Pod{
		probed("probed"),
		annotate(probed("paced"), "e2e.ordinal.dev/start-delay", "1s", "e2e.ordinal.dev/ready-delay", "1s"),
		annotate(probed("ready-delay"), "e2e.ordinal.dev/ready-delay", "1s"),
	} {
		got := play(t, lc, p, "pod-never-ready")
		if got.Status.Phase != corev1.PodRunning || condition(got, corev1.PodReady).Status != corev1.ConditionFalse ||
			condition(got, corev1.ContainersReady).Status != corev1.ConditionFalse {
			t.Errorf("pod %s: %s, Ready %+v", p.Name, got.Status.Phase, condition(got, corev1.PodReady))
		}
		for _, cs := range got.Status.ContainerStatuses {
			if cs.Ready || cs.State.Running == nil {
				t.Errorf("pod %s: container %s ready %t, state %+v", p.Name, cs.Name, cs.Ready, cs.State)
			}
		}
		if next := matching(t, lc, got); len(next) != 0 {
			t.Errorf("pod %s selects %v once Running: kwok would make it Ready before its probe passed", p.Name, next)
		}
	}
	// a probe on no container: Ready at once, as before
	p := pod("unprobed", "busybox")
	p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}}
	if got := play(t, lc, p, "pod-ready"); condition(got, corev1.PodReady).Status != corev1.ConditionTrue {
		t.Errorf("a pod without a readiness probe: Ready %+v", condition(got, corev1.PodReady))
	}
}

// A pod with a readiness probe restarted in place is not made Ready by kwok: its restarted container's probe
// must pass again (hack/podreaper), as a kubelet's prober starts afresh with a new container.
func TestInPlaceRestartOfAProbedPodWaitsForTheProbe(t *testing.T) {
	lc := podStages(t, podStageFiles...)
	p := annotate(pod("web-0", "app:1"), "ordinal.dev/in-place-update", "web-abc")
	p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready"}}}
	running := play(t, lc, p, "pod-never-ready")
	running.Status.ContainerStatuses[0].Ready = true // the prober found it ready
	running.Spec.Containers[0].Image = "app:2"
	restarted := play(t, lc, running, "pod-in-place-restart")
	if cs := restarted.Status.ContainerStatuses[0]; cs.Ready || cs.RestartCount != 1 || condition(restarted, corev1.PodReady).Status != corev1.ConditionFalse {
		t.Fatalf("after the restart: %+v, Ready %+v", cs, condition(restarted, corev1.PodReady))
	}
	if got := matching(t, lc, restarted); len(got) != 0 {
		t.Errorf("a probed pod restarted in place selects %v: kwok would make it Ready before its probe passed", got)
	}
}

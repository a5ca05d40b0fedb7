package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestTerminationDelay(t *testing.T) {
	grace := func(s int64) *int64 { return &s }
	for _, c := range []struct {
		name       string
		ann        map[string]string
		grace      *int64
		def        time.Duration
		want       time.Duration
		wantKilled bool
	}{
		{"no annotation: the default", nil, grace(30), time.Second, time.Second, false},
		{"the annotation's delay", map[string]string{terminationAnnotation: "3s"}, grace(30), 0, 3 * time.Second, false},
		{"exactly the grace period: stopped in time", map[string]string{terminationAnnotation: "10s"}, grace(10), 0, 10 * time.Second, false},
		{"longer than the grace period: killed at its end", map[string]string{terminationAnnotation: "1m"}, grace(10), 0, 10 * time.Second, true},
		{"grace period 0 and a delay: killed at once", map[string]string{terminationAnnotation: "1s"}, grace(0), 0, 0, true},
		{"grace period 0, no delay: stopped", nil, grace(0), 0, 0, false},
		{"no grace period given", map[string]string{terminationAnnotation: "1m"}, nil, 0, time.Minute, false},
		{"not a duration: the default", map[string]string{terminationAnnotation: "soon"}, grace(30), 2 * time.Second, 2 * time.Second, false},
		{"negative: the default", map[string]string{terminationAnnotation: "-1s"}, grace(30), 0, 0, false},
	} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Annotations: c.ann, DeletionGracePeriodSeconds: c.grace}}
		if got, killed := terminationDelay(p, c.def); got != c.want || killed != c.wantKilled {
			t.Errorf("%s: %s killed %t, want %s killed %t", c.name, got, killed, c.want, c.wantKilled)
		}
	}
}

var (
	t0 = metav1.NewTime(time.Date(2026, 11, 28, 18, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

func running(name string) corev1.ContainerStatus {
	tr := true
	return corev1.ContainerStatus{Name: name, Image: "img", Ready: true, Started: &tr,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t0}}}
}

func waiting(name, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: "img", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func exited(name string, code int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: "img",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: t0, FinishedAt: t0}}}
}

// readyPod is a Running and Ready pod whose containers (and init containers) have the given statuses.
func readyPod(containers []corev1.ContainerStatus, inits ...corev1.ContainerStatus) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", UID: "u0"}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c.Name, Image: "img"})
	}
	always := corev1.ContainerRestartPolicyAlways
	for _, c := range inits {
		ic := corev1.Container{Name: c.Name, Image: "img"}
		if c.State.Running != nil {
			ic.RestartPolicy = &always // a sidecar
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, ic)
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.5", StartTime: &t0,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t0},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t0},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t0},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: t0},
		},
		ContainerStatuses: containers, InitContainerStatuses: inits}
	return p
}

func TestStoppedStatus(t *testing.T) {
	type want struct {
		phase      corev1.PodPhase
		condReason string
		exit       map[string]int32  // container (or init container) -> exit code
		reason     map[string]string // container -> terminated reason
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		exit int32
		want want
	}{
		{"stopped in time: Succeeded", readyPod([]corev1.ContainerStatus{running("app")}), exitStopped,
			want{corev1.PodSucceeded, "PodCompleted", map[string]int32{"app": 0}, map[string]string{"app": "Completed"}}},
		{"killed at the end of the grace period: Failed", readyPod([]corev1.ContainerStatus{running("app"), running("side")}), exitKilled,
			want{corev1.PodFailed, "PodFailed", map[string]int32{"app": 137, "side": 137}, map[string]string{"app": "Error", "side": "Error"}}},
		{"a container that never started: Failed even if the others stopped in time",
			readyPod([]corev1.ContainerStatus{running("app"), waiting("pull", "ImagePullBackOff")}), exitStopped,
			want{corev1.PodFailed, "PodFailed", map[string]int32{"app": 0, "pull": 137}, map[string]string{"app": "Completed", "pull": "ContainerStatusUnknown"}}},
		{"a container that had exited 1 keeps its exit code", readyPod([]corev1.ContainerStatus{running("app"), exited("job", 1)}), exitStopped,
			want{corev1.PodFailed, "PodFailed", map[string]int32{"app": 0, "job": 1}, map[string]string{"app": "Completed"}}},
		{"a sidecar stops, a completed init container stays so",
			readyPod([]corev1.ContainerStatus{running("app")}, exited("init", 0), running("sidecar")), exitStopped,
			want{corev1.PodSucceeded, "PodCompleted", map[string]int32{"app": 0, "init": 0, "sidecar": 0}, map[string]string{"app": "Completed", "sidecar": "Completed"}}},
		{"no status for a container yet: never started", func() *corev1.Pod {
			p := readyPod([]corev1.ContainerStatus{running("app")})
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "late", Image: "img"})
			return p
		}(), exitStopped,
			want{corev1.PodFailed, "PodFailed", map[string]int32{"app": 0, "late": 137}, map[string]string{"late": "ContainerStatusUnknown"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := c.pod.DeepCopy()
			s := stoppedStatus(c.pod, c.exit, t1)
			if s.Phase != c.want.phase {
				t.Errorf("phase %s, want %s", s.Phase, c.want.phase)
			}
			conds := map[corev1.PodConditionType]corev1.PodCondition{}
			for _, cd := range s.Conditions {
				conds[cd.Type] = cd
			}
			for _, ty := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
				if cd := conds[ty]; cd.Status != corev1.ConditionFalse || cd.Reason != c.want.condReason || !cd.LastTransitionTime.Equal(&t1) {
					t.Errorf("%s: %+v, want False, %s, at %s", ty, cd, c.want.condReason, t1)
				}
			}
			for _, ty := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized} {
				if cd := conds[ty]; cd.Status != corev1.ConditionTrue || !cd.LastTransitionTime.Equal(&t0) {
					t.Errorf("%s changed: %+v", ty, cd)
				}
			}
			if len(s.Conditions) != 4 {
				t.Errorf("%d conditions, want 4: %+v", len(s.Conditions), s.Conditions)
			}
			if s.PodIP != "10.244.0.5" || s.StartTime == nil || !s.StartTime.Equal(&t0) {
				t.Errorf("pod IP or start time lost: %q %v", s.PodIP, s.StartTime)
			}
			all := append(append([]corev1.ContainerStatus{}, s.ContainerStatuses...), s.InitContainerStatuses...)
			if len(all) != len(c.want.exit) {
				t.Errorf("%d container statuses, want %d: %+v", len(all), len(c.want.exit), all)
			}
			for _, cs := range all {
				term := cs.State.Terminated
				if term == nil || cs.State.Running != nil || cs.State.Waiting != nil {
					t.Errorf("%s: state %+v, want terminated only", cs.Name, cs.State)
					continue
				}
				if w, ok := c.want.exit[cs.Name]; !ok || term.ExitCode != w {
					t.Errorf("%s: exit code %d, want %d", cs.Name, term.ExitCode, w)
				}
				if w, ok := c.want.reason[cs.Name]; ok && term.Reason != w {
					t.Errorf("%s: reason %q, want %q", cs.Name, term.Reason, w)
				}
				if cs.Ready {
					t.Errorf("%s: still ready", cs.Name)
				}
				if c.want.reason[cs.Name] == "Completed" || c.want.reason[cs.Name] == "Error" {
					if !term.StartedAt.Equal(&t0) || !term.FinishedAt.Equal(&t1) {
						t.Errorf("%s: started %s finished %s, want %s and %s", cs.Name, term.StartedAt, term.FinishedAt, t0, t1)
					}
				}
			}
			if !equalPods(before, c.pod) {
				t.Errorf("the pod given was modified")
			}
		})
	}
}

func equalPods(a, b *corev1.Pod) bool { return a.String() == b.String() }

func port(hostPort int32, proto corev1.Protocol, ip string) corev1.ContainerPort {
	return corev1.ContainerPort{ContainerPort: 8080, HostPort: hostPort, Protocol: proto, HostIP: ip}
}

func TestPortsConflict(t *testing.T) {
	for _, c := range []struct {
		name       string
		want, held corev1.ContainerPort
		conflict   bool
	}{
		{"same port, defaults (TCP, all addresses)", port(21017, "", ""), port(21017, "", ""), true},
		{"empty protocol is TCP", port(21017, "", ""), port(21017, corev1.ProtocolTCP, ""), true},
		{"another port", port(21017, "", ""), port(21018, "", ""), false},
		{"another protocol", port(53, corev1.ProtocolUDP, ""), port(53, corev1.ProtocolTCP, ""), false},
		{"same IP", port(80, "", "10.0.0.1"), port(80, "", "10.0.0.1"), true},
		{"different IPs", port(80, "", "10.0.0.1"), port(80, "", "10.0.0.2"), false},
		{"wanted on all addresses, held on one", port(80, "", ""), port(80, "", "10.0.0.2"), true},
		{"wanted on one, held on all (0.0.0.0)", port(80, "", "10.0.0.1"), port(80, "", "0.0.0.0"), true},
		{"no host port wanted", port(0, "", ""), port(0, "", ""), false},
	} {
		if got := portsConflict([]corev1.ContainerPort{c.want}, []corev1.ContainerPort{c.held}); got != c.conflict {
			t.Errorf("%s: conflict %t, want %t", c.name, got, c.conflict)
		}
	}
}

// hostPortPod is a pod bound to node asking for the given container ports in container "app".
func hostPortPod(uid, node string, phase corev1.PodPhase, ports ...corev1.ContainerPort) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "ns", UID: types.UID(uid)},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "img", Ports: ports}}},
		Status: corev1.PodStatus{Phase: phase}}
}

func TestHostPorts(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	p := hostPortPod("a", "n", corev1.PodPending, port(80, "", ""), port(0, "", ""))
	p.Spec.InitContainers = []corev1.Container{
		{Name: "setup", Ports: []corev1.ContainerPort{port(81, "", "")}},
		{Name: "sidecar", RestartPolicy: &always, Ports: []corev1.ContainerPort{port(82, "", "")}},
	}
	got := map[int32]bool{}
	for _, hp := range hostPorts(p) {
		got[hp.HostPort] = true
	}
	if len(got) != 2 || !got[80] || !got[82] {
		t.Errorf("host ports held %v, want 80 (container) and 82 (sidecar); not 81 (an init container that exits) nor 0", got)
	}
	if !asksHostPorts(p) {
		t.Errorf("asksHostPorts false for a pod with host ports")
	}
	// only an init container that exits asks: it still needs admission (kwok's stages wait for it)
	q := hostPortPod("b", "n", corev1.PodPending, port(0, "", ""))
	q.Spec.InitContainers = p.Spec.InitContainers[:1]
	if !asksHostPorts(q) || len(hostPorts(q)) != 0 {
		t.Errorf("init container's host port: asks %t, holds %v; want asks, holds none", asksHostPorts(q), hostPorts(q))
	}
	if asksHostPorts(hostPortPod("c", "n", corev1.PodPending, port(0, "", ""))) {
		t.Errorf("asksHostPorts true for a pod without host ports")
	}
}

func TestAdmit(t *testing.T) {
	conflict := port(21017, "", "")
	admittedSet := map[types.UID]bool{"admitted-pending": true}
	isAdmitted := func(p *corev1.Pod) bool { return admittedSet[p.UID] }
	for _, c := range []struct {
		name  string
		other *corev1.Pod
		want  bool
	}{
		{"the port held by a running pod on the node: rejected", hostPortPod("o", "n1", corev1.PodRunning, conflict), false},
		{"held by a pod admitted, not started yet: rejected", hostPortPod("admitted-pending", "n1", corev1.PodPending, conflict), false},
		{"a pod on another node: admitted", hostPortPod("o", "n2", corev1.PodRunning, conflict), true},
		{"a pod that has stopped (Failed): admitted", hostPortPod("o", "n1", corev1.PodFailed, conflict), true},
		{"a pod that has stopped (Succeeded): admitted", hostPortPod("o", "n1", corev1.PodSucceeded, conflict), true},
		{"a pod not admitted yet (decided later): admitted", hostPortPod("o", "n1", corev1.PodPending, conflict), true},
		{"another port: admitted", hostPortPod("o", "n1", corev1.PodRunning, port(21018, "", "")), true},
		{"no other pod: admitted", nil, true},
	} {
		p := hostPortPod("p", "n1", corev1.PodPending, conflict)
		nodePods := []*corev1.Pod{p} // the pod itself is on the node too: never a conflict with itself
		if c.other != nil {
			nodePods = append(nodePods, c.other)
		}
		if got := admit(p, nodePods, isAdmitted); got != c.want {
			t.Errorf("%s: admitted %t, want %t", c.name, got, c.want)
		}
	}
	if r := rejectedStatus(); r["phase"] != "Failed" || r["reason"] != "NodePorts" ||
		r["message"] != "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" {
		t.Errorf("rejected status %v", r)
	}
}

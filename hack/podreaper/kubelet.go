package main

// The kubelet's decisions podreaper emulates, as pure functions (table-tested in kubelet_test.go): when a
// deleted pod's containers stop and with which exit code, the status a kubelet then reports, and whether a pod
// asking for host ports is admitted to its node.

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// terminationAnnotation is how long a pod's containers take to stop (a Go duration).
const terminationAnnotation = "e2e.ordinal.dev/termination-delay"

// Exit codes of an emulated container: one that stops when asked (SIGTERM handled), and one that has not
// stopped by the end of the grace period and is killed (128 + SIGKILL, as container runtimes report it).
const (
	exitStopped int32 = 0
	exitKilled  int32 = 137
)

// terminationDelay is how long the containers of the deleted pod p take to stop: its annotation's delay, or
// def, at most its deletion grace period, when a kubelet kills what has not stopped (killed is then true).
func terminationDelay(p *corev1.Pod, def time.Duration) (d time.Duration, killed bool) {
	d = def
	if v, ok := p.Annotations[terminationAnnotation]; ok {
		if a, err := time.ParseDuration(v); err == nil && a >= 0 {
			d = a
		} else {
			logf("pod %s/%s: %s=%q is not a duration; using %s", p.Namespace, p.Name, terminationAnnotation, v, def)
		}
	}
	if g := p.DeletionGracePeriodSeconds; g != nil && d > time.Duration(*g)*time.Second {
		return time.Duration(*g) * time.Second, true
	}
	return d, false
}

// containersStopped reports whether p's status already says its containers have stopped for good (a terminal
// phase: a kubelet writes one once a deleted pod's containers have stopped, or when it rejects a pod).
func containersStopped(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// stoppedStatus is the status a kubelet reports for the deleted pod p once its containers have stopped, at
// `at`: every running container (and sidecar init container) terminated with exitCode (reason Completed for
// 0, Error otherwise), one that never started terminated with 137 and reason ContainerStatusUnknown (as the
// kubelet reports a container it cannot find when the pod ends), none ready; the phase terminal, Succeeded
// when every container exited 0 and Failed otherwise; Ready and ContainersReady False with reason
// PodCompleted or PodFailed. The rest of p's status (Initialized, PodScheduled, IPs, start time) is kept.
//
// Emulation: a real container's exit code is its program's, which kwok cannot know; the caller passes
// exitStopped for containers that stop within the grace period and exitKilled for those killed at its end
// (terminationDelay's killed).
func stoppedStatus(p *corev1.Pod, exitCode int32, at metav1.Time) corev1.PodStatus {
	s := *p.Status.DeepCopy()
	failed := false
	stop := func(spec []corev1.Container, old []corev1.ContainerStatus, init bool) []corev1.ContainerStatus {
		var out []corev1.ContainerStatus
		for _, c := range spec {
			cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
			for _, o := range old {
				if o.Name == c.Name {
					cs = *o.DeepCopy()
				}
			}
			if init && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				// a run-to-completion init container is not stopped: it has exited, or never will run
				out = append(out, cs)
				continue
			}
			switch {
			case cs.State.Terminated != nil: // already exited
			case cs.State.Running != nil:
				t := &corev1.ContainerStateTerminated{ExitCode: exitCode, Reason: "Completed", StartedAt: cs.State.Running.StartedAt, FinishedAt: at}
				if exitCode != 0 {
					t.Reason = "Error"
				}
				cs.State = corev1.ContainerState{Terminated: t}
			default: // never started (waiting for its image, say)
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitKilled,
					Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated"}}
			}
			if cs.State.Terminated.ExitCode != 0 {
				failed = true
			}
			cs.Ready, cs.Started = false, ptrFalse()
			out = append(out, cs)
		}
		return out
	}
	s.InitContainerStatuses = stop(p.Spec.InitContainers, p.Status.InitContainerStatuses, true)
	s.ContainerStatuses = stop(p.Spec.Containers, p.Status.ContainerStatuses, false)
	s.Phase = corev1.PodSucceeded
	reason := "PodCompleted"
	if failed {
		s.Phase, reason = corev1.PodFailed, "PodFailed"
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		setCondition(&s, corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, LastTransitionTime: at})
	}
	return s
}

func ptrFalse() *bool { f := false; return &f }

// setCondition replaces s's condition of c's type with c (its transition time kept if the status is the same),
// or adds it.
func setCondition(s *corev1.PodStatus, c corev1.PodCondition) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == c.Type {
			if s.Conditions[i].Status == c.Status {
				c.LastTransitionTime = s.Conditions[i].LastTransitionTime
			}
			s.Conditions[i] = c
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}

// The kubelet's admission failure for a host port already taken on the node: the NodePorts predicate's name as
// reason, and its message (pkg/kubelet/lifecycle: "Predicate <name> failed: <reason>", prefixed by
// "Pod was rejected: " when the kubelet writes the status).
const (
	admittedAnnotation    = "localk8s.ordinal.dev/admitted"
	hostPortRejectReason  = "NodePorts"
	hostPortRejectMessage = "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
)

// asksHostPorts reports whether any container or init container of p declares a host port: the pods kwok's
// stages leave to podreaper's admission (they start once annotated admittedAnnotation).
func asksHostPorts(p *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for _, c := range cs {
			for _, port := range c.Ports {
				if port.HostPort > 0 {
					return true
				}
			}
		}
	}
	return false
}

// hostPorts are the host ports p holds on its node while it runs, as the scheduler and the kubelet count them:
// those of its containers and of its restartable (sidecar) init containers; other init containers have exited
// by the time the pod runs.
func hostPorts(p *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			out = appendHostPorts(out, c.Ports)
		}
	}
	for _, c := range p.Spec.Containers {
		out = appendHostPorts(out, c.Ports)
	}
	return out
}

func appendHostPorts(out, ports []corev1.ContainerPort) []corev1.ContainerPort {
	for _, port := range ports {
		if port.HostPort > 0 {
			out = append(out, port)
		}
	}
	return out
}

// portsConflict reports whether a port of want is taken by one of held: the same protocol (TCP when empty)
// and host port, on the same host IP or where either side binds all addresses (an empty host IP or 0.0.0.0).
func portsConflict(want, held []corev1.ContainerPort) bool {
	norm := func(p corev1.ContainerPort) (ip, proto string) {
		ip, proto = p.HostIP, string(p.Protocol)
		if ip == "" {
			ip = "0.0.0.0"
		}
		if proto == "" {
			proto = string(corev1.ProtocolTCP)
		}
		return ip, proto
	}
	for _, w := range want {
		if w.HostPort <= 0 {
			continue
		}
		wip, wproto := norm(w)
		for _, h := range held {
			hip, hproto := norm(h)
			if h.HostPort == w.HostPort && hproto == wproto && (wip == hip || wip == "0.0.0.0" || hip == "0.0.0.0") {
				return true
			}
		}
	}
	return false
}

// admit decides a kubelet's admission of pod p (bound to a node, asking for host ports) given the other pods
// bound to that node: rejected when one of them that the kubelet runs (admitted and not terminal) holds a
// host port p asks for. A pod it runs: one admitted before (isAdmitted), or Running.
func admit(p *corev1.Pod, nodePods []*corev1.Pod, isAdmitted func(*corev1.Pod) bool) bool {
	var held []corev1.ContainerPort
	for _, o := range nodePods {
		if o.UID == p.UID || o.Spec.NodeName != p.Spec.NodeName || containersStopped(o) {
			continue
		}
		if isAdmitted(o) || o.Status.Phase == corev1.PodRunning {
			held = append(held, hostPorts(o)...)
		}
	}
	return !portsConflict(hostPorts(p), held)
}

// rejectedStatus is the status patch with which a kubelet fails a pod it does not admit.
func rejectedStatus() map[string]any {
	return map[string]any{"phase": string(corev1.PodFailed), "reason": hostPortRejectReason, "message": hostPortRejectMessage}
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Readiness probes, as a kubelet runs them, for the pods kwok starts not Ready (those with a readiness probe;
// scripts/localk8s/kwok/pod-never-ready.yaml): each container's probe every periodSeconds from
// initialDelaySeconds after it started; a container is ready after successThreshold successes in a row and
// not ready after failureThreshold failures; the pod is Ready when every container is ready and its
// readiness gates are True. What a probe finds is the container's (sandbox.go):
//   - exec: the command's exit code, run in the container's sandbox (this machine's program of that name); a
//     command this machine does not have (exit code 127: a program only the image has) passes, as kwok made
//     every pod Ready before: the emulation cannot judge it;
//   - httpGet: whether the container has the file the path names (its image serves every probed path until
//     something moves the file away);
//   - tcpSocket, grpc: success (the container listens).
//
// An exec probe's timeout counts from its command's start, once the sandbox is set up, and is at least
// minProbeTimeout whatever timeoutSeconds says: on a loaded machine a sandbox, or even `test -f`, can take
// over a second to be scheduled, and a probe must not fail for the machine's speed rather than the
// container's state. A command that never ends still fails its probe, as a kubelet's does.

// minProbeTimeout is the least time an exec probe's command is given.
const minProbeTimeout = 10 * time.Second

// commandNotFound is a shell's and a container runtime's exit code for a command it cannot find.
const commandNotFound = 127

// probeResult is what a container's probes have said so far.
type probeResult struct {
	instance           string // the container it is about: name and restart count (a restart starts afresh)
	ready              bool
	successes, failure int32     // consecutive
	last               time.Time // when the last probe started
}

// probePeriod is how often pr runs: periodSeconds, the API server's default 10 when unset.
func probePeriod(pr *corev1.Probe) time.Duration {
	if pr.PeriodSeconds <= 0 {
		return 10 * time.Second
	}
	return time.Duration(pr.PeriodSeconds) * time.Second
}

// wait is how long until pr, of a container started at started, is to run again (0 or less: now): its first
// run initialDelaySeconds after the start, then each periodSeconds after the last, each container's probe at
// its own period, as a kubelet's probe workers run them.
func (r *probeResult) wait(pr *corev1.Probe, started, now time.Time) time.Duration {
	next := started.Add(time.Duration(pr.InitialDelaySeconds) * time.Second)
	if !r.last.IsZero() {
		next = r.last.Add(probePeriod(pr))
	}
	return next.Sub(now)
}

// record counts one probe's result against the probe's thresholds.
func (r *probeResult) record(ok bool, pr *corev1.Probe) {
	success, failure := max(pr.SuccessThreshold, 1), pr.FailureThreshold
	if failure <= 0 {
		failure = 3 // the API server's default
	}
	if ok {
		r.successes, r.failure = r.successes+1, 0
		if r.successes >= success {
			r.ready = true
		}
		return
	}
	r.successes, r.failure = 0, r.failure+1
	if r.failure >= failure {
		r.ready = false
	}
}

// neverReadyAnnotation "true" keeps a pod not Ready for good (scripts/localk8s/kwok/pod-never-ready.yaml), as
// a container whose readiness probe keeps failing: its probes are not run, lest they make it Ready.
const neverReadyAnnotation = "e2e.ordinal.dev/never-ready"

// probedHere reports whether podreaper runs p's readiness probes: it has one, and is not kept never Ready.
func probedHere(p *corev1.Pod) bool {
	if p.Annotations[neverReadyAnnotation] == "true" {
		return false
	}
	for _, c := range p.Spec.Containers {
		if c.ReadinessProbe != nil {
			return true
		}
	}
	return false
}

func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// probe starts, once per pod, the loop that runs running pod p's readiness probes and writes its readiness;
// it ends when the pod is gone, deleted or no longer running, a probe then running with it.
func (k *kubelet) probe(ctx context.Context, p *corev1.Pod) {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		k.stopProbes(p.UID)
		return
	}
	if k.state == "" || !probedHere(p) {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	if _, busy := k.probing.LoadOrStore(p.UID, cancel); busy {
		cancel()
		return
	}
	go func() {
		pp := &podProber{k: k, results: map[string]*probeResult{}, workers: map[string]context.CancelFunc{}, probed: make(chan struct{}, 1)}
		// In this order: the workers are stopped, their commands have ended, and only then is the pod no
		// longer probing (a loop that has ended leaves no probe's command running, however slow its kill).
		defer k.probing.Delete(p.UID)
		defer pp.running.Wait()
		defer cancel() // and the workers with it
		for {
			cur, ok := k.current(p)
			if !ok || cur.DeletionTimestamp != nil || cur.Status.Phase != corev1.PodRunning {
				return
			}
			running := pp.follow(ctx, cur)
			wait := pp.writeReadiness(ctx, cur, running)
			select {
			case <-pp.probed:
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		}
	}()
}

// podProber is one pod's probing: a worker per running container instance with a readiness probe, and what
// their probes have said.
type podProber struct {
	k       *kubelet
	mu      sync.Mutex                    // guards what the workers record
	results map[string]*probeResult       // by container name
	workers map[string]context.CancelFunc // by container instance
	probed  chan struct{}                 // a worker has recorded a result
	running sync.WaitGroup                // the workers, until each has returned (its command ended)
}

// follow starts a worker for each running container instance of cur with a readiness probe and stops those
// of instances no longer running (restarted or stopped: the probe goes with them); it returns the running ones.
func (pp *podProber) follow(ctx context.Context, cur *corev1.Pod) map[string]bool {
	running := map[string]bool{}
	for _, c := range cur.Spec.Containers {
		pr, cs := c.ReadinessProbe, containerStatus(cur, c.Name)
		if pr == nil || cs == nil || cs.State.Running == nil {
			continue
		}
		instance := fmt.Sprintf("%s-%d", c.Name, cs.RestartCount)
		running[instance] = true
		if pp.workers[instance] == nil {
			r := &probeResult{instance: instance}
			pp.mu.Lock()
			pp.results[c.Name] = r
			pp.mu.Unlock()
			wctx, stop := context.WithCancel(ctx)
			pp.workers[instance] = stop
			pp.running.Go(func() { pp.k.probeWorker(wctx, cur, c.Name, pr, cs.State.Running.StartedAt.Time, r, &pp.mu, pp.probed) })
		}
	}
	for instance, stop := range pp.workers {
		if !running[instance] {
			stop()
			delete(pp.workers, instance)
		}
	}
	return running
}

// writeReadiness writes cur's readiness if the probes moved it, and says how long to wait for the next look
// at the pod without a probe's result (a readiness gate, a restart).
func (pp *podProber) writeReadiness(ctx context.Context, cur *corev1.Pod, running map[string]bool) time.Duration {
	pp.mu.Lock()
	status, changed := readyStatus(cur, func(name string) bool {
		r := pp.results[name]
		return r != nil && r.ready && running[r.instance]
	}, metav1.Now())
	pp.mu.Unlock()
	if !changed {
		return 10 * time.Second
	}
	q := cur.DeepCopy()
	q.Status = status
	if _, err := pp.k.kc.CoreV1().Pods(q.Namespace).UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		if !gone(err) {
			logf("writing the readiness of pod %s/%s (uid %s): %v", cur.Namespace, cur.Name, cur.UID, err)
		}
		return time.Second // a conflict: judge again on the pod as it is now
	}
	logf("pod %s/%s (uid %s): Ready %s", cur.Namespace, cur.Name, cur.UID, podCondition(&status, corev1.PodReady))
	return 10 * time.Second
}

// probeWorker runs probe pr of container name of pod p (started at started) at its period, recording its
// results in r, until ctx ends; probed hears of each result. One per container instance, as a kubelet's
// probe workers: a container's long probe holds back no other's.
func (k *kubelet) probeWorker(ctx context.Context, p *corev1.Pod, name string, pr *corev1.Probe, started time.Time,
	r *probeResult, mu *sync.Mutex, probed chan<- struct{}) {
	var fs *container
	for sleep(ctx, r.wait(pr, started, time.Now())) {
		r.last = time.Now()
		if fs == nil {
			var err error
			if fs, err = containerOf(ctx, k.state, p, name, claimsOf(k.kc)); err != nil {
				logf("pod %s/%s (uid %s), container %s: %v", p.Namespace, p.Name, p.UID, name, err)
				continue
			}
		}
		ok := k.runProbe(ctx, p, fs, pr)
		if ctx.Err() != nil {
			return // stopped while probing: the container is gone, the result with it
		}
		mu.Lock()
		r.record(ok, pr)
		mu.Unlock()
		select {
		case probed <- struct{}{}:
		default:
		}
	}
}

// stopProbes ends the probe loop of the pod with UID uid, if it has one: its containers have stopped, and a
// probe's command in one of them (however long its timeoutSeconds) ends with them.
func (k *kubelet) stopProbes(uid types.UID) {
	if cancel, ok := k.probing.Load(uid); ok {
		cancel.(context.CancelFunc)()
	}
}

// runProbe runs one probe of pod p in its container fs and says whether it passed.
func (k *kubelet) runProbe(ctx context.Context, p *corev1.Pod, fs *container, pr *corev1.Probe) bool {
	switch {
	case pr.Exec != nil:
		stderr := &head{n: 1024}
		code, err := fs.run(ctx, pr.Exec.Command, nil, io.Discard, stderr, max(time.Duration(pr.TimeoutSeconds)*time.Second, minProbeTimeout))
		if err != nil {
			logf("exec probe %q of pod %s/%s (uid %s): %v", pr.Exec.Command, p.Namespace, p.Name, p.UID, err)
			return false
		}
		if code == commandNotFound {
			if _, said := k.unjudged.LoadOrStore(p.UID, true); !said {
				logf("exec probe %q of pod %s/%s (uid %s): not a command of this machine (%s); counted as passing",
					pr.Exec.Command, p.Namespace, p.Name, p.UID, strings.TrimSpace(string(stderr.b)))
			}
			return true
		}
		return code == 0
	case pr.HTTPGet != nil: // within the root: no symlink the container left says anything of this machine
		root, err := os.OpenRoot(fs.Root)
		if err != nil {
			return false
		}
		defer root.Close()
		_, err = root.Stat(inRoot(pr.HTTPGet.Path))
		return err == nil
	}
	return true
}

// head keeps the first n bytes written to it: enough of a command's output for a log line, whatever it writes.
type head struct {
	b []byte
	n int
}

func (h *head) Write(p []byte) (int, error) {
	h.b = append(h.b, p[:min(len(p), max(h.n-len(h.b), 0))]...)
	return len(p), nil
}

// readyStatus is p's status with its readiness as a kubelet reports it, given whether each probed container's
// probe says it is ready (a running container without a readiness probe is ready), and whether it differs
// from p's status in any container's readiness or the Ready and ContainersReady conditions.
func readyStatus(p *corev1.Pod, probedReady func(container string) bool, now metav1.Time) (corev1.PodStatus, bool) {
	s := *p.Status.DeepCopy()
	probed := map[string]bool{}
	for _, c := range p.Spec.Containers {
		probed[c.Name] = c.ReadinessProbe != nil
	}
	changed := false
	readyOf := map[string]bool{}
	for i := range s.ContainerStatuses {
		cs := &s.ContainerStatuses[i]
		ready := cs.State.Running != nil && (!probed[cs.Name] || probedReady(cs.Name))
		if cs.Ready != ready {
			cs.Ready, changed = ready, true
		}
		readyOf[cs.Name] = ready
	}
	// in the kubelet's words (status.GenerateContainersReadyCondition, GeneratePodReadyCondition)
	var unknown, unready []string
	for _, c := range p.Spec.Containers {
		if ready, known := readyOf[c.Name]; !known {
			unknown = append(unknown, c.Name)
		} else if !ready {
			unready = append(unready, c.Name)
		}
	}
	var messages []string
	if len(unknown) > 0 {
		messages = append(messages, fmt.Sprintf("containers with unknown status: %s", unknown))
	}
	if len(unready) > 0 {
		messages = append(messages, fmt.Sprintf("containers with unready status: %s", unready))
	}
	containers := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now}
	if len(messages) > 0 {
		containers.Status, containers.Reason, containers.Message = corev1.ConditionFalse, "ContainersNotReady", strings.Join(messages, ", ")
	}
	ready := containers
	ready.Type = corev1.PodReady
	if len(messages) == 0 {
		var gates []string
		for _, g := range p.Spec.ReadinessGates {
			switch c := podCondition(&s, g.ConditionType); c {
			case "":
				gates = append(gates, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
			case corev1.ConditionTrue:
			default:
				gates = append(gates, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %s", g.ConditionType, c))
			}
		}
		if len(gates) > 0 {
			ready.Status, ready.Reason, ready.Message = corev1.ConditionFalse, "ReadinessGatesNotReady", strings.Join(gates, ", ")
		}
	}
	for _, c := range []corev1.PodCondition{containers, ready} {
		if podCondition(&s, c.Type) != c.Status {
			changed = true
		}
		setCondition(&s, c)
	}
	return s, changed
}

// podCondition is the status of s's condition of type t ("" if it has none).
func podCondition(s *corev1.PodStatus, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// Command podreaper is the local test cluster's (scripts/cluster-up.sh) stand-in for what a kubelet does with
// pods that kwok's stages cannot do: kwok plays each pod's stages alone, from that pod's own fields; the
// behaviours here need the other pods of the node, the API's preconditions or a decision taken once.
//
// Deleted pods: a pod bound to a node that has been deleted (deletionTimestamp set) has its containers
// stopped, e2e.ordinal.dev/termination-delay (a Go duration; default --delay) after the deletion is seen, at
// most its grace period (when a kubelet kills what has not stopped): it is then removed, with grace period 0 and
// its UID as precondition. A pod a finalizer still holds cannot be removed; a kubelet reports its stopped
// containers instead, and so does podreaper: containers terminated, not ready, the pod Ready=False and in a
// terminal phase (stoppedStatus: Succeeded, or Failed when killed at the end of the grace period); it is removed
// once the finalizers are gone.
//
// kwok's own pod-delete stages remove pods by name without a precondition and may repeat a queued removal;
// when a controller recreates a pod under the same name within ~0.1 s (a StatefulSet controller does), the
// replacement can be removed too. With the UID precondition a removal can only hit the pod it was meant for.
//
// Host ports: a pod bound to a node asking for host ports is admitted, as a kubelet admits it, before kwok
// starts it: rejected (phase Failed, reason NodePorts, the kubelet's message) when another pod running on the
// node holds one of its host ports, otherwise annotated localk8s.ordinal.dev/admitted, which kwok's stages wait
// for (scripts/localk8s/kwok/).
//
// It also does a kubelet's status resync for kwok: kwok gives up on a pod's status stage when kube-apiserver
// answers 500 (etcd restarting, say), and the pod stays Pending for good, where a kubelet would sync its status
// again. A pod bound to a node, still Pending after --resync-after and with no container status yet gets an
// annotation (localk8s.ordinal.dev/status-resync), whose update event makes kwok play the stage again.
//
// Readiness probes (prober.go): kwok starts a pod with a readiness probe not Ready, and podreaper runs its
// probes, in the pod's container sandbox (sandbox.go) where a probe runs a command, and sets its readiness.
// The same sandbox answers `kubectl exec` for upstream's e2e specs (kubectl.go).
//
// Usage: podreaper --kubeconfig FILE --state-dir DIR [--delay 0s] [--reap=true] [--admit=true] [--resync-after 5s]
//
//	podreaper kubectl --kubectl=PATH --state-dir=DIR [kubectl arguments]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "kubectl":
			os.Exit(kubectlMain(os.Args[2:]))
		case sandboxInitArg:
			sandboxInit(os.Args[2:])
		}
	}
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	delay := flag.Duration("delay", 0, "how long a deleted pod's containers take to stop, without its own e2e.ordinal.dev/termination-delay")
	reap := flag.Bool("reap", true, "stop and remove deleted pods (off when kwok's pod-delete stage does)")
	admitPods := flag.Bool("admit", true, "admit pods asking for host ports (kwok's stages wait for it)")
	resyncAfter := flag.Duration("resync-after", 5*time.Second, "nudge kwok about a bound pod still Pending after this long (0: never)")
	state := flag.String("state-dir", "", "the emulated containers' files and volumes (sandbox.go); empty: no readiness probes are run")
	flag.Parse()
	if err := run(*kubeconfig, *state, *delay, *reap, *admitPods, *resyncAfter); err != nil {
		fmt.Fprintln(os.Stderr, "podreaper:", err)
		os.Exit(1)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s podreaper: %s\n", time.Now().Format(time.RFC3339Nano), fmt.Sprintf(format, a...))
}

// kubelet holds what the emulated kubelet needs across pod events.
type kubelet struct {
	kc    kubernetes.Interface
	pods  cache.Indexer // all pods, indexed by node
	delay time.Duration
	state string // the containers' files and volumes (sandbox.go); "": no probes

	terminating sync.Map // pod UID -> chan struct{}: the goroutine stopping/removing it, woken by its events
	probing     sync.Map // pod UID -> context.CancelFunc: ends the goroutine running its readiness probes
	unjudged    sync.Map // pod UID -> true: told that an exec probe's command is not this machine's

	mu       sync.Mutex
	verdicts map[types.UID]bool // admission decisions taken (true: admitted), written or being written
}

const byNode = "node"

func run(kubeconfig, state string, delay time.Duration, reap, admitPods bool, resyncAfter time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = "ordinal-localk8s-podreaper"
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	k := &kubelet{kc: kc, delay: delay, state: state, verdicts: map[types.UID]bool{}}
	onPod := func(o interface{}) {
		p, ok := o.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		if admitPods {
			k.admit(ctx, p)
		}
		if reap {
			k.terminate(ctx, p)
		}
		k.probe(ctx, p)
	}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: cache.NewListWatchFromClient(kc.CoreV1().RESTClient(), "pods", metav1.NamespaceAll, fields.Everything()),
		ObjectType:    &corev1.Pod{},
		Indexers: cache.Indexers{byNode: func(o interface{}) ([]string, error) {
			if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				return []string{p.Spec.NodeName}, nil
			}
			return nil, nil
		}},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    onPod,
			UpdateFunc: func(_, o interface{}) { onPod(o) },
			DeleteFunc: func(o interface{}) {
				if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
					o = d.Obj
				}
				if p, ok := o.(*corev1.Pod); ok {
					k.mu.Lock()
					delete(k.verdicts, p.UID)
					k.mu.Unlock()
					k.unjudged.Delete(p.UID)
					k.stopProbes(p.UID)
					if state != "" { // its containers' files and emptyDir volumes go with it; its claims' stay
						_ = os.RemoveAll(filepath.Join(state, "pods", string(p.UID)))
					}
				}
			},
		},
	})
	k.pods = store.(cache.Indexer)
	if resyncAfter > 0 {
		go resyncStuck(ctx, kc, store, resyncAfter)
	}
	if state != "" {
		go sweepState(ctx, kc, state, store, ctrl.HasSynced)
	}
	logf("watching pods at %s (reap %t, admit %t, readiness probes %t)", cfg.Host, reap, admitPods, state != "")
	ctrl.RunWithContext(ctx)
	logf("stopped")
	return nil
}

// current is the pod p names as the store has it now, if it is still the same pod (same UID).
func (k *kubelet) current(p *corev1.Pod) (*corev1.Pod, bool) {
	o, ok, err := k.pods.GetByKey(p.Namespace + "/" + p.Name)
	if err != nil || !ok {
		return nil, false
	}
	cur, ok := o.(*corev1.Pod)
	if !ok || cur.UID != p.UID {
		return nil, false
	}
	return cur, true
}

// retry calls f until it succeeds or says to stop, backing off between failures, as a kubelet retries its
// writes: a write that fails (kube-apiserver briefly without etcd, say) would otherwise leave a pod stuck.
// f returns done=true when there is nothing (more) to do.
func retry(ctx context.Context, what string, f func() (done bool, err error)) {
	for backoff := 200 * time.Millisecond; ; backoff = min(2*backoff, 5*time.Second) {
		done, err := f()
		if done || ctx.Err() != nil {
			return
		}
		logf("%s: %v; retrying in %s", what, err, backoff)
		if !sleep(ctx, backoff) {
			return
		}
	}
}

// sleep waits d; false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// gone reports whether err says the pod is not there any more, or is another pod now (the UID precondition):
// nothing to do.
func gone(err error) bool { return apierrors.IsNotFound(err) || apierrors.IsConflict(err) }

// terminate stops the containers of the deleted pod p and removes it, in a goroutine of its own (one per pod;
// later events of the pod wake it): once its containers have stopped (terminationDelay), a pod without
// finalizers is removed; one held by finalizers gets the stopped status and is removed when they are gone.
func (k *kubelet) terminate(ctx context.Context, p *corev1.Pod) {
	if p.DeletionTimestamp == nil {
		return
	}
	wake := make(chan struct{}, 1)
	if w, busy := k.terminating.LoadOrStore(p.UID, wake); busy {
		select {
		case w.(chan struct{}) <- struct{}{}:
		default:
		}
		return
	}
	go func() {
		defer k.terminating.Delete(p.UID)
		wait, killed := terminationDelay(p, k.delay)
		if containersStopped(p) {
			wait = 0 // stopped already (before a restart of podreaper, or rejected at admission)
		}
		if !sleep(ctx, wait) {
			return
		}
		exit := exitStopped
		if killed {
			exit = exitKilled
		}
		for {
			cur, ok := k.current(p)
			if !ok {
				return
			}
			if len(cur.Finalizers) == 0 {
				k.remove(ctx, cur)
				return
			}
			if !containersStopped(cur) {
				retry(ctx, fmt.Sprintf("reporting pod %s/%s (uid %s) stopped", p.Namespace, p.Name, p.UID), func() (bool, error) {
					if cur, ok = k.current(p); !ok || len(cur.Finalizers) == 0 || containersStopped(cur) {
						return true, nil // gone, to be removed (next turn), or done
					}
					err := k.patchStatus(ctx, cur, stoppedStatus(cur, exit, metav1.Now()))
					if err == nil {
						logf("pod %s/%s (uid %s): containers stopped (exit code %d); held by finalizers %v", p.Namespace, p.Name, p.UID, exit, cur.Finalizers)
					}
					return err == nil || gone(err), err
				})
			}
			select { // until the finalizers change (or anything else of the pod)
			case <-wake:
			case <-ctx.Done():
				return
			}
		}
	}()
}

// remove deletes pod p with grace period 0 and its UID as precondition, retrying until done.
func (k *kubelet) remove(ctx context.Context, p *corev1.Pod) {
	uid := p.UID
	grace := int64(0)
	retry(ctx, fmt.Sprintf("removing pod %s/%s (uid %s)", p.Namespace, p.Name, uid), func() (bool, error) {
		err := k.kc.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
			GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err == nil {
			logf("removed pod %s/%s (uid %s)", p.Namespace, p.Name, uid)
		}
		return err == nil || gone(err), err // gone: already, or the name now belongs to another pod
	})
}

// patchStatus writes status (any JSON-able value) as p's status, with p's UID as precondition.
func (k *kubelet) patchStatus(ctx context.Context, p *corev1.Pod, status any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": p.UID}, "status": status})
	if err != nil {
		return err
	}
	_, err = k.kc.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// admit takes the kubelet's admission decision for p, a pod bound to a node that asks for host ports and that
// kwok does not start until admitted, then writes it (retrying): the annotation kwok's stages wait for, or the
// rejected status. Decisions are taken one at a time against the pods of the node admitted so far, including
// those whose annotation has not come back yet, as a kubelet admits pods one by one.
func (k *kubelet) admit(ctx context.Context, p *corev1.Pod) {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending || !asksHostPorts(p) {
		return
	}
	k.mu.Lock()
	if _, decided := k.verdicts[p.UID]; decided || p.Annotations[admittedAnnotation] != "" {
		k.mu.Unlock()
		return
	}
	var nodePods []*corev1.Pod
	objs, _ := k.pods.ByIndex(byNode, p.Spec.NodeName)
	for _, o := range objs {
		if q, ok := o.(*corev1.Pod); ok {
			nodePods = append(nodePods, q)
		}
	}
	ok := admit(p, nodePods, func(q *corev1.Pod) bool { return k.verdicts[q.UID] || q.Annotations[admittedAnnotation] != "" })
	k.verdicts[p.UID] = ok
	k.mu.Unlock()

	what := fmt.Sprintf("admitting pod %s/%s (uid %s) on node %s", p.Namespace, p.Name, p.UID, p.Spec.NodeName)
	go retry(ctx, what, func() (bool, error) {
		var err error
		if ok {
			patch := fmt.Sprintf(`{"metadata":{"uid":%q,"annotations":{%q:"true"}}}`, p.UID, admittedAnnotation)
			_, err = k.kc.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		} else {
			err = k.patchStatus(ctx, p, rejectedStatus())
		}
		if err == nil {
			logf("%s: admitted %t", what, ok)
		}
		return err == nil || gone(err), err
	})
}

const resyncAnnotation = "localk8s.ordinal.dev/status-resync"

// resyncStuck annotates, every `after`, the pods bound to a node that have stayed Pending for `after` since
// they were created or last annotated, so kwok sees an update and plays their status stage again.
func resyncStuck(ctx context.Context, kc kubernetes.Interface, store cache.Store, after time.Duration) {
	t := time.NewTicker(after)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		for _, o := range store.List() {
			p := o.(*corev1.Pod)
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending ||
				len(p.Status.ContainerStatuses) > 0 || len(p.Status.InitContainerStatuses) > 0 {
				continue // a Pending pod with container statuses has its kubelet status (an image pull failing, say)
			}
			since := p.CreationTimestamp.Time
			if last, err := time.Parse(time.RFC3339Nano, p.Annotations[resyncAnnotation]); err == nil && last.After(since) {
				since = last
			}
			if now.Sub(since) < after {
				continue
			}
			patch := fmt.Sprintf(`{"metadata":{"uid":%q,"annotations":{%q:%q}}}`, p.UID, resyncAnnotation, now.UTC().Format(time.RFC3339Nano))
			if _, err := kc.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				logf("status resync of pod %s/%s (uid %s): %v", p.Namespace, p.Name, p.UID, err)
				continue
			}
			logf("status resync of pod %s/%s (uid %s): Pending on node %s since %s", p.Namespace, p.Name, p.UID, p.Spec.NodeName, since.Format(time.RFC3339))
		}
	}
}

// sweepState removes from the state directory what outlived its object: once the pod cache has synced, the
// files of pods deleted while podreaper was not watching; then, every 10 minutes, the volumes of claims gone
// (a claim's volume outlives its pods, not the claim).
func sweepState(ctx context.Context, kc kubernetes.Interface, state string, pods cache.Store, synced cache.InformerSynced) {
	if !cache.WaitForCacheSync(ctx.Done(), synced) {
		return
	}
	_ = removeGone(filepath.Join(state, "pods"), func() (map[types.UID]bool, error) {
		live := map[types.UID]bool{}
		for _, o := range pods.List() {
			live[o.(*corev1.Pod).UID] = true
		}
		return live, nil
	})
	for {
		if err := removeGone(filepath.Join(state, "claims"), func() (map[types.UID]bool, error) {
			claims, err := kc.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			live := map[types.UID]bool{}
			for _, c := range claims.Items {
				live[c.UID] = true
			}
			return live, err
		}); err != nil {
			logf("listing claims, to remove the volumes of those gone: %v", err)
		}
		if !sleep(ctx, 10*time.Minute) {
			return
		}
	}
}

// Command podreaper finishes pod deletions in the local test cluster (scripts/cluster-up.sh) the way a
// kubelet does once a pod's containers have stopped: a pod bound to a node that has been deleted
// (deletionTimestamp set, no finalizers left) is removed with grace period 0 and its UID as precondition.
//
// kwok's own pod-delete stages remove pods by name without a precondition and may repeat a queued removal;
// when a controller recreates a pod under the same name within ~0.1 s (a StatefulSet controller does), the
// replacement can be removed too. With the UID precondition a removal can only hit the pod it was meant for.
//
// It also does a kubelet's status resync for kwok: kwok gives up on a pod's status stage when kube-apiserver
// answers 500 (etcd restarting, say), and the pod stays Pending for good, where a kubelet would sync its status
// again. A pod bound to a node and still Pending after --resync-after gets an annotation
// (localk8s.ordinal.dev/status-resync), whose update event makes kwok play the stage again.
//
// A pod annotated e2e.ordinal.dev/termination-delay (a Go duration) is removed that long after the deletion is
// seen (at most its grace period, when a kubelet would kill it): containers that take time to stop, which the
// e2e tests compare previews against.
//
// Usage: podreaper --kubeconfig FILE [--delay 0s]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
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
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	delay := flag.Duration("delay", 0, "wait this long after the deletion request (a container that takes time to stop)")
	resyncAfter := flag.Duration("resync-after", 5*time.Second, "nudge kwok about a bound pod still Pending after this long (0: never)")
	flag.Parse()
	if err := run(*kubeconfig, *delay, *resyncAfter); err != nil {
		fmt.Fprintln(os.Stderr, "podreaper:", err)
		os.Exit(1)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s podreaper: %s\n", time.Now().Format(time.RFC3339Nano), fmt.Sprintf(format, a...))
}

func run(kubeconfig string, delay, resyncAfter time.Duration) error {
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

	var inFlight sync.Map // pod UID -> struct{}
	reap := func(o interface{}) {
		p, ok := o.(*corev1.Pod)
		if !ok || p.DeletionTimestamp == nil || len(p.Finalizers) > 0 || p.Spec.NodeName == "" {
			return
		}
		if _, busy := inFlight.LoadOrStore(p.UID, struct{}{}); busy {
			return
		}
		wait := terminationDelay(p, delay)
		go func() {
			defer inFlight.Delete(p.UID)
			if wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return
				}
			}
			uid := p.UID
			grace := int64(0)
			// retried until done, as a kubelet does: a removal that fails (kube-apiserver briefly without
			// etcd, say) would otherwise leave the pod terminating for good, and its set stuck
			for backoff := 200 * time.Millisecond; ; backoff = min(2*backoff, 5*time.Second) {
				err := kc.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
					GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &uid}})
				switch {
				case err == nil:
					logf("removed pod %s/%s (uid %s)", p.Namespace, p.Name, uid)
					return
				case apierrors.IsNotFound(err), apierrors.IsConflict(err), ctx.Err() != nil:
					return // already gone, or the name now belongs to another pod: nothing to do
				}
				logf("removing pod %s/%s (uid %s): %v; retrying in %s", p.Namespace, p.Name, uid, err, backoff)
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: cache.NewListWatchFromClient(kc.CoreV1().RESTClient(), "pods", metav1.NamespaceAll, fields.Everything()),
		ObjectType:    &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    reap,
			UpdateFunc: func(_, o interface{}) { reap(o) },
		},
	})
	if resyncAfter > 0 {
		go resyncStuck(ctx, kc, store, resyncAfter)
	}
	logf("watching pods at %s", cfg.Host)
	ctrl.RunWithContext(ctx)
	logf("stopped")
	return nil
}

// terminationAnnotation is how long a pod's containers take to stop (a Go duration).
const terminationAnnotation = "e2e.ordinal.dev/termination-delay"

// terminationDelay is how long to wait before removing the deleted pod p: its annotation's delay, or def,
// at most its deletion grace period (a kubelet kills what has not stopped by then).
func terminationDelay(p *corev1.Pod, def time.Duration) time.Duration {
	d := def
	if v, ok := p.Annotations[terminationAnnotation]; ok {
		if a, err := time.ParseDuration(v); err == nil && a >= 0 {
			d = a
		} else {
			logf("pod %s/%s: %s=%q is not a duration; using %s", p.Namespace, p.Name, terminationAnnotation, v, def)
		}
	}
	if g := p.DeletionGracePeriodSeconds; g != nil && d > time.Duration(*g)*time.Second {
		d = time.Duration(*g) * time.Second
	}
	return d
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
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending {
				continue
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

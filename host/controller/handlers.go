package controller

import (
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// The informers' event handlers (upstream's addPod, updatePod, deletePod and the set handlers): which
// sets a change of a set, pod, revision or claim syncs again.

// registerHandlers registers the controller's handlers on group g's informers. A handler looks sets up by
// the object's namespace (setsIn), which is g's.
func (c *Controller) registerHandlers(logger klog.Logger, g *cacheGroup) {
	_, _ = g.sets[c.target.GroupResource()].AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj) },
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: func(obj any) { c.enqueue(obj) },
	})
	_, _ = g.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addPod(logger, obj) },
		UpdateFunc: func(old, cur any) { c.updatePod(logger, old, cur) },
		DeleteFunc: func(obj any) { c.deleteOwned(obj) },
	})
	owned := cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueueOwnerOrMatching(obj) },
		UpdateFunc: func(old, cur any) {
			if metaOf(old).GetResourceVersion() == metaOf(cur).GetResourceVersion() {
				return
			}
			if !reflect.DeepEqual(metav1.GetControllerOfNoCopy(metaOf(old)), metav1.GetControllerOfNoCopy(metaOf(cur))) {
				c.enqueueOwnerOrMatching(old)
			}
			c.enqueueOwnerOrMatching(cur)
		},
		DeleteFunc: func(obj any) { c.deleteOwned(obj) },
	}
	_, _ = g.revs.AddEventHandler(owned)
	_, _ = g.pvcs.AddEventHandler(owned)
}

// setsIn lists and gets the sets of namespace ns from the cache group holding it (none: no sets).
func (c *Controller) setsIn(ns string) appslisters.StatefulSetNamespaceLister {
	if g := c.caches.of(ns); g != nil {
		return g.setListers[c.target.GroupResource()].StatefulSets(ns)
	}
	return noSets.StatefulSets(ns)
}

// allSets returns the sets of every cache group.
func (c *Controller) allSets() []*appsv1.StatefulSet {
	var out []*appsv1.StatefulSet
	for _, g := range c.caches.groups() {
		sets, err := g.setListers[c.target.GroupResource()].List(labels.Everything())
		if err == nil {
			out = append(out, sets...)
		}
	}
	return out
}

// enqueueNaming enqueues every set of ns ("": every namespace) that carries the annotation (ordinal.dev/module,
// ordinal.dev/policies).
func (c *Controller) enqueueNaming(annotation, ns string) {
	for _, s := range c.allSets() {
		if _, ok := s.Annotations[annotation]; ok && (ns == "" || s.Namespace == ns) {
			c.enqueue(s)
		}
	}
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func metaOf(obj any) metav1.Object {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, _ := obj.(metav1.Object)
	return m
}

// resolveControllerRef returns the set a controller reference points to, if it
// is of the target kind and its UID matches.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.StatefulSet {
	if ref.Kind != c.target.Kind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != c.target.GroupVersion.Group {
		return nil
	}
	set, err := c.setsIn(namespace).Get(ref.Name)
	if err != nil || set.UID != ref.UID {
		return nil
	}
	return set
}

// setsMatching returns the sets in the object's namespace whose selector matches its labels.
func (c *Controller) setsMatching(m metav1.Object) []*appsv1.StatefulSet {
	sets, err := c.setsIn(m.GetNamespace()).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*appsv1.StatefulSet
	for _, s := range sets {
		sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(m.GetLabels())) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// addPod: as upstream, a pod being deleted is handled as a delete; a
// controlled pod enqueues its set; an orphan enqueues every matching set.
func (c *Controller) addPod(logger klog.Logger, obj any) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		c.deleteOwned(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if set := c.resolveControllerRef(pod.Namespace, ref); set != nil {
			c.enqueue(set)
		}
		return
	}
	sets := c.setsMatching(pod)
	if len(sets) > 1 {
		logger.Info("More than one StatefulSet selects the pod's labels", "pod", klog.KObj(pod), "sets", len(sets))
	}
	for _, s := range sets {
		c.enqueue(s)
	}
}

// updatePod mirrors upstream's updatePod, including the availability requeue
// after minReadySeconds+1s when a pod turns Ready.
func (c *Controller) updatePod(logger klog.Logger, old, cur any) {
	curPod, oldPod := cur.(*corev1.Pod), old.(*corev1.Pod)
	if curPod.ResourceVersion == oldPod.ResourceVersion {
		return
	}
	labelChanged := !reflect.DeepEqual(curPod.Labels, oldPod.Labels)
	curRef, oldRef := metav1.GetControllerOfNoCopy(curPod), metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if set := c.resolveControllerRef(oldPod.Namespace, oldRef); set != nil {
			c.enqueue(set)
		}
	}
	if curRef != nil {
		set := c.resolveControllerRef(curPod.Namespace, curRef)
		if set == nil {
			return
		}
		c.enqueue(set)
		if !kube.PodReady(oldPod) && kube.PodReady(curPod) && set.Spec.MinReadySeconds > 0 {
			key, _ := cache.MetaNamespaceKeyFunc(set)
			logger.V(2).Info("StatefulSet will be enqueued after minReadySeconds for availability check",
				"statefulSet", klog.KObj(set), "minReadySeconds", set.Spec.MinReadySeconds)
			c.queue.AddAfter(key, time.Duration(set.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if labelChanged || refChanged {
		for _, s := range c.setsMatching(curPod) {
			c.enqueue(s)
		}
	}
}

// deleteOwned enqueues the set controlling a deleted pod, revision or claim
// (claims: any ownerReference to a set).
func (c *Controller) deleteOwned(obj any) {
	m := metaOf(obj)
	if m == nil {
		return
	}
	if _, isClaim := unwrap(obj).(*corev1.PersistentVolumeClaim); isClaim {
		c.enqueueOwnerOrMatching(obj)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		if set := c.resolveControllerRef(m.GetNamespace(), ref); set != nil {
			if _, isRevision := unwrap(obj).(*appsv1.ControllerRevision); isRevision {
				c.enqueueUnlessDeleting(set) // as for every revision event
			} else {
				c.enqueue(set)
			}
		}
	}
}

func unwrap(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// enqueueOwnerOrMatching handles ControllerRevisions and claims: the set named
// by a controller reference (revisions) or by any ownerReference (claims);
// otherwise, for orphan revisions the sets whose selector matches, and for
// claims the sets whose volumeClaimTemplates would produce the claim's name;
// a set being deleted is not enqueued (enqueueUnlessDeleting).
func (c *Controller) enqueueOwnerOrMatching(obj any) {
	m := metaOf(obj)
	if m == nil {
		return
	}
	_, isClaim := unwrap(obj).(*corev1.PersistentVolumeClaim)
	if isClaim {
		found := false
		for i := range m.GetOwnerReferences() {
			ref := m.GetOwnerReferences()[i]
			if set := c.resolveControllerRef(m.GetNamespace(), &ref); set != nil {
				c.enqueueUnlessDeleting(set)
				found = true
			}
		}
		if found {
			return
		}
		sets, err := c.setsIn(m.GetNamespace()).List(labels.Everything())
		if err != nil {
			return
		}
		for _, s := range sets {
			for _, t := range s.Spec.VolumeClaimTemplates {
				if snapshot.IsOrdinalName(m.GetName(), t.Name+"-"+s.Name+"-") {
					c.enqueueUnlessDeleting(s)
					break
				}
			}
		}
		return
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		if set := c.resolveControllerRef(m.GetNamespace(), ref); set != nil {
			c.enqueueUnlessDeleting(set)
		}
		return
	}
	for _, s := range c.setsMatching(m) {
		c.enqueueUnlessDeleting(s)
	}
}

// enqueueUnlessDeleting enqueues set for a revision or claim event (triggers upstream does not have), but
// not a set being deleted: its syncs write only revisions and status, and syncing it again when the garbage
// collector deletes its revisions makes it create them again, which holds a foreground deletion forever
// (upstream, which has no revision trigger, lets the collector finish).
func (c *Controller) enqueueUnlessDeleting(set *appsv1.StatefulSet) {
	if set.DeletionTimestamp == nil {
		c.enqueue(set)
	}
}

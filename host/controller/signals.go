package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/policy"
)

// WatchSignals keeps s at the data of the ConfigMap namespace/name until ctx ends.
func WatchSignals(ctx context.Context, s *policy.Signals, client kubernetes.Interface, namespace, name string) {
	set := func(obj any) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			s.Set(cm)
		}
	}
	module.WatchConfigMap(ctx, client, namespace, name, cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, cur any) { set(cur) },
		DeleteFunc: func(any) { s.Set(nil) },
	})
}

package controller

import (
	"context"
	"encoding/json"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Signals are the values the controller supplies the sets' policies (abi.PolicyContext.Signals), read from
// one ConfigMap (--signals-configmap): each data key a signal, its value JSON where it is JSON (true,
// 3, {"ok":true}), else the string. Whoever knows the signal — a health check, a CI job, an operator —
// writes the ConfigMap; a policy never fetches anything itself. Safe for concurrent use.
type Signals struct {
	mu     sync.RWMutex
	values map[string]json.RawMessage
}

// Get returns the current signals (nil: none yet). The map is not changed afterwards.
func (s *Signals) Get() map[string]json.RawMessage {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.values
}

// Set replaces the signals with a ConfigMap's data (nil: the ConfigMap is gone, no signals).
func (s *Signals) Set(cm *corev1.ConfigMap) {
	values := map[string]json.RawMessage{}
	if cm != nil {
		for k, v := range cm.Data {
			if json.Valid([]byte(v)) {
				values[k] = json.RawMessage(v)
			} else {
				b, _ := json.Marshal(v)
				values[k] = b
			}
		}
	}
	s.mu.Lock()
	s.values = values
	s.mu.Unlock()
}

// WatchSignals keeps s at the data of the ConfigMap namespace/name until ctx ends.
func WatchSignals(ctx context.Context, s *Signals, client kubernetes.Interface, namespace, name string) {
	set := func(obj any) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			s.Set(cm)
		}
	}
	watchConfigMap(ctx, client, namespace, name, cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, cur any) { set(cur) },
		DeleteFunc: func(any) { s.Set(nil) },
	})
}

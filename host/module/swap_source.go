package module

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/readlimit"
)

// WatchModuleFile polls path every interval and offers its content to the
// swapper whenever it changes (size, modification time or inode), and again
// when the swapper's check of it ran out of time and is due again. A change is
// offered only once the file has stayed the same for settle (default
// min(interval, 200ms)), so a module being written is not checked half-written;
// writing the new module to a temporary file and renaming it over path is best.
// It returns when ctx is done.
func WatchModuleFile(ctx context.Context, s *Swapper, path string, interval, settle time.Duration, eventObj *corev1.ObjectReference) {
	logger := klog.FromContext(ctx).WithValues("module", path)
	if settle <= 0 {
		settle = min(interval, 200*time.Millisecond)
	}
	// No baseline from os.Stat here: a change made between loading the module and this goroutine
	// starting would be taken as the baseline and never offered. The first tick offers the file as
	// it is; the swapper ignores bytes identical to the active module (digest check, no compile).
	var last os.FileInfo
	var lastCode []byte // what was last offered
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fi, err := os.Stat(path)
		if err != nil {
			logger.V(2).Info("Module file not readable; keeping the active module", "err", err.Error())
			continue
		}
		if last != nil && sameFileState(last, fi) {
			if s.RecheckDue() {
				_, _ = s.Offer(ctx, "file:"+path, lastCode, eventObj)
			}
			continue
		}
		// wait until the file stops changing
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(settle):
			}
			again, err := os.Stat(path)
			if err != nil || sameFileState(fi, again) {
				break
			}
			fi = again
		}
		code, err := readlimit.File(path, wasm.DefaultMaxModuleBytes, "module "+path, "")
		if err != nil {
			logger.Error(err, "Reading the changed module file")
			continue
		}
		last, lastCode = fi, code
		_, _ = s.Offer(ctx, "file:"+path, code, eventObj)
	}
}

func sameFileState(a, b os.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && os.SameFile(a, b)
}

// WatchModuleConfigMap watches the ConfigMap namespace/name and offers the
// value of key (binaryData, else data) to the swapper whenever it changes, and
// again when the swapper's check of it ran out of time and is due again (looked
// at every recheckPoll). Events about the candidates are recorded on the
// ConfigMap. It returns when ctx is done.
//
// With s nil (the webhook), nothing is offered: the ConfigMap only supplies reg, through check, and pols
// (when not nil) with its policies (SuppliedPolicies).
func WatchModuleConfigMap(ctx context.Context, s *Swapper, reg *Registry, pols *policy.Registry, check func(context.Context, []byte) (*wasm.Module, error),
	client kubernetes.Interface, namespace, name, key string) {
	logger := klog.FromContext(ctx).WithValues("configMap", namespace+"/"+name, "key", key)
	source := fmt.Sprintf("configmap:%s/%s/%s", namespace, name, key)
	offers := make(chan *corev1.ConfigMap, 1)
	handle := func(obj any) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return
		}
		select { // keep only the newest
		case <-offers:
		default:
		}
		offers <- cm
	}
	go WatchConfigMap(ctx, client, namespace, name, cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, cur any) { handle(cur) },
	})
	var last *corev1.ConfigMap // the last offered
	recheck := time.NewTicker(recheckPoll)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-recheck.C:
			if s != nil && last != nil && s.RecheckDue() {
				offerConfigMap(ctx, s, logger, source, key, last)
			}
		case cm := <-offers:
			if reg != nil {
				reg.Supply(check, SuppliedModules(cm, key))
			}
			if pols != nil {
				pols.Supply(SuppliedPolicies(cm))
			}
			if s == nil {
				continue
			}
			last = cm
			offerConfigMap(ctx, s, logger, source, key, cm)
		}
	}
}

// recheckPoll is how often a ConfigMap's watch looks whether its module's timed-out check is due again.
var recheckPoll = 5 * time.Second

// offerConfigMap offers the ConfigMap's module (binaryData, else data, of key) to the swapper.
func offerConfigMap(ctx context.Context, s *Swapper, logger klog.Logger, source, key string, cm *corev1.ConfigMap) {
	code, ok := cm.BinaryData[key]
	if !ok {
		if str, ok2 := cm.Data[key]; ok2 {
			code, ok = []byte(str), true
		}
	}
	if !ok {
		logger.Info("The module ConfigMap has no such key; keeping the active module")
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name,
		UID: cm.UID, ResourceVersion: cm.ResourceVersion}
	_, _ = s.Offer(ctx, source, code, ref)
}

// SuppliedModules are the ConfigMap's modules other than the active one (key): each binaryData key
// NAME.wasm whose NAME is a module name (lowercase letters, digits, dashes), for the registry.
func SuppliedModules(cm *corev1.ConfigMap, key string) map[string][]byte {
	out := map[string][]byte{}
	for k, code := range cm.BinaryData {
		name, ok := strings.CutSuffix(k, ".wasm")
		if ok && k != key && moduleNamePattern().MatchString(name) {
			out[name] = code
		}
	}
	return out
}

// moduleNamePattern is what a supplied module may be called; compiled on first use, not at init (its counted
// repeat is ~700 allocations, which every ordinal process paid).
var moduleNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`) })

// SuppliedPolicies are the ConfigMap's policy modules: each key NAME.policy.wasm (binaryData) with its
// fixtures NAME.policy.fixtures.json (data or binaryData), which the policy registry's gate runs.
func SuppliedPolicies(cm *corev1.ConfigMap) map[string]policy.Supplied {
	out := map[string]policy.Supplied{}
	for k, code := range cm.BinaryData {
		name, ok := strings.CutSuffix(k, ".policy.wasm")
		if !ok || !moduleNamePattern().MatchString(name) {
			continue
		}
		fixtures := cm.BinaryData[name+".policy.fixtures.json"]
		if f, ok := cm.Data[name+".policy.fixtures.json"]; ok {
			fixtures = []byte(f)
		}
		out[name] = policy.Supplied{Code: code, Fixtures: fixtures}
	}
	return out
}

// WatchConfigMap runs an informer on the one ConfigMap namespace/name until ctx ends (the module
// ConfigMap, the signals).
func WatchConfigMap(ctx context.Context, client kubernetes.Interface, namespace, name string, h cache.ResourceEventHandler) {
	lw := cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "configmaps", namespace, fields.OneTermEqualSelector("metadata.name", name))
	_, inf := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: &corev1.ConfigMap{}, Handler: h})
	inf.RunWithContext(ctx)
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/host/controller"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// startModule loads the module the controller starts with and the swapper that
// checks later ones. A --module file must pass the same checks as a hot-swapped
// module (conformance cases included) or the controller does not start (exit 4);
// the embedded module is the one the project's tests hold to those cases.
func startModule(ctx context.Context, mopts *moduleOptions, o *controllerOptions, features map[string]bool) (*module.Ref, *module.Swapper, error) {
	ref := &module.Ref{}
	swapper, err := newModuleGate(mopts, ref, o.skipModuleGate, features)
	if err != nil {
		return nil, nil, err
	}
	var (
		m      *wasm.Module
		source = "embedded"
	)
	if mopts.path == "" {
		if m, err = mopts.loadCode(ctx, embedded.Module()); err != nil {
			return nil, nil, withCode(ExitModuleFailure, err)
		}
		d := m.Describe()
		for g := range features {
			if _, ok := d.Features[g]; !ok {
				m.Close(ctx)
				return nil, nil, withCode(ExitUsage, fmt.Errorf("--feature-gates: the module does not know the gate %q (see `ordinal version`)", g))
			}
		}
	} else {
		source = "file:" + mopts.path
		code, rerr := readModuleFile(mopts.path)
		if rerr != nil {
			return nil, nil, rerr
		}
		if m, _, err = swapper.Check(ctx, code); err != nil {
			var re *module.RefusedError
			if errors.As(err, &re) && re.Reason == module.RefusedFeatures {
				return nil, nil, withCode(ExitUsage, err)
			}
			return nil, nil, withCode(ExitModuleFailure, err)
		}
	}
	info := module.InfoOf(m)
	info.Source = source
	ref.Install(m, info, func() { _ = m.Close(context.Background()) })
	return ref, swapper, nil
}

// startModuleWatchers starts the hot-swap sources: the --module file (polled)
// and --module-configmap. They run for the life of the process, on standbys too,
// so a standby that takes over already runs the newest module.
func startModuleWatchers(ctx context.Context, restCfg *rest.Config, mopts *moduleOptions, o *controllerOptions, s *module.Swapper, reg *module.Registry, pols *policy.Registry, m *controller.Metrics) error {
	s.SetMetrics(m)
	if (mopts.path == "" || o.modulePoll <= 0) && o.moduleConfigMap == "" {
		return nil
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	go func() { <-ctx.Done(); broadcaster.Shutdown() }()
	s.SetRecorder(broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controller.EventComponent}))
	logger := klog.FromContext(ctx)
	if mopts.path != "" && o.modulePoll > 0 {
		obj := moduleEventObject(o)
		logger.Info("Watching the module file for hot swaps", "path", mopts.path, "interval", o.modulePoll.String(),
			"events", obj.Kind+" "+obj.Namespace+"/"+obj.Name)
		go module.WatchModuleFile(ctx, s, mopts.path, o.modulePoll, 0, obj)
	}
	if o.moduleConfigMap != "" {
		ns, name, ok := strings.Cut(o.moduleConfigMap, "/")
		if !ok || ns == "" || name == "" {
			return fmt.Errorf("--module-configmap must be NAMESPACE/NAME, not %q", o.moduleConfigMap)
		}
		logger.Info("Watching a ConfigMap for hot swaps", "configMap", o.moduleConfigMap, "key", o.moduleConfigMapKey)
		go module.WatchModuleConfigMap(ctx, s, reg, pols, s.CheckOnly, client, ns, name, o.moduleConfigMapKey)
	}
	return nil
}

// newModuleGate is the swapper whose checks every module that did not come with the binary passes before
// it runs (the embedded conformance cases, pinned gates, the features, customSetKinds): the controller's
// hot swap of ref, and the supplied modules of the module ConfigMap wherever they run.
func newModuleGate(mopts *moduleOptions, ref *module.Ref, skipGate bool, features map[string]bool) (*module.Swapper, error) {
	var cases []conformance.Case
	if !skipGate {
		all, err := conformance.All()
		if err != nil {
			return nil, fmt.Errorf("loading the embedded conformance cases: %w", err)
		}
		if cases, err = conformance.Pinned(all); err != nil {
			return nil, err
		}
	}
	return module.NewSwapper(module.SwapConfig{
		Ref: ref, Load: mopts.loadCode, Cases: cases, SkipGate: skipGate, Features: features,
		CustomSetKind: snapshot.CRDTarget.String(), // the controller always reconciles it
	})
}

// moduleEventObject is what events about a module file are recorded on: the
// controller's own Pod when it runs in one (POD_NAME and POD_NAMESPACE from the
// downward API, as examples/deploy sets them), else its leader-election Lease.
func moduleEventObject(o *controllerOptions) *corev1.ObjectReference {
	if name, ns := os.Getenv("POD_NAME"), os.Getenv("POD_NAMESPACE"); name != "" && ns != "" {
		return &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name}
	}
	ns := o.leNamespace
	if ns == "" {
		ns = o.kube.namespace
	}
	if ns == "" {
		ns = "default"
	}
	return &corev1.ObjectReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Namespace: ns, Name: o.leID}
}

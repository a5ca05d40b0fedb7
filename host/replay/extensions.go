package replay

import (
	"context"
	"errors"

	"github.com/ordinal-dev/ordinal/host/annotation"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/module"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// What the host reads of the extensions (docs/extensions.md) is read only where the set's module has
// them: a set annotated for an extension its module lacks (the faithful one) gets upstream's plan, and the
// host's previews and outcomes say so.

// annotations is the set's metadata.annotations (values that are not strings read as "").
func annotations(set Obj) map[string]string {
	out := map[string]string{}
	for k, v := range jsonobj.GetObj(set, "metadata.annotations") {
		out[k], _ = v.(string)
	}
	return out
}

// extensionOn reports whether set carries the annotation of an extension and the module its syncs run
// with (the one it names, else the replay's) describes that extension.
func extensionOn(ctx context.Context, opts Options, ann map[string]string, key string) bool {
	if _, ok := ann[key]; !ok {
		return false
	}
	m, _, err := module.OfSet(ctx, ann, opts.Module, opts.namedModule)
	if err != nil { // the replay itself ends on it (moduleOfSet)
		return false
	}
	return hasExtension(m, key)
}

// slotsOf is the ordinals of a set (its start, replicas and annotations) by replica slot, as its module
// places its pods: those the extension reserve-ordinals leaves when the module has it (kube.Slots, with
// reserving), else upstream's start, start+1, ...
func slotsOf(start, replicas int64, ann map[string]string, reserving bool) ordinal.Slots {
	if reserving {
		s, _ := kube.Slots(start, replicas, ann)
		return s
	}
	return ordinal.NewSlots(start, replicas, nil)
}

// namedModule is NamedModule, or an error when the replay has none.
func (o Options) namedModule(ctx context.Context, name string) (hostplan.Reconciler, error) {
	if o.NamedModule == nil {
		return nil, errors.New("this replay has no named modules")
	}
	return o.NamedModule(ctx, name)
}

// hasExtension is module.HasExtension.
func hasExtension(m hostplan.Reconciler, key string) bool { return module.HasExtension(m, key) }

// annotationFindings are what the set's ordinal.dev/ annotations ask that the module its syncs run with
// (the one it names, else the replay's) will not do (annotation.Check): the controller's events say the same.
func annotationFindings(ctx context.Context, opts Options, ann map[string]string) []annotation.Finding {
	m, _, err := module.OfSet(ctx, ann, opts.Module, opts.namedModule)
	if err != nil {
		return nil // the replay itself ends on it (moduleOfSet)
	}
	return annotation.Check(ann, module.ExtensionsOf(m))
}

package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/module"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
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

// namedModule is NamedModule, or an error when the replay has none.
func (o Options) namedModule(ctx context.Context, name string) (hostplan.Reconciler, error) {
	if o.NamedModule == nil {
		return nil, errors.New("this replay has no named modules")
	}
	return o.NamedModule(ctx, name)
}

// hasExtension is module.HasExtension.
func hasExtension(m hostplan.Reconciler, key string) bool { return module.HasExtension(m, key) }

// ignorable are the extensions whose annotation, ignored by a module without them, does the opposite of what
// the set asks (recover-stuck's and progress-deadline's are the preview's recovery's, Recovery.Ignored): the
// extension, the annotation's values that ask for nothing, and what upstream's plan does instead.
var ignorable = []struct {
	annotation, extension string
	off                   []string
	instead               string
}{
	{abi.AnnotationPaused, "pause", []string{"false"}, "the rollout is not paused"},
	{abi.AnnotationPodUpdatePolicy, "in-place-update", []string{abi.PodUpdateReCreate}, "pods are recreated as upstream does"},
	{abi.AnnotationReserveOrdinals, "reserve-ordinals", nil, "the reserved ordinals are used"},
	{abi.AnnotationResizeClaims, "resize-claims", []string{"false"}, "no claim is resized"},
}

// ignoredExtensions says, of each extension above the set turns on and the module its syncs run with (the
// one it names, else the replay's) does not have, that its annotation is ignored.
func ignoredExtensions(ctx context.Context, opts Options, ann map[string]string) []string {
	m, _, err := module.OfSet(ctx, ann, opts.Module, opts.namedModule)
	if err != nil {
		return nil // the replay itself ends on it (moduleOfSet)
	}
	var out []string
	for _, e := range ignorable {
		v, ok := ann[e.annotation]
		if !ok || slices.Contains(e.off, v) || hasExtension(m, e.annotation) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %q is ignored: the set's module does not have the extension %s (annotate the set %s: extended), so %s",
			e.annotation, v, e.extension, abi.AnnotationModule, e.instead))
	}
	return out
}

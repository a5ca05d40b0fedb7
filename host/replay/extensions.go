package replay

import (
	"context"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// What the host reads of the extensions (README "Beyond upstream") is read only where the set's module has
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
	m := opts.Module
	if name, ok := ann[abi.AnnotationModule]; ok && opts.NamedModule != nil {
		var err error
		if m, err = opts.NamedModule(ctx, name); err != nil {
			return false
		}
	}
	return hasExtension(m, key)
}

// hasExtension reports whether module m describes the extension with this annotation (a module without a
// describe, a test double, has none).
func hasExtension(m hostplan.Reconciler, key string) bool {
	d, ok := m.(interface{ Describe() abi.Describe })
	if !ok {
		return false
	}
	for _, e := range d.Describe().Extensions {
		if e.Annotation == key {
			return true
		}
	}
	return false
}

package module

import (
	"context"
	"slices"

	"github.com/ordinal-dev/ordinal/abi"
)

// OfSet is the module a set's syncs run, read from its annotations: the one it names with
// abi.AnnotationModule, got from named, else def. name is the name the set gives ("" when it names none),
// for the caller's report of a module it cannot have; err is named's as it came. The controller (a Ref
// from its Registry), the replay and the CLI (a Reconciler) all choose through it, and each reports a
// failure its own way: the controller leaves the set alone with an event, the replay ends its timeline,
// the CLI exits with a usage code.
func OfSet[M any](ctx context.Context, annotations map[string]string, def M, named func(context.Context, string) (M, error)) (m M, name string, err error) {
	name, ok := annotations[abi.AnnotationModule]
	if !ok {
		return def, "", nil
	}
	m, err = named(ctx, name)
	return m, name, err
}

// HasExtension reports whether module m describes the extension turned on by annotation key (describe's
// extensions: docs/extensions.md); a module that does not describe itself has none. What a host reads
// of an extension (a preview's traps, the replay's outcome, `kubectl ordinal status`'s reading of pods
// updated in place) it reads only where the set's module has it.
func HasExtension(m any, key string) bool {
	return slices.ContainsFunc(ExtensionsOf(m), func(e abi.Extension) bool { return e.Annotation == key })
}

// ExtensionsOf are the extensions module m describes (none: a module that does not describe itself).
func ExtensionsOf(m any) []abi.Extension {
	d, ok := m.(interface{ Describe() abi.Describe })
	if !ok {
		return nil
	}
	return d.Describe().Extensions
}
